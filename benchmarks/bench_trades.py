#!/usr/bin/env python3
"""Benchmark trade recording and `memvault learn`.

Measures, in one run and next to baselines measured in the same run (a cold
`python -c pass` and a cold `python -c "import typer"`):

- recording trades one process each: `memvault trade record FILE` per trade (default
  learning on, as a user would run it). By default a sample of --sample processes is timed
  and the total for --trades is extrapolated (said so in the output); --full runs all;
- recording --trades trades in ONE batch (`trade record` of a JSON array): total, and
  the cost per trade after subtracting the same command with one trade;
- `memvault learn` over --events trade events in the experience journal (a cold process,
  and `vault.learning.run()` in-process).

Nothing is pass/fail; the numbers go to docs/performance.md ("Trades and learning").

    python benchmarks/bench_trades.py                       # 1,000 trades, 10,000 events
    python benchmarks/bench_trades.py --full                # 1,000 processes for real
    python benchmarks/bench_trades.py --trades 200 --events 2000 --sample 20
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PAIRS = [("ETH", "USDC"), ("USDC", "ETH"), ("WBTC", "ETH"), ("ETH", "DAI"), ("ARB", "USDC")]
START = dt.datetime(2026, 1, 1, 8, 0, tzinfo=dt.UTC)


def trade(n: int) -> dict[str, object]:
    a, b = PAIRS[n % len(PAIRS)]
    when = START + dt.timedelta(minutes=37 * n)
    t: dict[str, object] = {
        "hash": "0x" + hashlib.sha256(f"bench-{n}".encode()).hexdigest(),
        "network": ("base", "arbitrum", "ethereum")[n % 3], "wallet": "0x7c3f5e2a91b04d6e8a2c",
        "timestamp": when.strftime("%Y-%m-%dT%H:%M:%SZ"), "status": "validated",
        "venue": "Uniswap", "asset_in": a, "amount_in": f"{1 + n % 7}.25", "asset_out": b,
        "amount_out": f"{3400 + n % 90}.10", "gas": "0.00002", "gas_asset": "ETH",
        "slippage_bps": str(n % 30)}
    if n % 4:
        t["fill_price"] = f"{3400 + n % 50}.5"
    return t


def run(cmd: list[str], env: dict[str, str] | None = None) -> float:
    t0 = time.perf_counter()
    res = subprocess.run(cmd, capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - t0
    if res.returncode != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}\n{res.stderr}")
    return elapsed


def median_of(cmd: list[str], runs: int) -> float:
    return statistics.median(run(cmd) for _ in range(runs))


def new_vault(base: Path, name: str) -> Path:
    root = base / name
    run([sys.executable, "-m", "memvault", "init", str(root)])
    return root


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trades", type=int, default=1000)
    ap.add_argument("--events", type=int, default=10_000)
    ap.add_argument("--sample", type=int, default=100, help="processes timed when not --full")
    ap.add_argument("--full", action="store_true", help="run one process per trade, all of them")
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    py = sys.executable
    mv = [py, "-m", "memvault"]

    with tempfile.TemporaryDirectory(prefix="mv-bench-trades-") as tmp:
        base = Path(tmp)
        startup = median_of([py, "-c", "pass"], args.runs)
        typer_import = median_of([py, "-c", "import typer"], args.runs)
        version = median_of([*mv, "--version"], args.runs)

        # -- one process per trade ---------------------------------------------------
        inputs = base / "inputs"
        inputs.mkdir()
        trades = [trade(n) for n in range(args.trades)]
        for n, t in enumerate(trades):
            (inputs / f"{n:05d}.json").write_text(json.dumps(t))
        vault = new_vault(base, "per-process")
        count = args.trades if args.full else min(args.sample, args.trades)
        times = [run([*mv, "--vault", str(vault), "trade", "record", str(inputs / f"{n:05d}.json")])
                 for n in range(count)]
        per_process = statistics.mean(times)
        total_processes = per_process * args.trades

        # -- one batch -----------------------------------------------------------------
        batch_file = base / "batch.json"
        batch_file.write_text(json.dumps(trades))
        one_file = base / "one.json"
        one_file.write_text(json.dumps([trades[0]]))
        batch_times, one_times = [], []
        for i in range(max(1, args.runs // 2)):
            v = new_vault(base, f"batch-{i}")
            batch_times.append(run([*mv, "--vault", str(v), "trade", "record", str(batch_file)]))
            v1 = new_vault(base, f"one-{i}")
            one_times.append(run([*mv, "--vault", str(v1), "trade", "record", str(one_file)]))
        batch_total = statistics.median(batch_times)
        one_total = statistics.median(one_times)
        per_trade_batch = (batch_total - one_total) / max(1, args.trades - 1)

        # -- learn over N journal events -----------------------------------------------
        lv = new_vault(base, "learn")
        lines = []
        for n in range(args.events):
            t = trade(n)
            ts = int(dt.datetime.fromisoformat(str(t["timestamp"]).replace("Z", "+00:00"))
                     .timestamp())
            lines.append(json.dumps({"id": t["hash"], "ts": ts, "type": "trade",
                                     "scope": "default", "date": str(t["timestamp"])[:10],
                                     "fingerprint": "x", "trade": t},
                                    separators=(",", ":")))
        (lv / ".memvault" / "events.jsonl").write_text("\n".join(lines) + "\n")
        learn_first = run([*mv, "--vault", str(lv), "learn", "--json"])
        learn_cold = median_of([*mv, "--vault", str(lv), "learn", "--json"], args.runs)
        sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))
        from memvault import Vault

        in_process = []
        for _ in range(args.runs):
            t0 = time.perf_counter()
            Vault.open(lv).learning.run()
            in_process.append(time.perf_counter() - t0)
        learn_inproc = statistics.median(in_process)

    ms = 1000
    print(f"# Trades and learning — {platform.python_implementation()} "
          f"{platform.python_version()}, {platform.system()} {platform.machine()}, "
          f"{os.cpu_count()} CPUs\n")
    print("| measurement | time | vs `python -c \"import typer\"` | target |")
    print("|---|---|---|---|")
    print(f"| baseline: cold `python -c pass` | {startup * ms:.0f} ms | "
          f"{startup / typer_import:.2f}× | — |")
    print(f"| baseline: cold `python -c \"import typer\"` | {typer_import * ms:.0f} ms "
          "| 1.00× | — |")
    print(f"| cold `memvault --version` | {version * ms:.0f} ms "
          f"| {version / typer_import:.2f}× | — |")
    how = "all processes timed" if args.full else \
        f"mean of {count} processes, extrapolated to {args.trades}"
    print(f"| `trade record` one process per trade: per trade | {per_process * ms:.0f} ms | "
          f"{per_process / typer_import:.2f}× | — |")
    print(f"| ... {args.trades} trades, total ({how}) | {total_processes:.1f} s | — | — |")
    print(f"| `trade record` batch of {args.trades}: whole command | {batch_total * ms:.0f} ms "
          f"| {batch_total / typer_import:.2f}× | — |")
    print(f"| ... cost per trade in the batch (minus a 1-trade run) | "
          f"{per_trade_batch * ms:.2f} ms | — | < 5 ms |")
    print(f"| `memvault learn` over {args.events:,} events: first run (proposes) | "
          f"{learn_first * ms:.0f} ms | {learn_first / typer_import:.2f}× | < 1 s |")
    print(f"| ... cold process, nothing new (median) | {learn_cold * ms:.0f} ms | "
          f"{learn_cold / typer_import:.2f}× | < 1 s |")
    print(f"| ... in-process `vault.learning.run()` (median) | {learn_inproc * ms:.0f} ms | — "
          f"| — |")


if __name__ == "__main__":
    main()
