"""Faults under load: the PostgreSQL server restarted mid-load (`pg_ctl restart`), and a
`hosted rekey` killed with SIGKILL half-way, on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from memvault.hosted import HostedMemory, StoreUnavailable
from memvault.hosted.admin import status
from tests.hosted_backends import Backend, no_postgres
from tests.pg_server import PostgresUnavailable, ThrowawayPostgres

OLD = {"SESSION_SECRET": "fault-old-secret-" + "o" * 30}
NEW = {"SESSION_SECRET": "fault-new-secret-" + "n" * 30}
ROTATING = {**NEW, "SESSION_SECRET_PREVIOUS": OLD["SESSION_SECRET"]}
_ctx = mp.get_context("spawn")


def _writer(url: str, worker: int, puts: int, log: str) -> None:
    """Put documents one by one; log each acknowledged put and each failure's message;
    retry a failed put until it is acknowledged (bounded)."""
    with HostedMemory.open(url, environ=OLD) as hm, open(log, "a") as out:
        for i in range(puts):
            deadline = time.monotonic() + 60
            while True:
                try:
                    hm.put(f"user-{i % 7}", f"w{worker}-{i}", f"worker {worker} put {i}")
                    out.write(json.dumps({"ack": i}) + "\n")
                    break
                except StoreUnavailable as exc:
                    out.write(json.dumps({"error": str(exc)}) + "\n")
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.05)
                finally:
                    out.flush()
            time.sleep(0.005)


def _big_batch(url: str, log: str) -> None:
    """One long transaction (put_many of 3,000 documents), retried once after a failure."""
    items = [(f"b{i}", f"batch document {i} " + "x" * 2000, "preference") for i in range(3000)]
    with HostedMemory.open(url, environ=OLD) as hm, open(log, "a") as out:
        try:
            hm.put_many("batch", items)
            out.write(json.dumps({"first": "ok"}) + "\n")
        except StoreUnavailable as exc:
            out.write(json.dumps({"first": str(exc), "count_after": hm.count("batch")}) + "\n")
            out.flush()
            hm.put_many("batch", items)
            out.write(json.dumps({"retry": "ok"}) + "\n")


def _records(log: Path) -> list[dict[str, Any]]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def _hold_batch_row(url: str, doc_id: str) -> Any:
    """A connection whose open transaction has inserted the row the big batch will write
    for `doc_id`: the batch's insert of it waits on that row lock, so the batch stops
    there, mid-way, with every earlier document written but not committed. The restart
    cuts this connection too, so the held row is rolled back and leaves nothing."""
    import psycopg

    with HostedMemory.open(url, environ=OLD) as hm:
        tag = hm.keyring.principal("batch").doc_tag(doc_id)
        principal = hm.keyring.principal("batch").tag
    conn = psycopg.connect(url)  # not autocommit: the insert stays uncommitted
    conn.execute("INSERT INTO memvault.documents (principal, doc, kind, sealed, updated, "
                 "key_id, fmt) VALUES (%s, %s, 'preference', %s, 0, NULL, 1)",
                 (principal, tag, b"held"))
    return conn


def _batch_waits_on_the_held_row(server: ThrowawayPostgres, db: str) -> bool:
    """Whether the big batch's transaction has written (it has a transaction id) and now
    waits for a row lock: stopped mid-way, where it cannot commit before the restart."""
    import psycopg

    with psycopg.connect(server.url, autocommit=True) as conn:
        return bool(conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname=%s "
            "AND application_name='fault-batch' AND backend_xid IS NOT NULL "
            "AND wait_event_type='Lock'", (db,)).fetchone()[0])


@pytest.fixture
def own_server(tmp_path: Path):
    """A private server, so restarting it disturbs no other test."""
    try:
        server = ThrowawayPostgres().start()
    except PostgresUnavailable as exc:
        no_postgres(str(exc))
    try:
        yield server
    finally:
        server.stop()


def test_acknowledged_writes_survive_a_server_restart_and_in_flight_ones_retry(
        own_server: ThrowawayPostgres, tmp_path: Path) -> None:
    pytest.importorskip("psycopg", reason="psycopg is not installed")
    url = own_server.create_database("faults")
    with HostedMemory.open(url, environ=OLD):
        pass  # schema
    logs = [tmp_path / f"w{w}.jsonl" for w in range(3)]
    batch_log = tmp_path / "batch.jsonl"
    procs = [_ctx.Process(target=_writer, args=(url, w, 150, str(logs[w])), daemon=True)
             for w in range(3)]
    # The batch names its connections, so the wait below finds its transaction and no
    # writer's; it stops at b2000 on the held row, so it cannot commit before the restart.
    held = _hold_batch_row(url, "b2000")
    procs.append(_ctx.Process(target=_big_batch, args=(url + "?application_name=fault-batch",
                                                       str(batch_log)), daemon=True))
    for p in procs:
        p.start()
    deadline = time.monotonic() + 120
    # restart once every writer has acknowledged some puts and the big batch is mid-way
    while not (all(len(_records(log)) >= 10 for log in logs)
               and _batch_waits_on_the_held_row(own_server, "faults")):
        assert time.monotonic() < deadline, "the load never got going"
        assert not _records(batch_log), "the batch finished before the restart"
        time.sleep(0.02)
    acked_before = {w: {r["ack"] for r in _records(logs[w]) if "ack" in r} for w in range(3)}
    own_server.restart()
    held.close()  # its session ended with the restart; its uncommitted row is gone
    for p in procs:
        p.join(timeout=180)
        assert p.exitcode == 0
    batch = _records(batch_log)
    assert "first" in batch[0] and batch[0]["first"] != "ok", "the batch was not in flight"
    message = batch[0]["first"]
    assert "\n" not in message and "not acknowledged: retry it" in message
    assert batch[0]["count_after"] == 0  # the interrupted transaction left nothing
    assert batch[-1] == {"retry": "ok"}
    with HostedMemory.open(url, environ=OLD) as hm:
        assert hm.count("batch") == 3000
        for w in range(3):
            records = _records(logs[w])
            assert {r["ack"] for r in records if "ack" in r} == set(range(150))
            assert acked_before[w] <= set(range(150))
            for r in records:
                if "error" in r:
                    assert "\n" not in r["error"] and "retry it" in r["error"]
            for i in sorted(acked_before[w]):
                assert hm.get(f"user-{i % 7}", f"w{w}-{i}").text == f"worker {w} put {i}"


def _rekey_process(target: str) -> subprocess.Popen[str]:
    env = {**os.environ, **ROTATING}
    return subprocess.Popen([sys.executable, "-m", "memvault", "hosted", "rekey", "--db",
                             target, "--batch", "5"], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def test_a_rekey_killed_half_way_resumes_and_finishes(backend: Backend) -> None:
    with HostedMemory.open(backend.target, environ=OLD) as hm:
        for p in range(40):
            hm.put_many(f"user-{p}", [(f"d{d}", f"user {p} document {d}", "lesson")
                                      for d in range(15)])
    proc = _rekey_process(backend.target)
    assert proc.stderr is not None
    try:
        for line in proc.stderr:  # "rekey: resealed N/600" after each batch
            if line.startswith("rekey: resealed") and int(line.split()[2].split("/")[0]) >= 100:
                proc.send_signal(signal.SIGKILL)
                break
    finally:
        proc.wait(timeout=120)
    assert proc.returncode == -signal.SIGKILL
    half = status(backend.target, ROTATING)
    assert 0 < half["needs_rekey"] < 600, half
    with HostedMemory.open(backend.target, environ=ROTATING) as hm:  # both kinds of rows open
        assert hm.get("user-39", "d14").text == "user 39 document 14"
        assert hm.get("user-0", "d0").text == "user 0 document 0"
    again = _rekey_process(backend.target)
    out, err = again.communicate(timeout=300)
    assert again.returncode == 0, err
    assert status(backend.target, NEW)["needs_rekey"] == 0
    with HostedMemory.open(backend.target, environ=NEW) as hm:
        for p in range(40):
            assert len(hm.load_all(f"user-{p}")) == 15
    with pytest.raises(Exception, match="does not match"):
        HostedMemory.open(backend.target, environ=OLD)
