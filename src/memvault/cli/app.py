"""The `memvault` command: global options, the table of commands, and the one place
errors are turned into a message (or a JSON document) and an exit code.

Built on click. Each command lives in a small module and is imported only when it runs
(`COMMANDS` below), so start-up stays fast. Exit codes: 0 success; 1 a failure the user
can act on; 2 a usage error or input refused before anything changed (`BadInput`); 130
interrupted (Ctrl-C).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import click

from memvault import __version__
from memvault.cli.base import Group
from memvault.state_paths import STATE_DIR

# Name -> "module:attribute". Add a line here to add a command; help lists them in order.
COMMANDS = {
    "init": "memvault.cli.setup:init",
    "remember": "memvault.cli.facts:remember",
    "forget": "memvault.cli.facts:forget",
    "memory": "memvault.cli.memory:memory_group",
    "context": "memvault.cli.context:context",
    "search": "memvault.cli.search:search",
    "doctor": "memvault.cli.doctor:doctor",
    "proposals": "memvault.cli.proposals:proposals_group",
    "accept": "memvault.cli.proposals:accept",
    "reject": "memvault.cli.proposals:reject",
    "correct": "memvault.cli.proposals:correct",
    "propose": "memvault.cli.proposals:propose",
    "review": "memvault.cli.proposals:review",
    "extract": "memvault.cli.learning:extract",
    "lesson": "memvault.cli.learning:lesson_group",
    "feedback": "memvault.cli.learning:feedback",
    "replay": "memvault.cli.learning:replay",
    "config": "memvault.cli.learning:config_group",
    "export": "memvault.cli.transfer:export",
    "import": "memvault.cli.transfer:import_",
    "profile": "memvault.cli.profile:profile_group",
    "policy": "memvault.cli.policy:policy_group",
    "trade": "memvault.cli.trade:trade_group",
    "journal": "memvault.cli.trade:journal_group",
    "learn": "memvault.cli.trade:learn",
    "index": "memvault.cli.search:index_group",
    "sync": "memvault.cli.sync:sync",
    "resolve": "memvault.cli.resolve:resolve",
    "merge-driver": "memvault.cli.sync:merge_driver",
    "watch": "memvault.cli.watch:watch",
    "serve": "memvault.cli.serve:serve",
    "hosted": "memvault.cli.hosted:hosted_group",
    "completion": "memvault.cli.completion:completion",
}


def _version(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value and not ctx.resilient_parsing:
        sys.stdout.write(f"memvault {__version__}\n")
        ctx.exit()


class RootGroup(Group):
    """The `memvault` group: renders every error in one place."""

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None,
             complete_var: str | None = None, standalone_mode: bool = True,
             **extra: Any) -> Any:
        from memvault.cli.streams import OutputFailed, finish, guard_stdout, report

        argv = list(sys.argv[1:] if args is None else args)
        guard_stdout()
        try:
            result = super().main(argv, prog_name or "memvault", complete_var,
                                  standalone_mode=False, **extra)
            code = result if isinstance(result, int) and not isinstance(result, bool) else 0
        except BaseException as exc:  # noqa: BLE001 - every outcome gets an exit code
            from memvault.cli.errors import exit_code_for

            try:
                code = exit_code_for(exc, argv)
            except OutputFailed as failed:  # the error document itself could not be printed
                code = report(failed)
            except BaseException:  # a bug: its traceback comes after the output
                finish(1)
                raise
        code = finish(code)  # flushed; 1 when stdout could not take the output
        if standalone_mode:
            sys.exit(code)
        return code

    def invoke(self, ctx: click.Context) -> Any:
        """Run the command; a reader that left (`| head`) is reported by `exit_code_for`,
        not by click (which would exit 1 even after the command made its change)."""
        from memvault.cli.streams import ReaderLeft

        try:
            return super().invoke(ctx)
        except BrokenPipeError as exc:
            raise ReaderLeft() from exc


@click.group(cls=RootGroup, name="memvault", lazy=COMMANDS, no_args_is_help=True,
             context_settings={"help_option_names": ["-h", "--help"],
                               "max_content_width": 120},
             help="Long-term memory for AI assistants, kept as plain Markdown in your "
                  "Obsidian vault.\n\n"
                  "--json, -q and -v work before or after the command.\n\n"
                  "Example: memvault remember \"I prefer concise answers\" --category preference")
@click.option("--vault", metavar="PATH", envvar="MEMVAULT_VAULT",
              help=f"Vault folder (default: nearest {STATE_DIR}/ or the per-user vault).")
@click.option("--scope", metavar="NAME", envvar="MEMVAULT_SCOPE",
              help="Principal whose memory to use.")
@click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=_version,
              help="Show the version and exit.")
@click.pass_context
def app(ctx: click.Context, vault: str | None, scope: str | None) -> None:
    from memvault.cli.state import state

    st = state(ctx)
    st.vault_path, st.scope = vault, scope


def main() -> None:
    """Console-script entry point."""
    app.main(prog_name="memvault")
