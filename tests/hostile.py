"""Helpers for hostile-input tests: run the real CLI with a time and memory limit, and
snapshot a vault to prove a refused command changed nothing."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

MEMORY_LIMIT = 2 << 30  # 2 GiB of address space: an alias bomb fails instead of swapping


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def run_limited(root: Path, *args: str, input: str | None = None, timeout: float = 30,
                scope: str | None = None) -> subprocess.CompletedProcess[str]:
    """`python -m memvault --vault ROOT [--scope S] ARGS` as a subprocess that must finish
    within `timeout` seconds and 2 GiB (subprocess.TimeoutExpired fails the test)."""
    head = ["--vault", str(root)] + (["--scope", scope] if scope else [])
    return subprocess.run([sys.executable, "-m", "memvault", *head, *args],
                          input=input, capture_output=True, text=True, timeout=timeout,
                          env=dict(os.environ), preexec_fn=_limit_memory)


def vault_files(root: Path) -> dict[str, bytes]:
    """Every file's bytes, except memvault's caches (the search index, the parse cache,
    the lock)."""
    from memvault.state_paths import INDEX, PARSED

    out = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_file() and not rel.startswith((INDEX, PARSED + "/")) and \
                path.name != "lock":
            out[rel] = path.read_bytes()
    return out


def one_line_error(proc: subprocess.CompletedProcess[str], *needles: str) -> str:
    """Assert exit 1 and a single `error: …` line on stderr holding every needle."""
    assert proc.returncode == 1, (proc.returncode, proc.stdout, proc.stderr)
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    errors = [ln for ln in lines if ln.startswith("error: ")]
    assert len(errors) == 1 and "Traceback" not in proc.stderr, proc.stderr
    for needle in needles:
        assert needle in errors[0], (needle, errors[0])
    return errors[0]


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Fail with TimeoutError if the block runs longer than `seconds` (main thread)."""
    def expire(_signum: int, _frame: object) -> None:
        raise TimeoutError(f"took more than {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
