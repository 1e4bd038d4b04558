"""The `memvault` command: global options, command registration, and the one place
errors are turned into a message and an exit code.

Exit codes: 0 success; 1 a failure the user can act on; 2 a usage error.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any, Optional

import typer
from typer.core import TyperGroup

from memvault import __version__
from memvault.cli.coercion import install_plain_coercion
from memvault.cli.state import AppState
from memvault.errors import VaultError
from memvault.state_paths import STATE_DIR

install_plain_coercion()  # plain str/bool options without importing pydantic


class _RootGroup(TyperGroup):
    """Turns a VaultError from any command into one line on stderr and its exit code."""

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except VaultError as exc:
            if getattr(ctx.obj, "verbose", False):
                import traceback

                traceback.print_exception(exc, file=sys.stderr)
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(exc.exit_code) from None


app = typer.Typer(
    cls=_RootGroup,
    name="memvault",
    help="Long-term memory for AI assistants, kept as plain Markdown in your Obsidian vault.\n\n"
         "Example: memvault remember \"I prefer concise answers\" --category preference",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)

# Command modules; each has `register(app)`. Add a module here to add a command group.
COMMAND_MODULES = (
    "memvault.cli.setup",
    "memvault.cli.facts",
    "memvault.cli.memory",
    "memvault.cli.doctor",
    "memvault.cli.proposals",
    "memvault.cli.learning",
    "memvault.cli.transfer",
    "memvault.cli.profile",
    "memvault.cli.policy",
    "memvault.cli.trade",
    "memvault.cli.sync",
    "memvault.cli.watch",
    "memvault.cli.serve",
    "memvault.cli.hosted",
    "memvault.cli.context",
    "memvault.cli.search",
)


def _version(value: bool) -> None:
    if value:
        sys.stdout.write(f"memvault {__version__}\n")
        raise typer.Exit()


@app.callback()
def root(
    ctx: typer.Context,
    vault: Optional[str] = typer.Option(None, "--vault", envvar="MEMVAULT_VAULT",
                                        help=f"Vault folder (default: nearest {STATE_DIR}/ "
                                             "or the per-user vault)."),
    scope: Optional[str] = typer.Option(None, "--scope", envvar="MEMVAULT_SCOPE",
                                        help="Principal whose memory to use."),
    json_out: bool = typer.Option(False, "--json", help="Machine-readable JSON output."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Only essential output."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Show tracebacks and details."),
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="Show the version and exit."),
) -> None:
    """Long-term memory for AI assistants, kept as plain Markdown in your Obsidian vault."""
    ctx.obj = AppState(vault_path=vault, scope=scope, json=json_out, quiet=quiet,
                       verbose=verbose)


for _module in COMMAND_MODULES:
    importlib.import_module(_module).register(app)


def main() -> None:
    """Console-script entry point."""
    try:
        app(prog_name="memvault")
    except BrokenPipeError:
        sys.exit(1)
