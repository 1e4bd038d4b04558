"""`python -m memvault` runs the CLI."""

from memvault.cli.app import main

main()
