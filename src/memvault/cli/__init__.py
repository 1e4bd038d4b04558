"""The Typer command line: thin modules that parse arguments, call the service, render."""
