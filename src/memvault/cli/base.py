"""Click building blocks every command module uses.

- `Group`: a command group whose subcommands can be *lazy* ("module:attribute" strings,
  imported only when that command runs or its help is shown), listed in the order they
  were declared. `memvault memory list` imports `cli/memory.py` and nothing else.
- The three shared flags, `--json`, `-q/--quiet` and `-v/--verbose`, are defined once
  here and added to every command and group, so they work anywhere on the command line
  (`memvault -q sync --setup` and `memvault sync --setup -q` are the same). They set the
  per-run `AppState`; commands read it through `wants_json(ctx)` and friends.
"""

from __future__ import annotations

import importlib
from typing import Any

import click

_SHARED = "_memvault_shared_flags"


def _set_flag(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value:
        from memvault.cli.state import state

        setattr(state(ctx), str(param.name), True)


def shared_flags() -> list[click.Option]:
    """Fresh `--json`, `-q` and `-v` options (a click parameter belongs to one command)."""
    return [
        click.Option(["--json", "json"], is_flag=True, expose_value=False, callback=_set_flag,
                     help="Machine-readable output: one JSON document on stdout (errors too)."),
        click.Option(["-q", "--quiet", "quiet"], is_flag=True, expose_value=False,
                     callback=_set_flag, help="Only essential output."),
        click.Option(["-v", "--verbose", "verbose"], is_flag=True, expose_value=False,
                     callback=_set_flag, help="More detail, and a traceback with errors."),
    ]


def with_shared_flags(command: click.Command) -> click.Command:
    """Add the shared flags to `command` once (idempotent)."""
    if not getattr(command, _SHARED, False):
        command.params.extend(shared_flags())
        setattr(command, _SHARED, True)
    return command


class Group(click.Group):
    """A group with lazily imported subcommands, listed in declaration order."""

    def __init__(self, *args: Any, lazy: dict[str, str] | None = None, **kwargs: Any) -> None:
        kwargs.setdefault("context_settings", {"help_option_names": ["-h", "--help"]})
        super().__init__(*args, **kwargs)
        self.lazy = dict(lazy or {})
        with_shared_flags(self)

    def list_commands(self, ctx: click.Context) -> list[str]:
        names = list(self.lazy)
        return names + [n for n in self.commands if n not in self.lazy]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in self.lazy:
            module, _, attr = self.lazy[cmd_name].partition(":")
            self.add_command(getattr(importlib.import_module(module), attr), cmd_name)
        command = self.commands.get(cmd_name)
        return with_shared_flags(command) if command is not None else None

    def command(self, *args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("context_settings", {"help_option_names": ["-h", "--help"]})
        return super().command(*args, **kwargs)


def group(name: str, help: str, **kwargs: Any) -> Group:
    """A subcommand group (`memvault memory ...`); no arguments shows its help (exit 2)."""
    return Group(name=name, help=help, no_args_is_help=True, **kwargs)
