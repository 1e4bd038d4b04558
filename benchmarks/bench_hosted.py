#!/usr/bin/env python3
"""Load test for hosted mode: many worker processes on PostgreSQL, one writer on SQLite.

Each worker process opens its own `HostedMemory` and runs a seeded mix of operations over
`--principals` principals (default 500):

- `put` (30 %) / `get` (20 %) / `list` (10 %) / `forget` (10 %) of the worker's own
  documents (ids unique to the worker, so each worker can predict their final state);
- `apply_event` (25 %): events drawn from one pool shared by all workers, so the same
  event arrives from several workers (duplicates); a worker that has seen event k
  acknowledged may send its forget event, which other workers' replays must not undo;
- `hot` (4 %): a new document for one of 4 principals pre-filled to 8 short of the
  4,096 limit, all workers racing for the last slots;
- `big` (1 %): a document of exactly 1 MiB (accepted) or 1 MiB + 1 byte (refused).

Afterwards a fresh process checks that every acknowledged write is present with its
content, every acknowledged forget is absent, every event id was applied exactly once
(and documents whose forget event was acknowledged stayed forgotten), every hot
principal holds exactly 4,096 documents with exactly 8 acknowledged additions, and no
principal is over the limit. The exit code is 1 if any check fails.

Prints throughput and p50/p99 latency for SQLite (one writer, the embedded baseline) and
PostgreSQL (`--workers` processes) side by side.

    python benchmarks/bench_hosted.py                       # 8 workers x 2,000 ops
    python benchmarks/bench_hosted.py --workers 3 --ops 200 --principals 50
    python benchmarks/bench_hosted.py --sqlite-workers 8    # SQLite contended, for contrast
    python benchmarks/bench_hosted.py --pg-url postgresql://me@127.0.0.1:5432/postgres

PostgreSQL: `--pg-url` (a maintenance database: the run creates its own database), else
TEST_POSTGRES_URL, else a throw-away server from the machine's binaries
(tests/pg_server.py).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))

ENV = {"SESSION_SECRET": "bench-hosted-secret-" + "b" * 32}
HOT = [f"hot-{i}" for i in range(4)]  # --hot N keeps the first N
HOT_ROOM = 8
EVENT_POOL = 3000
MIX = [("put", 30), ("get", 20), ("list", 10), ("forget", 10), ("event", 25), ("hot", 4),
       ("big", 1)]


def _event(k: int, principals: int) -> tuple[str, str, str]:
    return f"user-{k % principals}", f"ev-{k}", f"event {k} says hello"


def worker(target: str, index: int, ops: int, principals: int, seed: int, hot: list[str],
           barrier: Any, out: str) -> None:
    """One worker process: run the mix, record what was acknowledged, write JSON."""
    from memvault.errors import NotFound
    from memvault.hosted import MAX_DOC_BYTES, HostedMemory, LimitExceeded, StoreUnavailable

    rng = random.Random(seed * 1000 + index)
    kinds = [k for k, w in MIX for _ in range(w)]
    mine: dict[str, dict[str, str | None]] = defaultdict(dict)  # principal -> id -> content
    events: list[tuple[str, str]] = []  # (event id, status)
    seen_events: list[int] = []
    hot_added: list[tuple[str, str]] = []
    hot_attempts = 0
    big: list[tuple[str, str, int, bool]] = []
    lat: dict[str, list[float]] = defaultdict(list)
    problems: list[str] = []
    unavailable = 0
    with HostedMemory.open(target, environ=ENV) as hm:
        barrier.wait(timeout=300)
        started = time.time()
        for i in range(ops):
            op = rng.choice(kinds)
            p = f"user-{rng.randrange(principals)}"
            t0 = time.perf_counter()
            try:
                if op == "put" or (op in ("get", "forget", "list") and not mine[p]):
                    op = "put"
                    doc = f"w{index}-d{rng.randrange(40)}"
                    text = f"worker {index} op {i} for {p}: {rng.random():.12f}"
                    hm.put(p, doc, text)
                    mine[p][doc] = text
                elif op == "get":
                    doc = rng.choice(sorted(mine[p]))
                    try:
                        got = hm.get(p, doc).text
                        if got != mine[p][doc]:
                            problems.append(f"get {p}/{doc}: wrong content")
                    except NotFound:
                        if mine[p][doc] is not None:
                            problems.append(f"get {p}/{doc}: acknowledged put missing")
                elif op == "list":
                    listed = {d.doc_id for d in hm.list(p)}
                    lost = [d for d, c in mine[p].items() if c is not None and d not in listed]
                    if lost:
                        problems.append(f"list {p}: missing {lost}")
                elif op == "forget":
                    live = sorted(d for d, c in mine[p].items() if c is not None)
                    if live:
                        doc = rng.choice(live)
                        hm.forget(p, doc)
                        mine[p][doc] = None
                elif op == "event":
                    if seen_events and rng.random() < 0.2:
                        k = rng.choice(seen_events)
                        ep, doc, _ = _event(k, principals)
                        r = hm.apply_event(ep, f"forget-{k}", op="forget", doc_id=doc)
                        events.append((f"forget-{k}", r.status))
                    else:
                        k = rng.randrange(EVENT_POOL)
                        ep, doc, text = _event(k, principals)
                        r = hm.apply_event(ep, f"evt-{k}", doc_id=doc, content=text)
                        events.append((f"evt-{k}", r.status))
                        seen_events.append(k)
                elif op == "hot":
                    h = rng.choice(hot)
                    doc = f"w{index}-hot{i}"
                    hot_attempts += 1
                    try:
                        hm.put(h, doc, f"hot {index} {i}")
                        hot_added.append((h, doc))
                    except LimitExceeded:
                        pass
                elif op == "big":
                    size = MAX_DOC_BYTES + rng.choice((0, 1))
                    doc = f"w{index}-big{i}"
                    try:
                        hm.put(p, doc, os.urandom(size))
                        big.append((p, doc, size, True))
                    except LimitExceeded:
                        big.append((p, doc, size, False))
            except StoreUnavailable:
                unavailable += 1
                continue
            lat[op].append(time.perf_counter() - t0)
        ended = time.time()
    Path(out).write_text(json.dumps({
        "index": index, "started": started, "ended": ended, "latencies": lat,
        "mine": mine, "events": events, "hot_added": hot_added, "hot_attempts": hot_attempts,
        "big": big,
        "problems": problems, "unavailable": unavailable}))


def prefill(target: str, principals: int) -> None:
    from memvault.hosted import MAX_RECORDS, HostedMemory

    with HostedMemory.open(target, environ=ENV) as hm:
        for h in HOT:
            hm.put_many(h, [(f"seed-{i}", f"seed {i}", "preference")
                            for i in range(MAX_RECORDS - HOT_ROOM)])


def verify(target: str, results: list[dict[str, Any]], principals: int) -> dict[str, Any]:
    """Every acknowledged write present, every forget absent, events once, bounds held."""
    from memvault.errors import NotFound
    from memvault.hosted import MAX_DOC_BYTES, MAX_RECORDS, HostedMemory

    problems = [p for r in results for p in r["problems"]]
    present = absent = 0

    def stored(principal: str, doc: str) -> bytes | None:
        try:
            return hm.get(principal, doc).content
        except NotFound:
            return None

    def expect(where: str, got: bytes | None, want: bytes | None) -> None:
        if got != want:
            found = "nothing" if got is None else f"{len(got)} bytes"
            wanted = "absent" if want is None else f"{len(want)} bytes"
            problems.append(f"{where}: found {found}, expected {wanted}")

    with HostedMemory.open(target, environ=ENV) as hm:
        for r in results:
            for p, docs in r["mine"].items():
                for doc, text in docs.items():
                    expect(f"{p}/{doc}", stored(p, doc), None if text is None else text.encode())
                    present += text is not None
                    absent += text is None
        applied = Counter(e for r in results for e, s in r["events"] if s == "applied")
        acked = {e for r in results for e, _ in r["events"]}
        problems += [f"{e} applied {n} times" for e, n in applied.items() if n != 1]
        problems += [f"{e} acknowledged but never applied" for e in acked if e not in applied]
        forgotten = {int(e.split("-")[1]) for e in acked if e.startswith("forget-")}
        for e in acked:
            if e.startswith("evt-"):
                k = int(e.split("-")[1])
                ep, doc, text = _event(k, principals)
                expect(f"event document {doc}", stored(ep, doc),
                       None if k in forgotten else text.encode())
        hot_acks = Counter(h for r in results for h, _ in r["hot_added"])
        attempts = sum(r["hot_attempts"] for r in results)
        full = 0
        for h in HOT:
            count = hm.count(h)
            full += count == MAX_RECORDS
            if count != MAX_RECORDS - HOT_ROOM + hot_acks[h] or count > MAX_RECORDS:
                problems.append(f"{h}: {count} documents after {hot_acks[h]} acknowledged "
                                f"additions to {MAX_RECORDS - HOT_ROOM}")
        worst = max(hm.count(f"user-{p}") for p in range(principals))
        if worst > MAX_RECORDS:
            problems.append(f"a principal holds {worst} documents")
        for r in results:
            for p, doc, size, ok in r["big"]:
                if ok != (size <= MAX_DOC_BYTES):
                    problems.append(f"{doc}: {size} bytes {'accepted' if ok else 'refused'}")
                got = stored(p, doc)
                if (None if got is None else len(got)) != (size if ok else None):
                    problems.append(f"{doc}: {size} bytes, {'accepted' if ok else 'refused'}, "
                                    f"{'nothing' if got is None else len(got)} stored")
    return {"problems": problems, "present": present, "absent": absent,
            "hot": f"{full} of {len(HOT)} hot principals filled to the limit by {attempts} "
                   "racing additions",
            "events": len(acked), "duplicates": sum(
                1 for r in results for _, s in r["events"] if s == "duplicate")}


def run(label: str, target: str, workers: int, ops: int, principals: int,
        seed: int) -> dict[str, Any]:
    ctx = mp.get_context("spawn")
    prefill(target, principals)
    barrier = ctx.Barrier(workers)
    tmp = Path(tempfile.mkdtemp(prefix="bench-hosted-out-"))
    procs = [ctx.Process(target=worker, args=(target, w, ops, principals, seed, list(HOT),
                                              barrier, str(tmp / f"{w}.json")))
             for w in range(workers)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=3600)
        if p.exitcode != 0:
            raise SystemExit(f"{label}: a worker failed (exit {p.exitcode})")
    results = [json.loads((tmp / f"{w}.json").read_text()) for w in range(workers)]
    wall = max(r["ended"] for r in results) - min(r["started"] for r in results)
    lat = defaultdict(list)
    for r in results:
        for op, values in r["latencies"].items():
            lat[op] += values
    every = sorted(v for values in lat.values() for v in values)
    check = verify(target, results, principals)
    return {"label": label, "workers": workers, "ops": len(every), "wall": wall,
            "throughput": len(every) / wall, "p50": _pct(every, 50), "p99": _pct(every, 99),
            "by_op": {op: (_pct(sorted(v), 50), _pct(sorted(v), 99), len(v))
                      for op, v in sorted(lat.items())},
            "unavailable": sum(r["unavailable"] for r in results), **check}


def _pct(values: list[float], pct: float) -> float:
    if not values:
        return float("nan")
    if len(values) == 1:
        return values[0] * 1000
    return statistics.quantiles(values, n=100, method="inclusive")[int(pct) - 1] * 1000


def _pg_database(url: str | None) -> tuple[str, str, Any]:
    from tests.pg_server import URL_ENV, ThrowawayPostgres

    server = None
    url = url or os.environ.get(URL_ENV)
    if not url:
        server = ThrowawayPostgres().start()
        url = server.url
    import psycopg

    name = f"bench_hosted_{os.getpid()}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return url.rsplit("/", 1)[0] + "/" + name, url, server


def _drop(maintenance: str, target: str) -> None:
    import psycopg

    name = target.rsplit("/", 1)[1]
    with psycopg.connect(maintenance, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')


def report(rows: list[dict[str, Any]]) -> str:
    lines = ["| store | workers × ops | ops/s | p50 | p99 | put p50/p99 | get p50/p99 | "
             "apply_event p50/p99 | checks |", "| --- | --- | --- | --- | --- | --- | --- | "
             "--- | --- |"]
    for r in rows:
        def pair(op: str, r: dict[str, Any] = r) -> str:
            p50, p99, _ = r["by_op"].get(op, (float("nan"),) * 3)
            return f"{p50:.2f} / {p99:.2f} ms"
        verdict = "all held" if not r["problems"] else f"{len(r['problems'])} FAILED"
        lines.append(f"| {r['label']} | {r['workers']} × {r['ops'] // r['workers']:,} | "
                     f"{r['throughput']:,.0f} | {r['p50']:.2f} ms | {r['p99']:.2f} ms | "
                     f"{pair('put')} | {pair('get')} | {pair('event')} | {verdict} |")
    for r in rows:
        lines.append(f"\n{r['label']}: {r['present']} acknowledged documents present, "
                     f"{r['absent']} forgotten ones absent, {r['events']} event ids each "
                     f"applied once ({r['duplicates']} duplicates refused); {r['hot']}; "
                     f"{r['unavailable']} operations hit a lost connection")
        lines += [f"  - {p}" for p in r["problems"][:20]]
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workers", type=int, default=8)
    ap.add_argument("--ops", type=int, default=2000, help="operations per worker")
    ap.add_argument("--principals", type=int, default=500)
    ap.add_argument("--sqlite-ops", type=int, default=None,
                    help="operations per SQLite worker (default: --ops)")
    ap.add_argument("--sqlite-workers", type=int, default=1,
                    help="SQLite worker processes (default 1: the embedded case)")
    ap.add_argument("--pg-url", default=None)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--hot", type=int, default=len(HOT),
                    help="principals pre-filled near the limit (1-4)")
    ap.add_argument("--skip-sqlite", action="store_true")
    args = ap.parse_args()
    del HOT[max(1, args.hot):]
    print(f"Linux {platform.machine()}, Python {platform.python_version()}, "
          f"{os.cpu_count()} CPUs", flush=True)
    rows = []
    if not args.skip_sqlite:
        folder = Path(tempfile.mkdtemp(prefix="bench-hosted-sqlite-"))
        label = ("SQLite, one writer" if args.sqlite_workers == 1
                 else f"SQLite, {args.sqlite_workers} workers")
        rows.append(run(label, str(folder / "hosted.sqlite"), args.sqlite_workers,
                        args.sqlite_ops or args.ops, args.principals, args.seed))
    target, maintenance, server = _pg_database(args.pg_url)
    try:
        rows.append(run(f"PostgreSQL, {args.workers} workers", target, args.workers,
                        args.ops, args.principals, args.seed))
    finally:
        if server is not None:
            server.stop()
        else:
            _drop(maintenance, target)
    print(report(rows))
    return 1 if any(r["problems"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
