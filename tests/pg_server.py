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
        self.root = Path(root) if root else Path(tempfile.mkdtemp(prefix="memvault-pg-"))
        self.data = self.root / "data"
        self.log = self.root / "server.log"
        self.port = port or _free_port()
        self.settings = dict(settings or {})
        self._runas: list[str] = []
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

    def start(self) -> ThrowawayPostgres:
        self.root.mkdir(parents=True, exist_ok=True)
        if self._runas:
            shutil.chown(self.root, _SERVICE_USER, _SERVICE_USER)
        if not (self.data / "PG_VERSION").exists():
            self._run("initdb", "-D", str(self.data), "-U", SUPERUSER, "--auth=trust",
                      "-E", "UTF8", "--locale=C", "--no-sync")
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-w", "-t", "60",
                  "-o", self._options(), "start")
        self.wait_ready()
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


def _main(argv: list[str]) -> int:
    if argv[:1] == ["start"]:
        try:
            server = ThrowawayPostgres().start()
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
    print("usage: python -m tests.pg_server start | stop DATA_DIR", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
