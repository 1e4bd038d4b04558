"""Per-invocation CLI state: global options, the opened vault, and output helpers.

Output rules: `--json` prints stable JSON on stdout and nothing else there; human output
uses rich (imported only when needed) and goes to stdout, notices and warnings to stderr.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import click

from memvault.cli.json_output import print_json
from memvault.errors import NeedsConfirmation

__all__ = ["AppState", "collector_paused", "confirm", "console", "err_console", "esc",
           "is_interactive",
           "notice", "print_json", "printable", "state", "wants_json", "warn"]

if TYPE_CHECKING:
    from rich.console import Console

    from memvault.services.vault import Vault


@dataclass
class AppState:
    vault_path: str | None = None
    scope: str | None = None
    json: bool = False
    quiet: bool = False
    verbose: bool = False
    _vault: Vault | None = field(default=None, repr=False)

    def vault(self) -> Vault:
        if self._vault is None:
            from memvault.services.vault import Vault

            self._vault = Vault.open(self.vault_path, scope=self.scope)
            if self._vault.created:  # the per-user default vault, on first use
                sys.stderr.write(f"memvault: created your vault at {self._vault.root} (the "
                                 "per-user default; --vault or MEMVAULT_VAULT picks another "
                                 "folder, `memvault init PATH` makes one)\n")
            self._report_tidying()
            edits = self._vault.apply_inbox_edits()  # boxes ticked / lines deleted count now
            if edits.problem:
                warn(f"inbox edits not applied: {edits.problem}")
            for held in edits.to_report:  # said once; `memvault doctor` keeps listing it
                warn(str(held))
            if not self.quiet:
                for action, record in edits.applied:
                    sys.stderr.write(printable(f"inbox: {action} {record.id} "
                                               f"{record.text!r}") + "\n")
        return self._vault

    def _report_tidying(self) -> None:
        """What a write settles of a merge's leftovers is said on stderr at the end."""
        from contextlib import ExitStack

        from memvault.services.tidy import collecting_notes

        ctx = click.get_current_context(silent=True)
        if ctx is None:
            return
        stack = ExitStack()
        notes = stack.enter_context(collecting_notes())

        def done() -> None:
            stack.close()
            if not self.quiet:
                for note in notes:
                    sys.stderr.write(f"tidied: {note}\n")

        ctx.call_on_close(done)


def state(ctx: click.Context) -> AppState:
    root = ctx.find_root()
    if not isinstance(root.obj, AppState):
        root.obj = AppState()
    return root.obj


def wants_json(ctx: click.Context) -> bool:
    """`--json` was given (anywhere on the command line)."""
    return state(ctx).json


_SURROGATE = re.compile("[\udc80-\udcff]")


def printable(text: str) -> str:
    """User text safe to print: bytes that were not valid UTF-8 shown as \\xNN, and
    terminal controls, bidi and invisible characters as escapes (\\x1b, \\u202e)."""
    from memvault.core.quoting import visible

    if _SURROGATE.search(text):
        text = text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return visible(text)


@contextmanager
def collector_paused() -> Iterator[None]:
    """Run a command that reads a whole memory file with Python's cyclic garbage collector
    paused. Reading 10,000 records makes some 100,000 objects and no reference cycles;
    the collector would walk them at every generation they are promoted through, and the
    interpreter walks every live object once more when it exits (together about 40 ms of
    a cold `memory list` or `remember` at 10,000 facts), to free nothing.

    Reference counting still frees every object, and the collector runs again after the
    block. At exit, what is still alive is frozen (`gc.freeze`, from an `atexit` hook, so
    in a test run only when the whole run ends), which spares that last walk; standard
    streams are flushed by the interpreter as always. The MCP server and the Python API
    never pause the collector."""
    import gc

    global _FREEZE_AT_EXIT
    if not _FREEZE_AT_EXIT:
        import atexit

        atexit.register(gc.freeze)
        _FREEZE_AT_EXIT = True
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


_FREEZE_AT_EXIT = False


def console() -> Console:
    """A rich console bound to the current stdout (created per call: cheap, and correct
    when stdout is swapped, e.g. by a test runner)."""
    from rich.console import Console

    return Console(highlight=False, soft_wrap=True)


def err_console() -> Console:
    from rich.console import Console

    return Console(stderr=True, highlight=False, soft_wrap=True)


def notice(ctx: click.Context, message: str) -> None:
    """A side remark on stderr (hidden by --quiet)."""
    if not state(ctx).quiet:
        click.echo(printable(message), err=True)


def warn(message: str) -> None:
    """A warning on stderr, yellow on a terminal. Plain click, not rich: a one-line
    warning is not worth importing rich (~15 ms of a cold `remember` that finds a
    near-duplicate), and the text is printed exactly (no markup, no emoji codes)."""
    click.secho(f"warning: {printable(message)}", fg="yellow", err=True)


def is_interactive() -> bool:
    return sys.stdin.isatty() and sys.stdout.isatty() and os.environ.get("CI") != "true"


def confirm(question: str, *, yes: bool, action: str) -> bool:
    """Ask before destroying data. `--yes` skips; no terminal and no --yes refuses."""
    if yes:
        return True
    if not sys.stdin.isatty():
        raise NeedsConfirmation(f"refusing to {action} without confirmation: no terminal; "
                                "pass --yes to confirm")
    return click.confirm(question, default=False, err=True)


def esc(text: str) -> str:
    """Escape user text for rich markup (and make undecodable bytes printable)."""
    from rich.markup import escape

    return escape(printable(text))
