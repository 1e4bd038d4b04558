"""The `memvault` console script (and `python -m memvault`).

A command line that may be a plain note search printed as JSON (`search` and `--json`
both on it) is offered to the quick path first (`cli.quick`), which answers it without
loading click, rich or most of memvault when it can prove the ordinary command would
print the same and change nothing. Every other command line, and every one the quick
path declines, runs the click application (`cli.app`). A `remember` runs without the
cyclic garbage collector and, once finished, ends without the interpreter's teardown
(`COLLECTOR_FREE`, `_end_now`).
"""

from __future__ import annotations

import sys

COLLECTOR_FREE = frozenset({"remember"})
"""Commands run without Python's cyclic garbage collector from the first import: they
read a whole memory file and end (see `cli.state.collector_paused`, which pauses it for
the command itself). Start-up makes tens of thousands of objects and no garbage worth a
collection; the collector's passes over them cost more than anything else it does there."""


def command_word(argv: list[str]) -> str | None:
    """The command a command line names: its first word that is not a global option
    (`--vault` and `--scope` take a value)."""
    words = iter(argv)
    for word in words:
        if word in ("--vault", "--scope"):
            next(words, None)
        elif not word.startswith("-"):
            return word
    return None


def main() -> None:
    """Console-script entry point."""
    argv = sys.argv[1:]
    collector_free = command_word(argv) in COLLECTOR_FREE
    if collector_free:
        import atexit
        import gc

        gc.disable()  # for the rest of this short process; what lives at exit is frozen,
        atexit.register(gc.freeze)  # so the interpreter's last collection skips it
    if "search" in argv and "--json" in argv:
        from memvault.cli.quick import run

        code = run(argv)
        if code is not None:
            sys.exit(code)
    from memvault.cli.app import main as click_main

    if not collector_free:
        click_main()
        return
    try:
        click_main()
    except SystemExit as done:
        _end_now(done)
        raise


def _end_now(done: SystemExit) -> None:
    """End a finished collector-free command at once, skipping the interpreter's teardown
    (freeing every module and the whole parsed file object by object: ~10 ms at 10,000
    facts). Safe because by now every write is complete and its file closed (memvault
    writes with descriptors it closes, fsynced where it promises durability), memvault
    registers no exit hook but `gc.freeze`, and the only buffers left, stdout and stderr,
    are flushed here first. Anything unusual (a stream that cannot be flushed, a thread
    still running, an exit code that is not a number) takes the ordinary exit instead."""
    import os

    code = 0 if done.code is None else done.code
    if not isinstance(code, int) or isinstance(code, bool):
        return
    threading = sys.modules.get("threading")
    if threading is not None and threading.active_count() > 1:
        return
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            return  # the ordinary exit reports it as it always did
    os._exit(code)
