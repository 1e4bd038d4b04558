"""The throw-away PostgreSQL server of the test suite never outlives the process that
started it: SIGKILL that process (and its whole process group, as a CI runner or a
`timeout` would) and the server stops and its folder goes."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.hosted_backends import no_postgres
from tests.pg_server import (
    OWNER_FILE,
    PostgresUnavailable,
    ThrowawayPostgres,
    find_bindir,
    sweep_stale_servers,
)

ROOT = Path(__file__).resolve().parents[1]

# A stand-in for a pytest run: starts a server as the session fixture does, says where it
# is, and waits to be killed.
PARENT = """
import sys, time
from tests.pg_server import ThrowawayPostgres
server = ThrowawayPostgres().start()
print(server.root, server.port, flush=True)
time.sleep(600)
"""


def _answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def _postgres_running(data: Path) -> list[int]:
    """Pids of postgres processes serving `data` (read from /proc, as `ps` does)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv and argv[0].endswith(b"postgres") and str(data).encode() in argv:
            pids.append(int(entry.name))
    return pids


@pytest.fixture
def binaries() -> None:
    try:
        find_bindir()
    except PostgresUnavailable as exc:
        no_postgres(str(exc))


def test_a_sigkilled_parent_takes_its_server_with_it(binaries) -> None:
    parent = subprocess.Popen([sys.executable, "-c", PARENT], cwd=ROOT, stdout=subprocess.PIPE,
                              text=True, start_new_session=True)
    try:
        line = parent.stdout.readline().split()
        assert len(line) == 2, "the parent did not start its server"
        root, port = Path(line[0]), int(line[1])
        assert _answers(port) and _postgres_running(root / "data")
        os.killpg(parent.pid, signal.SIGKILL)  # the parent and its whole process group
        parent.wait(timeout=30)
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and (_answers(port) or root.exists()
                                               or _postgres_running(root / "data")):
            time.sleep(0.2)
        assert not _answers(port), "the server still answers after its parent died"
        assert not _postgres_running(root / "data")
        assert not root.exists(), "the server's folder was left behind"
    finally:
        if parent.poll() is None:
            os.killpg(parent.pid, signal.SIGKILL)


def test_a_restarted_server_keeps_running_and_a_stop_ends_its_watch(binaries) -> None:
    try:
        server = ThrowawayPostgres().start()
    except PostgresUnavailable as exc:
        no_postgres(str(exc))
    try:
        server.restart()  # what the fault tests do: the watch must not mind
        time.sleep(1.5)
        assert _answers(server.port)
    finally:
        server.stop()
    assert not _answers(server.port) and not server.root.exists()
    assert not _postgres_running(server.data)
    assert server.watchdog is not None and server.watchdog.poll() is not None


def test_a_server_whose_owner_and_watchdog_both_died_is_swept_by_the_next_start(
        binaries) -> None:
    server = ThrowawayPostgres().start()
    try:
        assert server.watchdog is not None
        server.watchdog.kill()  # the watchdog is gone too (an OOM kill, a `kill -9 -1`)
        server.watchdog.wait(timeout=10)
        gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                              capture_output=True, text=True, timeout=30)
        (server.root / OWNER_FILE).write_text(f"{gone.stdout.strip()} -\n")  # a dead owner
        assert _answers(server.port)
        assert server.root in sweep_stale_servers()
        assert not _answers(server.port) and not server.root.exists()
        assert not _postgres_running(server.data)
    finally:
        server.stop()
