#!/usr/bin/env python3
"""Benchmark agents and hosted mode: MCP round trips over stdio, hosted-mode throughput.

MCP: starts `python -m memvault --vault V serve` as a real subprocess on a generated vault
of N notes (default 10,000, in folders, with frontmatter, tags and wikilinks) and a
Memory.md of 200 facts, connects the SDK's stdio ClientSession, and measures the median
(and p95) of `--calls` round trips (default 200) for

- `proposal_list` on an empty inbox: the baseline (a near no-op tool through the same
  server, protocol and per-call vault opening),
- `memory_context` with a request,
- `memory_search` with varying queries (the index is built once before timing),
- `memory_search` right after editing a note (the index is refreshed before the query;
  fewer calls).

Hosted: 4,096 documents of 4 KB for one principal, measured as

- encrypt + store (`put_many`, one transaction) vs a plain SQLite insert of the same
  bytes without encryption (the baseline; both with synchronous=FULL),
- load + decrypt (`load_all`) vs a plain SQLite select of the same rows,
- the same 4,096 documents as single `put`s (one durable transaction each) and `get`s.

Prints a Markdown table with ratios to the baselines; numbers go in docs/performance.md.
Nothing here is a pass/fail test.

    python benchmarks/bench_mcp.py                       # 10,000 notes, 200 calls
    python benchmarks/bench_mcp.py --notes 2000 --calls 50
    python benchmarks/bench_mcp.py --skip-mcp            # hosted mode only
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

WORDS = ("aurora runtime scheduler ledger venue token swap liquidity routing gas fee wallet "
         "bridge oracle vault epoch staking rebalance invoice meeting roadmap draft review "
         "kernel parser compiler lattice harbor meadow quartz copper willow falcon").split()
FACTS = ("I prefer concise answers", "Show amounts in USD", "My main project is Aurora",
         "Always cite sources as wikilinks", "I trade ETH/USDC on Base",
         "Use tables for comparisons", "I work in Lisbon time", "Avoid jargon")


def make_vault(root: Path, notes: int, seed: int = 7) -> None:
    from memvault.services.setup import init_vault

    init_vault(root)
    rng = random.Random(seed)
    for i in range(notes):
        folder = root / f"Area{i % 40:02d}" / f"Topic{i % 7}"
        folder.mkdir(parents=True, exist_ok=True)
        words = [rng.choice(WORDS) for _ in range(rng.randint(60, 220))]
        tag = rng.choice(WORDS)
        link = f"Note {rng.randrange(notes):05d}"
        body = " ".join(words)
        (folder / f"Note {i:05d}.md").write_text(
            f"---\ntags: [{tag}, area{i % 40}]\naliases: [n{i}]\n---\n# Note {i:05d}\n\n"
            f"{body}\n\nSee [[{link}]] and #{tag}/sub.\n", encoding="utf-8")
    now = int(time.time())
    lines = ["# Memory", "", "Long-term facts about the user.", ""]
    for i in range(200):
        lines.append(f"- {rng.choice(FACTS)} (variant {i}) [preference] "
                     f"<!-- id:f{i:05d} updated:{now - i * 60} -->")
    (root / "Pilot" / "Memory.md").write_text("\n".join(lines) + "\n", encoding="utf-8")


def _stats(samples: list[float]) -> tuple[float, float]:
    samples = sorted(samples)
    return statistics.median(samples), samples[int(len(samples) * 0.95) - 1]


async def _mcp_rounds(vault: Path, calls: int) -> dict[str, tuple[float, float]]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + env.get("PYTHONPATH", "")
    params = StdioServerParameters(command=sys.executable, env=env,
                                   args=["-m", "memvault", "--vault", str(vault), "serve",
                                         "--no-watch"])
    rng = random.Random(3)
    results: dict[str, tuple[float, float]] = {}
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            names = {t.name for t in (await session.list_tools()).tools}
            plan = [("proposal_list (baseline)", "proposal_list", lambda: {})]
            if "memory_context" in names:
                plan.append(("memory_context", "memory_context",
                             lambda: {"request": "compare venues for a swap"}))
            if "memory_search" in names:
                plan.append(("memory_search", "memory_search",
                             lambda: {"query": f"{rng.choice(WORDS)} {rng.choice(WORDS)}",
                                      "limit": 10}))
            for label, tool, args in plan:
                first = await session.call_tool(tool, args())  # warm-up (index build)
                if first.is_error:
                    raise SystemExit(f"{tool} failed: {first.content[0].text}")
                samples = []
                for _ in range(calls):
                    t0 = time.perf_counter()
                    result = await session.call_tool(tool, args())
                    samples.append((time.perf_counter() - t0) * 1000)
                    assert not result.is_error
                results[label] = _stats(samples)
            if "memory_search" in names:
                # the same search right after a hand edit: the index is refreshed first
                note = vault / "Area00" / "Topic0" / "Note 00000.md"
                samples = []
                for i in range(max(20, calls // 4)):
                    note.write_text(note.read_text() + f"\nedit {i} meadow\n")
                    t0 = time.perf_counter()
                    result = await session.call_tool("memory_search", {"query": "meadow"})
                    samples.append((time.perf_counter() - t0) * 1000)
                    assert not result.is_error
                results["memory_search after a note edit (refresh)"] = _stats(samples)
    return results


def bench_mcp(notes: int, calls: int) -> list[str]:
    import anyio

    tmp = Path(tempfile.mkdtemp(prefix="bench-mcp-"))
    try:
        t0 = time.perf_counter()
        make_vault(tmp / "vault", notes)
        gen = time.perf_counter() - t0
        results = anyio.run(_mcp_rounds, tmp / "vault", calls)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    base = results["proposal_list (baseline)"][0]
    rows = [f"MCP over stdio, {notes:,} notes (generated in {gen:.1f} s), {calls} calls each:",
            "", "| tool | median ms | p95 ms | × baseline | target |", "|---|---|---|---|---|"]
    for label, (median, p95) in results.items():
        target = "≤ 50 ms" if label in ("memory_context", "memory_search") else "—"
        rows.append(f"| {label} | {median:.2f} | {p95:.2f} | {median / base:.1f}× | {target} |")
    return rows


def bench_hosted(docs: int = 4096, size: int = 4096) -> list[str]:
    from memvault.hosted import HostedMemory

    tmp = Path(tempfile.mkdtemp(prefix="bench-hosted-"))
    env = {"SESSION_SECRET": "bench-" + "x" * 40}
    rng = random.Random(5)
    payloads = [(f"doc-{i}", bytes(rng.getrandbits(8) for _ in range(size)), "preference")
                for i in range(docs)]
    try:
        # baseline: the same bytes into a plain SQLite table, same pragmas, one transaction
        conn = sqlite3.connect(str(tmp / "plain.sqlite"), isolation_level=None)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=FULL")
        conn.execute("CREATE TABLE d (p BLOB, k TEXT, v BLOB, UNIQUE (p, k))")
        t0 = time.perf_counter()
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany("INSERT INTO d VALUES (?,?,?)", [(b"p", d, c) for d, c, _ in payloads])
        conn.execute("COMMIT")
        plain_store = time.perf_counter() - t0
        t0 = time.perf_counter()
        loaded = conn.execute("SELECT k, v FROM d WHERE p=?", (b"p",)).fetchall()
        plain_load = time.perf_counter() - t0
        assert len(loaded) == docs
        conn.close()

        with HostedMemory.open(tmp / "hosted.sqlite", environ=env) as hm:
            t0 = time.perf_counter()
            hm.put_many("user-1", payloads)
            enc_store = time.perf_counter() - t0
            t0 = time.perf_counter()
            docs_back = hm.load_all("user-1")
            dec_load = time.perf_counter() - t0
            assert len(docs_back) == docs
            single_put, single_get = [], []
            t_all = time.perf_counter()
            for doc_id, content, kind in payloads:
                t0 = time.perf_counter()
                hm.put("user-2", doc_id, content, kind=kind)
                single_put.append((time.perf_counter() - t0) * 1000)
            each_store = time.perf_counter() - t_all
            t_all = time.perf_counter()
            for doc_id, _, _ in payloads:
                t0 = time.perf_counter()
                hm.get("user-2", doc_id)
                single_get.append((time.perf_counter() - t0) * 1000)
            each_load = time.perf_counter() - t_all
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return [
        f"Hosted mode, {docs:,} documents of {size // 1024} KB, one principal:", "",
        "| operation | time | baseline (plain SQLite, no encryption) | × baseline | target |",
        "|---|---|---|---|---|",
        f"| encrypt + store (put_many) | {enc_store * 1000:.0f} ms | "
        f"{plain_store * 1000:.0f} ms | {enc_store / plain_store:.1f}× | < 2 s |",
        f"| load + decrypt (load_all) | {dec_load * 1000:.0f} ms | "
        f"{plain_load * 1000:.0f} ms | {dec_load / plain_load:.1f}× | < 2 s |",
        f"| {docs:,} × put, one transaction each | {each_store * 1000:.0f} ms "
        f"(median {statistics.median(single_put):.2f} ms) | — | — | < 2 s |",
        f"| {docs:,} × get | {each_load * 1000:.0f} ms "
        f"(median {statistics.median(single_get):.2f} ms) | — | — | < 2 s |",
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--notes", type=int, default=10_000)
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--skip-mcp", action="store_true")
    ap.add_argument("--skip-hosted", action="store_true")
    args = ap.parse_args()
    print(f"python {platform.python_version()} on {platform.system()} {platform.machine()}, "
          f"{os.cpu_count()} CPUs\n")
    if not args.skip_hosted:
        print("\n".join(bench_hosted()) + "\n")
    if not args.skip_mcp:
        print("\n".join(bench_mcp(args.notes, args.calls)))


if __name__ == "__main__":
    main()
