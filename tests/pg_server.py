"""A throw-away PostgreSQL server on loopback, from the machine's own PostgreSQL binaries.

`initdb` into a fresh temporary folder, `pg_ctl start` on 127.0.0.1 and a free port with
trust authentication (nothing but this machine can reach it), `pg_ctl stop` when done.
`initdb` refuses to run as root, so as root the server runs as the `postgres` system
user (made by Debian's PostgreSQL packages) through `runuser`; as anyone else it runs as
that user.

Used three ways, one implementation:

- `.ci/run`: `eval "$(python -m tests.pg_server start)"` exports `TEST_POSTGRES_URL` and
  `TEST_POSTGRES_DATA`; `python -m tests.pg_server stop "$TEST_POSTGRES_DATA"` in a trap;
- the hosted tests' fixtures (tests/hosted_backends.py), which start their own server
  when no `TEST_POSTGRES_URL` is given and the binaries exist;
- benchmarks/bench_hosted.py.

A server never outlives its owner (the process that started it, or the pid given to
`start --owner`): `start` writes the owner's pid and start time to `owner` in the
server's folder and starts a watchdog (this file, `watch ROOT`, in its own session so a
SIGKILL of the owner's process group spares it). The watchdog polls the owner twice a
second; when the owner is gone (or a zombie, or its pid now names another process) it
stops the server and removes the folder, and when the folder is gone (a normal `stop`)
it simply ends. Should the watchdog itself be killed too, the next `start` on the
machine sweeps up every `memvault-pg-*` folder whose owner is dead
(`sweep_stale_servers`).
"""

from __future__ import annotations

import glob
import os
import pwd
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

URL_ENV = "TEST_POSTGRES_URL"
DATA_ENV = "TEST_POSTGRES_DATA"
SUPERUSER = "memvault"
_SERVICE_USER = "postgres"
OWNER_FILE = "owner"
PREFIX = "memvault-pg-"
POLL_SECONDS = 0.5


class PostgresUnavailable(RuntimeError):
    """No PostgreSQL binaries here, or the server would not start (the reason is named)."""


def find_bindir() -> Path:
    """The folder holding initdb/pg_ctl/postgres: $PG_BINDIR, the newest
    /usr/lib/postgresql/N/bin, or wherever `initdb` is on PATH."""
    candidates = [os.environ.get("PG_BINDIR", "")]
    candidates += sorted(glob.glob("/usr/lib/postgresql/*/bin"),
                         key=lambda p: int(Path(p).parent.name) if Path(p).parent.name.isdigit()
                         else 0, reverse=True)
    on_path = shutil.which("initdb")
    if on_path:
        candidates.append(str(Path(on_path).resolve().parent))
    for folder in candidates:
        if folder and (Path(folder) / "initdb").is_file() and (Path(folder) / "pg_ctl").is_file():
            return Path(folder)
    raise PostgresUnavailable("no PostgreSQL server binaries (initdb, pg_ctl) on this machine "
                              "(looked in $PG_BINDIR, /usr/lib/postgresql/*/bin and PATH)")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ThrowawayPostgres:
    """One private PostgreSQL server in a temporary folder.

    `settings` become `-c name=value` server options (e.g. {"log_statement": "all"}).
    """

    def __init__(self, root: Path | None = None, *, settings: dict[str, str] | None = None,
                 port: int | None = None) -> None:
        self.bindir = find_bindir()
        self.root = Path(root) if root else Path(tempfile.mkdtemp(prefix=PREFIX))
        self.data = self.root / "data"
        self.log = self.root / "server.log"
        self.port = port or _free_port()
        self.settings = dict(settings or {})
        self._runas: list[str] = []
        self.watchdog: subprocess.Popen[bytes] | None = None
        if os.geteuid() == 0:
            try:
                pwd.getpwnam(_SERVICE_USER)
            except KeyError:
                raise PostgresUnavailable(f"running as root and there is no {_SERVICE_USER!r} "
                                          "user to run initdb as") from None
            if not shutil.which("runuser"):
                raise PostgresUnavailable("running as root and `runuser` is missing")
            self._runas = ["runuser", "-u", _SERVICE_USER, "--"]

    @property
    def url(self) -> str:
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/postgres"

    def url_for(self, dbname: str) -> str:
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/{dbname}"

    def _run(self, tool: str, *args: str, timeout: float = 120) -> None:
        cmd = [*self._runas, str(self.bindir / tool), *args]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL)
        if done.returncode != 0:
            tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
            raise PostgresUnavailable(f"{tool} failed: {' / '.join(tail)}")

    def _options(self) -> str:
        opts = {"listen_addresses": "127.0.0.1", "port": str(self.port),
                "unix_socket_directories": str(self.root), "max_connections": "120",
                "max_wal_size": "96MB", "min_wal_size": "32MB", **self.settings}
        return " ".join(f"-c {shlex.quote(f'{k}={v}')}" for k, v in opts.items())

    def start(self, owner: int | None = None) -> ThrowawayPostgres:
        """initdb (once) and start the server, watched on behalf of `owner` (a pid; this
        process by default): when the owner dies, so does the server."""
        sweep_stale_servers()
        self.root.mkdir(parents=True, exist_ok=True)
        if self._runas:
            shutil.chown(self.root, _SERVICE_USER, _SERVICE_USER)
        owner = owner or os.getpid()
        (self.root / OWNER_FILE).write_text(f"{owner} {_start_time(owner)}\n")
        self.watchdog = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "watch", str(self.root)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True, close_fds=True)
        try:
            if not (self.data / "PG_VERSION").exists():
                self._run("initdb", "-D", str(self.data), "-U", SUPERUSER, "--auth=trust",
                          "-E", "UTF8", "--locale=C", "--no-sync")
            self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-w", "-t", "60",
                      "-o", self._options(), "start")
            self.wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def wait_ready(self, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while True:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return
            except OSError:
                if time.monotonic() > deadline:
                    raise PostgresUnavailable(f"the server on port {self.port} did not "
                                              f"answer within {timeout:.0f}s") from None
                time.sleep(0.05)

    def restart(self) -> None:
        """`pg_ctl restart -m fast`: sessions are cut, committed work survives."""
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-w", "-t", "60",
                  "-m", "fast", "-o", self._options(), "restart")
        self.wait_ready()

    def stop(self) -> None:
        stop_server(self.data)
        shutil.rmtree(self.root, ignore_errors=True)
        if self.watchdog is not None:  # it ends when it sees the folder gone
            try:
                self.watchdog.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.watchdog.kill()
                self.watchdog.wait()

    def create_database(self, name: str) -> str:
        """A fresh empty database; its URL."""
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url_for(name)


