#!/usr/bin/env python3
"""Benchmark the learning loop: built-in extraction throughput and review/accept cost.

1. Extraction: 1,000 chat turns (the labelled evaluation set, cycled, with varied
   padding so no two turns are identical) through the built-in extractor in-process
   (`extract_statements(user_words(turn))`). Baseline in the same run: splitting the same
   turns into sentences only (`split_statements`), the floor any extractor pays.
   Target: >= 500 turns/s.
2. Review: an inbox of N proposals (default 500, written with one batched import), then
   `proposals.list()` and accepting every proposal one by one with
   `ProposalService.accept` (each accept is two atomic file writes plus journal events).
   Baseline in the same run: a raw read + atomic write of the same inbox file per
   operation (the I/O floor of any edit).

Prints a Markdown table. Nothing is pass/fail; see docs/performance.md.

    python benchmarks/bench_learning.py [--turns 1000] [--inbox 500]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

PADDING = ("", "Thanks! ", "Ok. ", "Quick one. ", "Hi there. ", "Also, ", "Right. ")


def load_turns(n: int) -> list[object]:
    cases = [json.loads(line)["turn"] for line in
             (ROOT / "tests" / "data" / "extraction_eval.jsonl").read_text().splitlines()
             if line.strip()]
    turns: list[object] = []
    i = 0
    while len(turns) < n:
        turn = cases[i % len(cases)]
        pad = PADDING[(i // len(cases)) % len(PADDING)]
        tag = f" Ref {i}."  # makes every turn unique without hiding a statement
        if isinstance(turn, str):
            turns.append(pad + turn + tag)
        elif isinstance(turn, dict):
            turns.append({**turn, "user": pad + turn["user"] + tag})
        else:
            turns.append([{"role": "user", "content": pad + tag}] + list(turn))
        i += 1
    return turns


def bench_extraction(n: int, runs: int = 5) -> dict[str, float]:
    from memvault.core.extractor import extract_statements, split_statements, user_words

    turns = load_turns(n)
    extract_times, base_times = [], []
    found = 0
    for _ in range(runs):
        t0 = time.perf_counter()
        for t in turns:
            split_statements(user_words(t))
        base_times.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        found = sum(len(extract_statements(user_words(t))) for t in turns)
        extract_times.append(time.perf_counter() - t0)
    ext = statistics.median(extract_times)
    base = statistics.median(base_times)
    return {"turns": n, "seconds": ext, "turns_per_s": n / ext, "baseline_s": base,
            "baseline_turns_per_s": n / base, "ratio": ext / base, "statements": found}


def bench_review(n: int) -> dict[str, float]:
    from memvault import Vault
    from memvault.backends.base import ANY
    from memvault.services.setup import init_vault

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "vault"
        init_vault(root)
        vault = Vault.open(root)
        items = [{"content": f"I prefer option number {i} for topic {i * 7 % 97}",
                  "category": "preference"} for i in range(n)]
        t0 = time.perf_counter()
        plan = vault.transfer.plan(json.dumps(items).encode(), "bench.json")
        vault.transfer.apply(plan)
        import_s = time.perf_counter() - t0

        t0 = time.perf_counter()
        proposals = vault.proposals.list()
        list_s = time.perf_counter() - t0
        assert len(proposals) == n

        inbox = vault.layout.inbox
        data = vault.backend.read(inbox).data  # type: ignore[union-attr]
        t0 = time.perf_counter()
        for _ in range(n):
            blob = vault.backend.read(inbox)
            vault.backend.write(inbox, blob.data if blob else data, expected=ANY)
        base_s = time.perf_counter() - t0

        t0 = time.perf_counter()
        for p in proposals:
            vault.proposals.accept(p.id)
        accept_s = time.perf_counter() - t0
        assert vault.proposals.list() == [] and len(vault.memory.all()) == n
    return {"inbox": n, "import_s": import_s, "list_s": list_s, "accept_total_s": accept_s,
            "accept_ms": accept_s / n * 1000, "baseline_ms": base_s / n * 1000,
            "ratio": accept_s / base_s}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--turns", type=int, default=1000)
    ap.add_argument("--inbox", type=int, default=500)
    args = ap.parse_args()
    ex = bench_extraction(args.turns)
    rv = bench_review(args.inbox)
    print(f"Machine: {platform.platform()}, Python {platform.python_version()}\n")
    print("| measurement | result | baseline (same run) | ratio | target |")
    print("| --- | --- | --- | --- | --- |")
    print(f"| built-in extraction, {ex['turns']} turns in-process | "
          f"{ex['turns_per_s']:,.0f} turns/s ({ex['seconds'] * 1000:.0f} ms, "
          f"{ex['statements']} statements) | sentence split only: "
          f"{ex['baseline_turns_per_s']:,.0f} turns/s | {ex['ratio']:.1f}x | >= 500 turns/s |")
    print(f"| accept one proposal, inbox of {rv['inbox']} | {rv['accept_ms']:.2f} ms "
          f"(all {rv['inbox']}: {rv['accept_total_s']:.2f} s) | raw read + atomic write "
          f"of Inbox.md: {rv['baseline_ms']:.2f} ms | {rv['ratio']:.1f}x | - |")
    print(f"| list {rv['inbox']} proposals | {rv['list_s'] * 1000:.1f} ms | - | - | - |")
    print(f"| import {rv['inbox']} v1 items as proposals (batched) | "
          f"{rv['import_s'] * 1000:.0f} ms | - | - | - |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
