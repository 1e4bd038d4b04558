#!/usr/bin/env python3
"""Benchmark the vault core: Memory.md parsing and cold `memvault` processes.

Generates a vault whose Memory.md holds N realistic facts (several categories, headings,
and about 5 % hand-edited lines: no metadata, `*` markers, odd-cased categories, extra
keys, block ids, nested children), then measures for each N:

- cold `memvault memory list --json` (a new process each run; median of --runs),
- cold `memvault remember "<new text>"` (median),
- in-process `parse_bullets(data)` of the file's bytes (median),
- peak RSS of the cold `memory list --json` process (via os.wait4 on that child),

each next to a cold `python -c "import typer"` measured in the same run, and prints a
Markdown table with the ratio and the target. Nothing is timed as a pass/fail test; this
script reports numbers (see docs/performance.md).

    python benchmarks/bench_core.py                 # N = 2,000 and 10,000, 7 runs each
    python benchmarks/bench_core.py --sizes 500 --runs 5
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CATEGORIES = ("identity", "preference", "project", "instruction", "other", "communication",
              "presentation", "workflow", "research")
SUBJECTS = ("concise answers", "tables for numbers", "gas costs in USD", "Rust examples",
            "morning meetings", "dark mode screenshots", "wikilinks to sources", "ETH/USDC",
            "the Aurora project", "Lisbon time", "metric units", "short commit messages",
            "Base and Arbitrum", "Uniswap routes", "one-line summaries", "plain English")
VERBS = ("I prefer", "I usually want", "Please avoid", "Always use", "I work on",
         "Remember that I like", "Never suggest", "I research", "Show me")
TAILS = ("when I am on my phone", "for anything above 100 USD", "in code reviews",
         "unless I ask otherwise", "on weekdays", "when comparing options", "",
         "because it saves me time", "in [[Journal]] notes", "with a source link")


def fact_line(i: int, rng: random.Random, now: int) -> list[str]:
    """One fact (sometimes with a nested child), in one of the hand-edited variants."""
    text = f"{rng.choice(VERBS)} {rng.choice(SUBJECTS)} {rng.choice(TAILS)}".strip()
    text = f"{text} (note {i})"
    cat = rng.choice(CATEGORIES)
    ident = f"b{i:05d}"
    updated = now - rng.randrange(0, 365 * 86400)
    roll = rng.random()
    if roll < 0.01:
        return [f"- {text}"]  # hand-written: no metadata at all
    if roll < 0.02:
        return [f"* {text} [{cat}] <!-- updated:{updated} src:chat id:{ident} -->"]
    if roll < 0.03:
        return [f"- {text} [{cat.title()}] <!-- id:{ident} updated:{updated} -->"]
    if roll < 0.04:
        return [f"- {text} [{cat}] <!-- id:{ident} updated:{updated} --> ^blk{i}"]
    if roll < 0.05:
        return [f"- {text} [{cat}] <!-- id:{ident} updated:{updated} -->",
                f"\t- a nested note under fact {i}, kept as written"]
    return [f"- {text} [{cat}] <!-- id:{ident} updated:{updated} -->"]


def memory_bytes(n: int, seed: int = 7) -> bytes:
    rng = random.Random(seed)
    now = 1_796_000_000
    lines = ["# Memory", "",
             "Long-term facts about the user. Edit a line to correct it; delete a line to "
             "forget it.", ""]
    for i in range(n):
        if i % 250 == 0:
            lines += [f"## Section {i // 250 + 1}", ""]
        lines += fact_line(i, rng, now)
        if i % 250 == 249:
            lines.append("")
    return ("\n".join(lines) + "\n").encode("utf-8")


def memvault_command() -> tuple[list[str], str]:
    script = Path(sys.executable).with_name("memvault")
    if script.exists():
        return [str(script)], str(script.name)
    found = shutil.which("memvault")
    if found:
        return [found], "memvault"
    return [sys.executable, "-m", "memvault"], "python -m memvault"


def run_cold(cmd: list[str]) -> tuple[float, int]:
    """Run a command once; return (wall seconds, peak RSS in MB of that process)."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _pid, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode() if proc.stderr else ""
    if proc.stderr:
        proc.stderr.close()
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}): {err}")
    rss_kb = usage.ru_maxrss  # kilobytes on Linux
    if sys.platform == "darwin":
        rss_kb //= 1024  # bytes on macOS
    return elapsed, rss_kb // 1024


def paired_cold(cmd_for_run, runs: int) -> tuple[float, int, float, int]:
    """Median time and peak RSS of a command and of the `import typer` baseline.

    The two are run alternately (baseline, command, baseline, ...) so that both see the
    same machine load; the ratio is what the targets are about.
    """
    baseline = [sys.executable, "-c", "import typer"]
    run_cold(cmd_for_run(-1))  # warm the OS file cache; not counted
    run_cold(baseline)
    times, peaks, base_times, base_peaks = [], [], [], []
    for i in range(runs):
        t, rss = run_cold(baseline)
        base_times.append(t)
        base_peaks.append(rss)
        t, rss = run_cold(cmd_for_run(i))
        times.append(t)
        peaks.append(rss)
    return (statistics.median(times), max(peaks), statistics.median(base_times),
            max(base_peaks))


