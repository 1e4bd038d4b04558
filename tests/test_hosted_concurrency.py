"""Many worker processes on one principal at once, against SQLite and PostgreSQL: the record
bound is never overrun, an event applies exactly once, and a forget sticks while other
workers replay the event that created the document."""

from __future__ import annotations

import multiprocessing as mp
from typing import Any

from memvault.hosted import MAX_RECORDS, HostedMemory, LimitExceeded
from tests.hosted_backends import Backend

ENV = {"SESSION_SECRET": "concurrency-secret-" + "c" * 30}
WORKERS = 6
_ctx = mp.get_context("spawn")


def _run(target: str, jobs: list[tuple[str, tuple[Any, ...]]],
         timeout: float = 120) -> list[Any]:
    """Run each (function name, args) in its own process, all released at once by a
    barrier; their results in the order they finished."""
    barrier = _ctx.Barrier(len(jobs))
    queue = _ctx.Queue()
    procs = [_ctx.Process(target=_worker, args=(target, fn, a, barrier, queue), daemon=True)
             for fn, a in jobs]
    for p in procs:
        p.start()
    results = [queue.get(timeout=timeout) for _ in procs]
    for p in procs:
        p.join(timeout=timeout)
        assert p.exitcode == 0
    errors = [r for r in results if isinstance(r, str)]
    assert not errors, errors
    return results


def _worker(target: str, fn: str, args: tuple[Any, ...], barrier: Any, queue: Any) -> None:
    try:
        with HostedMemory.open(target, environ=ENV) as hm:
            barrier.wait(timeout=60)
            queue.put(globals()[fn](hm, *args))
    except BaseException as exc:  # reported to the parent, which fails the test
        queue.put(f"{type(exc).__name__}: {exc}")


def _add_new(hm: HostedMemory, worker: int, attempts: int) -> int:
    stored = 0
    for i in range(attempts):
        try:
            hm.put("hot", f"w{worker}-new{i}", f"worker {worker} doc {i}")
            stored += 1
        except LimitExceeded:
            pass
    return stored


def _apply_same_events(hm: HostedMemory, events: int) -> list[str]:
    return [hm.apply_event("shared", f"evt-{e}", doc_id=f"doc-{e}",
                           content=f"event {e} content").status for e in range(events)]


def _replay(hm: HostedMemory, rounds: int) -> list[str]:
    return [hm.apply_event("p", "evt-create", doc_id="pref", content="Likes rhubarb charts"
                           ).status for _ in range(rounds)]


def _forget_then_replay(hm: HostedMemory, rounds: int) -> list[str]:
    hm.forget("p", "pref")
    return _replay(hm, rounds)


def test_the_record_bound_holds_with_many_workers_adding_at_once(backend: Backend) -> None:
    room = 6
    with HostedMemory.open(backend.target, environ=ENV) as hm:
        hm.put_many("hot", [(f"d{i}", f"doc {i}", "preference")
                            for i in range(MAX_RECORDS - room)])
    stored = _run(backend.target, [("_add_new", (w, 5)) for w in range(WORKERS)])
    assert sum(stored) == room  # every acknowledged put is one of the last free slots
    with HostedMemory.open(backend.target, environ=ENV) as hm:
        assert hm.count("hot") == MAX_RECORDS
        new = [d for d in hm.list("hot") if "-new" in d.doc_id]
        assert len(new) == room


def test_one_instance_serves_many_threads(backend: Backend) -> None:
    from concurrent.futures import ThreadPoolExecutor

    def work(t: int) -> int:
        for i in range(40):
            p = f"thread-user-{(t * 40 + i) % 23}"
            hm.put(p, f"t{t}-d{i}", f"thread {t} doc {i}")
            assert hm.get(p, f"t{t}-d{i}").text == f"thread {t} doc {i}"
        status = hm.apply_event("shared", "evt-threads", doc_id="x",
                                content="from threads").status
        return 1 if status == "applied" else 0

    with HostedMemory.open(backend.target, environ=ENV) as hm:
        with ThreadPoolExecutor(8) as pool:
            applied = list(pool.map(work, range(8)))
        assert sum(applied) == 1
        assert sum(hm.count(f"thread-user-{u}") for u in range(23)) == 8 * 40


def test_an_event_applies_exactly_once_across_workers(backend: Backend) -> None:
    events = 25
    statuses = _run(backend.target, [("_apply_same_events", (events,))] * WORKERS)
    for e in range(events):
        column = [s[e] for s in statuses]
        assert column.count("applied") == 1, (e, column)
        assert column.count("duplicate") == WORKERS - 1
    with HostedMemory.open(backend.target, environ=ENV) as hm:
        assert hm.count("shared") == events


def test_a_forget_sticks_while_other_workers_replay_the_event(backend: Backend) -> None:
    with HostedMemory.open(backend.target, environ=ENV) as hm:
        assert hm.apply_event("p", "evt-create", doc_id="pref", content="Likes rhubarb charts"
                              ).status == "applied"
    results = _run(backend.target, [("_replay", (30,))] * (WORKERS - 1)
                   + [("_forget_then_replay", (30,))])
    assert {s for r in results for s in r} == {"duplicate"}
    with HostedMemory.open(backend.target, environ=ENV) as hm:
        assert hm.list("p") == []
        assert hm.is_forgotten("p", "Likes rhubarb charts")
