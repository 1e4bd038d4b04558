"""The hosted behaviour suite's two stores: a SQLite file and a real PostgreSQL database.

Registered once for the whole suite (`pytest_plugins` in tests/conftest.py), so one
session has one server: every test taking `backend` runs against both stores.

PostgreSQL comes from `TEST_POSTGRES_URL` (the server `.ci/run` starts), or else from a
throw-away server this session starts from the machine's binaries (tests/pg_server.py).
With neither, a PostgreSQL test fails under CI (`CI=true`) and is skipped elsewhere with
the reason. Each test gets a fresh database on that server.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import set_up_unavailable
from tests.pg_server import DATA_ENV, URL_ENV, PostgresUnavailable, ThrowawayPostgres

_counter = itertools.count()


def no_postgres(reason: str) -> None:
    """Fail under CI, skip elsewhere, naming the reason."""
    set_up_unavailable(f"PostgreSQL needed and not available: {reason}")


@dataclass
class PgServer:
    url: str  # the maintenance database's URL
    data: Path | None
    own: ThrowawayPostgres | None

    def create_database(self) -> str:
        import psycopg

        name = f"t{os.getpid()}_{next(_counter)}"
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url.rsplit("/", 1)[0] + "/" + name

    def drop_database(self, url: str) -> None:
        import psycopg

        name = url.rsplit("/", 1)[1]
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer | str]:
    """The server, or the reason there is none (a string)."""
    try:
        import psycopg  # noqa: F401
        import psycopg_pool  # noqa: F401
    except ImportError:
        yield "psycopg is not installed (pip install -e '.[postgres]')"
        return
    url = os.environ.get(URL_ENV)
    if url:
        data = os.environ.get(DATA_ENV)
        yield PgServer(url, Path(data) if data else None, None)
        return
    try:
        server = ThrowawayPostgres().start()
    except PostgresUnavailable as exc:
        yield str(exc)
        return
    try:
        yield PgServer(server.url, server.data, server)
    finally:
        server.stop()


@dataclass
class Backend:
    """One store under test: `target` is what HostedMemory.open takes."""

    name: str
    target: str
    folder: Path | None = None  # SQLite: the folder holding the file
    server: PgServer | None = None

    def sql(self, statement: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """Run SQL on the store's own tables as someone with database access would
        (`?` placeholders; table names unqualified)."""
        if self.name == "sqlite":
            import sqlite3

            conn = sqlite3.connect(self.target)
            try:
                rows = conn.execute(statement, params).fetchall()
                conn.commit()
                return rows
            finally:
                conn.close()
        import psycopg

        with psycopg.connect(self.target, autocommit=True) as conn:
            conn.execute("SET search_path TO memvault")
            cur = conn.execute(statement.replace("?", "%s"), params)
            return cur.fetchall() if cur.description else []

    def raw_bytes(self) -> bytes:
        """Every byte the database keeps on disk: the SQLite file with its WAL, or the
        PostgreSQL data folder (tables, indexes, WAL, logs) after a checkpoint."""
        if self.name == "sqlite":
            assert self.folder is not None
            return b"".join(p.read_bytes() for p in sorted(self.folder.iterdir())
                            if p.is_file())
        assert self.server is not None
        if self.server.data is None:
            no_postgres(f"{DATA_ENV} is not set, so the server's files cannot be read")
        import psycopg

        database = self.target.rsplit("/", 1)[1]
        with psycopg.connect(self.server.url, autocommit=True) as conn:
            conn.execute("CHECKPOINT")
            oid = conn.execute("SELECT oid FROM pg_database WHERE datname=%s",
                               (database,)).fetchone()[0]
        root = self.server.data.parent  # the data folder and the server log beside it
        base = self.server.data / "base"
        own = base / str(oid)
        return b"".join(p.read_bytes() for p in sorted(root.rglob("*"))
                        if p.is_file() and not p.is_symlink()
                        and (own in p.parents or base not in p.parents))


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    if request.param == "sqlite":
        folder = tmp_path / "hosted"
        return Backend("sqlite", str(folder / "memory.sqlite"), folder=folder)
    server = request.getfixturevalue("pg_server")
    if isinstance(server, str):
        no_postgres(server)
    url = server.create_database()
    request.addfinalizer(lambda: server.drop_database(url))
    return Backend("postgres", url, server=server)