def median_parse(data: bytes, runs: int) -> tuple[float, float, int]:
    """Median wall time and median CPU time of parse_bullets(data), and the item count."""
    from memvault.core.bullets import parse_bullets

    count = len(parse_bullets(data).items)
    times, cpu_times = [], []
    for _ in range(max(3 * runs, 15)):
        start, cpu_start = time.perf_counter(), time.process_time()
        parse_bullets(data)
        times.append(time.perf_counter() - start)
        cpu_times.append(time.process_time() - cpu_start)
    return statistics.median(times), statistics.median(cpu_times), count


def prepare(root: Path, n: int, runs: int) -> None:
    """Child-process step: create the vault, write Memory.md, time the in-process parse."""
    from memvault.services.setup import init_vault

    init_vault(root)
    data = memory_bytes(n)
    (root / "Pilot" / "Memory.md").write_bytes(data)
    parse_t, parse_cpu, items = median_parse(data, runs)
    print(parse_t, items, len(data), parse_cpu)


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2000, 10000])
    parser.add_argument("--runs", type=int, default=7, help="cold runs per measurement (≥5)")
    parser.add_argument("--prepare", nargs=2, metavar=("VAULT", "N"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.prepare:
        prepare(Path(args.prepare[0]), int(args.prepare[1]), args.runs)
        return

    mv, mv_label = memvault_command()
    rows = []
    with tempfile.TemporaryDirectory(prefix="memvault-bench-") as tmp:
        env_home = Path(tmp) / "home"
        env_home.mkdir()
        os.environ["HOME"] = str(env_home)
        os.environ["XDG_DATA_HOME"] = str(env_home / "share")
        for key in [k for k in os.environ if k.startswith("MEMVAULT_")]:
            del os.environ[key]
        # Cache bytecode (in a temp folder, never in the source tree) as a normal install
        # does; with PYTHONDONTWRITEBYTECODE set, every cold run would recompile memvault's
        # sources while typer's come precompiled from site-packages.
        os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
        os.environ["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        for n in args.sizes:
            root = Path(tmp) / f"vault-{n}"
            # Generating and parsing happen in a child process: this driver stays small,
            # so the peak RSS the kernel reports for each measured child is the child's own
            # (a child's ru_maxrss also counts the parent's memory at fork time).
            prepared = subprocess.run(
                [sys.executable, __file__, "--prepare", str(root), str(n), "--runs",
                 str(args.runs)], check=True, capture_output=True, text=True).stdout.split()
            parse_t, items, size = float(prepared[0]), int(prepared[1]), int(prepared[2])
            parse_cpu = float(prepared[3])
            list_t, list_rss, base_list_t, base_rss = paired_cold(
                lambda i, root=root: [*mv, "--vault", str(root), "memory", "list", "--json"],
                args.runs)
            remember_t, remember_rss, base_rem_t, _ = paired_cold(
                lambda i, root=root, n=n: [*mv, "--vault", str(root), "remember",
                                           f"Benchmark fact number {n}-{i + 1} about tea",
                                           "--category", "preference"], args.runs)
            rows.append(dict(n=n, items=items, size=size, parse=parse_t, parse_cpu=parse_cpu,
                             list=list_t,
                             list_rss=list_rss, base_list=base_list_t, base_rss=base_rss,
                             remember=remember_t, remember_rss=remember_rss,
                             base_rem=base_rem_t))

    print(f"memvault core benchmark · {platform.python_implementation()} "
          f"{platform.python_version()} · {platform.system()} {platform.machine()} · "
          f"{os.cpu_count()} CPUs · command: `{mv_label}` · median of {args.runs} cold runs, "
          "each alternated with a cold `python -c \"import typer\"` baseline run; bytecode "
          "cached as in a normal install\n")
    print("| facts | measurement | value | `import typer` | ratio | target | met |")
    print("| ---: | --- | ---: | ---: | ---: | --- | :---: |")
    for r in rows:
        n = r["n"]
        ratio = r["list"] / r["base_list"]
        target = "≤ 3× at 2,000 facts" if n == 2000 else "—"
        met = ("yes" if ratio <= 3 else "NO") if n == 2000 else ""
        print(f"| {n:,} | cold `memory list --json` | {ms(r['list'])} | {ms(r['base_list'])} | "
              f"{ratio:.2f}× | {target} | {met} |")
        print(f"| {n:,} | cold `remember` | {ms(r['remember'])} | {ms(r['base_rem'])} | "
              f"{r['remember'] / r['base_rem']:.2f}× | — | |")
        target = "< 100 ms at 10,000 facts" if n == 10000 else "—"
        met = ("yes" if r["parse"] < 0.1 else "NO") if n == 10000 else ""
        print(f"| {n:,} | in-process parse ({r['items']:,} items, {r['size'] / 1024:.0f} KiB) | "
              f"{r['parse'] * 1000:.1f} ms | {ms(r['base_list'])} | "
              f"{r['parse'] / r['base_list']:.2f}× | {target} | {met} |")
        print(f"| {n:,} | in-process parse, CPU time | {r['parse_cpu'] * 1000:.1f} ms | "
              f"— | — | (less sensitive to machine load) | |")
        print(f"| {n:,} | peak RSS, `memory list --json` | {r['list_rss']} MB | "
              f"{r['base_rss']} MB | {r['list_rss'] / max(r['base_rss'], 1):.2f}× | < 80 MB | "
              f"{'yes' if r['list_rss'] < 80 else 'NO'} |")
        print(f"| {n:,} | peak RSS, `remember` | {r['remember_rss']} MB | {r['base_rss']} MB | "
              f"{r['remember_rss'] / max(r['base_rss'], 1):.2f}× | — | |")


if __name__ == "__main__":
    main()
