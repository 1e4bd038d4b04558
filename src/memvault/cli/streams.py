"""Standard output that is closed, full or not UTF-8: one line on stderr, never a traceback;
and command-line text in a locale that is not UTF-8 (`utf8_arg`).

Both front ends of the console script, the quick search path (`cli.quick`) and the click
application (`cli.app`), call `guard_stdout()` before they print and `finish()` last, so
they fail the same way:

- stdout closed when memvault started (`memvault ... >&-`): its descriptor is held open
  on the null device, read-only, so no file memvault or a child process opens can take
  its place, and writing to it fails like writing to a closed stream;
- a write that fails (`>/dev/full`, a disk that filled up, an I/O error) raises
  `OutputFailed` once: the command stops, `report` says `error: cannot write to standard
  output: <why>` on stderr and the exit code is 1; whatever it would still print is
  dropped. A closed pipe (`| head`) keeps its quiet exit 1 (`cli.errors`);
- unless the command has already made its change and said so (`change_made`: `remember`
  once the fact is saved, ...): then only its report is lost, and the exit code stays 0 so
  a script does not do it again. The line on stderr says what was done instead
  (`warning: cannot write to standard output: it is closed; remembered as k3v9qa`); a
  closed pipe stays quiet;
- stdout in an encoding other than UTF-8 (`PYTHONIOENCODING=ascii`, `LC_ALL=C`, a
  Windows pipe): human text shows a character it cannot encode as an escape (`\\xe9`);
  JSON escapes every non-ASCII character itself (`cli.json_output`), so it stays valid;
- stderr closed: what memvault would say there goes to the null device.

Python decodes the command line with the locale's encoding and keeps bytes it cannot
decode as lone surrogates: under `LC_ALL=C` (UTF-8 mode off) a query typed as UTF-8,
`café`, arrives as `caf` and two such surrogates. `utf8_arg` gives back the text those
bytes spell in UTF-8; bytes that are not UTF-8 at all (a Latin-1 terminal) are left for
the search service to refuse with a one-line usage error. Both front ends of `memvault
search` use it, so both search for, and print, the same query.

Only the process's own stdout is replaced (a test runner's capture is left alone), and
only when it writes to a plain file descriptor (a Windows console is left alone). This
module is on the cold path of `memvault search --json`: it imports nothing beyond what
Python has loaded at start-up.
"""

from __future__ import annotations

import io
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class OutputFailed(OSError):
    """Standard output refused what memvault printed (closed, full, an I/O error)."""


class ReaderLeft(Exception):  # noqa: N818 - an event, not an error of memvault's
    """The program reading standard output through a pipe went away (`| head`)."""


def drop_output() -> None:
    """After the reader of a pipe left: point stdout's descriptor at the null device, so
    what is still buffered, and the interpreter's last flush, go nowhere quietly."""
    try:
        fd = sys.stdout.fileno() if sys.stdout is not None else -1
    except (OSError, ValueError, AttributeError):
        return  # not a descriptor (a test runner's capture)
    if fd < 0:
        return
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, fd)
    finally:
        os.close(null)


class _GuardedOut(io.FileIO):
    """Standard output's descriptor: a failed write raises `OutputFailed` the first
    time and is dropped silently after that (the failure is reported once)."""

    failure: OSError | None = None

    def write(self, data: Any, /) -> int:  # any bytes-like object
        if self.failure is not None:
            return len(memoryview(data))
        try:
            return super().write(data)
        except (BrokenPipeError, BlockingIOError, InterruptedError):
            raise  # a reader that left (`| head`) or a retry: handled as before
        except OSError as exc:
            self.failure = exc
            raise OutputFailed(exc.errno, exc.strerror) from None


_reported = False
_done: str | None = None


def change_made(summary: str) -> None:
    """Say that the command has made its change (`summary`: what, in a few words, e.g.
    "remembered as k3v9qa"): from now on a stdout that fails costs the report only, and
    the command still exits 0 (see the module doc)."""
    global _done
    _done = summary


def change_done() -> str | None:
    """What the running command said it changed (`change_made`), or None."""
    return _done


def guard_stdout() -> None:
    """Put the process's stdout behind `_GuardedOut`, and a closed stderr on the null
    device (see the module doc); idempotent. A command starts here, having changed
    nothing yet (`change_made`)."""
    global _done
    _done = None
    _guard_stdout()
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - for good


def _guard_stdout() -> None:
    out = sys.stdout
    buffered, write_through = True, False
    if out is None:
        fd = os.open(os.devnull, os.O_RDONLY)  # the lowest free descriptor: 1 if closed
        encoding, errors, line_buffering = "utf-8", "strict", False
    else:
        buffer = getattr(out, "buffer", None)
        raw = buffer if type(buffer) is io.FileIO else getattr(buffer, "raw", None)
        if out is not sys.__stdout__ or type(raw) is not io.FileIO or \
                not isinstance(out, io.TextIOWrapper):
            return  # already guarded, captured by a test runner, or a Windows console
        out.flush()
        fd = raw.fileno()
        buffered, write_through = buffer is not raw, out.write_through  # python -u
        encoding, errors = out.encoding, out.errors or "strict"
        line_buffering = out.line_buffering
        if encoding.lower().replace("-", "").replace("_", "") != "utf8":
            errors = "backslashreplace"
    guarded = _GuardedOut(fd, "w", closefd=out is None)
    sys.stdout = io.TextIOWrapper(io.BufferedWriter(guarded) if buffered else guarded,
                                  encoding=encoding, errors=errors,
                                  newline=None if os.name == "nt" else "\n",
                                  line_buffering=line_buffering, write_through=write_through)


def _failure() -> OSError | None:
    buffer = getattr(sys.stdout, "buffer", None)
    raw = getattr(buffer, "raw", buffer)
    return raw.failure if isinstance(raw, _GuardedOut) else None


def report(exc: OSError) -> int:
    """Say on stderr that stdout failed (once); the exit code: 1, or 0 when the command
    had made its change (`change_made`)."""
    global _reported
    if not _reported:
        _reported = True
        why = "it is closed" if exc.errno == 9 else (exc.strerror or str(exc))
        line = f"error: cannot write to standard output: {why}" if _done is None else \
            f"warning: cannot write to standard output: {why}; {_done}"
        try:
            sys.stderr.write(line + "\n")
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
    return 1 if _done is None else 0


def finish(code: int) -> int:
    """Flush stdout and stderr at the end of a command and return its exit code: 1 with
    the one-line error when stdout failed, even if the command went on after that (the
    command's own code, with a warning, once it had made its change)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()  # before exiting (and before a test runner reads them)
        except (OSError, ValueError):
            pass
    failure = _failure()
    if failure is None:
        return code
    failed = report(failure)
    return code if _done is not None else failed


def utf8_arg(value: str) -> str:
    """Command-line text as the UTF-8 the user typed (see the module doc); unchanged when
    it already is text, or when its bytes are not UTF-8."""
    if value.isascii():
        return value
    try:
        value.encode("utf-8")
        return value
    except UnicodeEncodeError:
        pass
    try:
        return os.fsencode(value).decode("utf-8")
    except UnicodeError:
        return value
