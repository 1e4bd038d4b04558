"""The `memvault` console script (and `python -m memvault`).

A command line that may be a plain note search printed as JSON (`search` and `--json`
both on it) is offered to the quick path first (`cli.quick`), which answers it without
loading click, rich or most of memvault when it can prove the ordinary command would
print the same and change nothing. Every other command line, and every one the quick
path declines, runs the click application (`cli.app`).
"""

from __future__ import annotations

import sys


def main() -> None:
    """Console-script entry point."""
    argv = sys.argv[1:]
    if "search" in argv and "--json" in argv:
        from memvault.cli.quick import run

        code = run(argv)
        if code is not None:
            sys.exit(code)
    from memvault.cli.app import main as click_main

    click_main()