def stop_server(data: Path | str) -> None:
    """Stop the server whose data folder is `data` (quietly if it is not running)."""
    data = Path(data)
    if not (data / "postmaster.pid").exists():
        return
    runas = ["runuser", "-u", _SERVICE_USER, "--"] if os.geteuid() == 0 else []
    subprocess.run([*runas, str(find_bindir() / "pg_ctl"), "-D", str(data), "-m", "fast",
                    "-w", "-t", "60", "stop"], capture_output=True, timeout=90,
                   stdin=subprocess.DEVNULL)


def _start_time(pid: int) -> str:
    """When `pid` started, in clock ticks since boot (`/proc/PID/stat` field 22), so a
    reused pid is told apart from its first owner; "-" where /proc is not available."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return "-"
    return stat.rsplit(")", 1)[1].split()[19]


def owner_alive(owner_file: Path) -> bool:
    """Whether the process named in `owner_file` ("pid start-time") still runs. A zombie
    (killed, not yet reaped) counts as gone; an unreadable file counts as alive."""
    try:
        pid_text, started = owner_file.read_text().split()
        pid = int(pid_text)
    except (OSError, ValueError):
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:  # no /proc here (alive, as kill said), or it just ended
        return started == "-"
    except OSError:
        return True
    fields = stat.rsplit(")", 1)[1].split()
    return fields[0] != "Z" and (started == "-" or fields[19] == started)


def _reap(root: Path) -> None:
    stop_server(root / "data")
    shutil.rmtree(root, ignore_errors=True)


def sweep_stale_servers(tmp: Path | None = None) -> list[Path]:
    """Stop and remove every throw-away server under the temp folder whose owner is dead
    (its watchdog was killed too); returns their folders. Folders without an owner file
    (a server still being set up, or one started by an older copy of this file) are
    left alone."""
    reaped = []
    for root in sorted(Path(tmp or tempfile.gettempdir()).glob(f"{PREFIX}*")):
        owner = root / OWNER_FILE
        if owner.is_file() and not owner_alive(owner):
            _reap(root)
            reaped.append(root)
    return reaped


def watch(root: Path) -> int:
    """The watchdog loop (see the module doc)."""
    owner = root / OWNER_FILE
    while root.exists():
        if owner.exists() and not owner_alive(owner):
            _reap(root)
            return 0
        time.sleep(POLL_SECONDS)
    return 0


def _main(argv: list[str]) -> int:
    if argv[:1] == ["start"]:
        owner = None
        if argv[1:2] == ["--owner"] and len(argv) == 3 and argv[2].isdigit():
            owner = int(argv[2])
        elif len(argv) != 1:
            print("usage: python -m tests.pg_server start [--owner PID]", file=sys.stderr)
            return 2
        try:
            server = ThrowawayPostgres().start(owner)
        except PostgresUnavailable as exc:
            print(f"echo 'PostgreSQL not started: {exc}' >&2", flush=True)
            return 1
        print(f"export {URL_ENV}={shlex.quote(server.url)} "
              f"{DATA_ENV}={shlex.quote(str(server.data))}")
        return 0
    if len(argv) == 2 and argv[0] == "stop":
        stop_server(argv[1])
        shutil.rmtree(Path(argv[1]).parent, ignore_errors=True)
        return 0
    if len(argv) == 2 and argv[0] == "watch":
        return watch(Path(argv[1]))
    if argv == ["sweep"]:
        for root in sweep_stale_servers():
            print(f"stopped the abandoned server in {root}")
        return 0
    print("usage: python -m tests.pg_server start [--owner PID] | stop DATA_DIR | sweep",
          file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
