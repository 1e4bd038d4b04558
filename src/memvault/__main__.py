"""`python -m memvault` runs the CLI."""

from memvault.cli.entry import main

main()
