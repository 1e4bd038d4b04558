"""How a failed command is reported: one place for messages and exit codes.

- A `VaultError` (something the user can act on): `error: <message>` on stderr, each
  of its problems on its own line below, exit 1 (2 for a usage error).
- A command-line mistake (unknown option, missing argument, no command): click's usage
  message on stderr, exit 2.
- Ctrl-C: exit 130, no traceback. A closed pipe (`memvault … | head`): exit 1 quietly.
  stdout closed or full: one line on stderr, exit 1 (`cli.streams`). Both exit 0 once the
  command has made its change (`streams.change_made`: a saved `remember`, ...).
- Anything else is a bug in memvault and keeps Python's traceback.
- With `--json` anywhere on the command line, the error is instead one JSON document on
  stdout, `{"error": "...", "problems": [...]}`, so a program reading stdout always gets
  exactly one document (one line, like results, unless stdout is a terminal). `-v` adds
  the traceback (stderr).

The flags are read from the command line itself, because a usage error can happen
before the command's options are parsed.
"""

from __future__ import annotations

import sys
import traceback
from collections.abc import Sequence

import click

INTERRUPTED = 130


def _flag(argv: Sequence[str], *names: str) -> bool:
    """Whether a flag appears on the command line (before a `--` terminator)."""
    for token in argv:
        if token == "--":
            return False
        if token in names:
            return True
        short = [n[1] for n in names if len(n) == 2]
        if short and token.startswith("-") and not token.startswith("--") and len(token) > 2 \
                and token[1:].isalpha() and any(c in token[1:] for c in short):
            return True
    return False


def _emit(message: str, problems: list[str], as_json: bool) -> None:
    if as_json:
        from memvault.cli.json_output import json_text

        out = sys.stdout  # indented on a terminal, one line otherwise, as results are
        tty = getattr(out, "isatty", None)
        out.write(json_text({"error": message, "problems": problems},
                            2 if tty is not None and tty() else None))
        out.flush()
        return
    from memvault.cli.state import printable

    lines = [f"error: {printable(message)}"]
    lines += [f"  - {printable(p)}" for p in problems]
    sys.stderr.write("\n".join(lines) + "\n")
    sys.stderr.flush()


def exit_code_for(exc: BaseException, argv: Sequence[str]) -> int:
    """Report `exc` (raised while running `memvault argv`) and return the exit code."""
    from memvault.errors import VaultError

    as_json = _flag(argv, "--json")
    verbose = _flag(argv, "-v", "--verbose")
    if isinstance(exc, SystemExit):
        code = exc.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    if isinstance(exc, click.exceptions.Exit):
        return exc.exit_code
    if isinstance(exc, KeyboardInterrupt) or (
            isinstance(exc, click.exceptions.Abort)
            and isinstance(exc.__cause__, KeyboardInterrupt)):
        sys.stderr.write("interrupted\n")
        return INTERRUPTED
    if isinstance(exc, click.exceptions.Abort):  # end of input at a prompt
        _emit("aborted: no answer", [], as_json)
        return 1
    from memvault.cli.streams import OutputFailed, ReaderLeft, change_done, drop_output, report

    if isinstance(exc, (BrokenPipeError, ReaderLeft)):  # the reader left: quiet
        drop_output()
        return 0 if change_done() is not None else 1
    if isinstance(exc, OutputFailed):  # stdout closed or full: said on stderr, even --json
        return report(exc)
    if verbose:
        traceback.print_exception(exc, file=sys.stderr)
    if isinstance(exc, VaultError):
        _emit(str(exc), list(exc.problems), as_json)
        return exc.exit_code
    if isinstance(exc, click.exceptions.UsageError):
        if as_json:
            _emit(exc.format_message(), [], True)
        else:
            exc.show()
        return 2
    if isinstance(exc, click.exceptions.ClickException):
        _emit(exc.format_message(), [], as_json)
        return exc.exit_code
    raise exc  # a bug: let Python print the traceback (exit 1)
