#!/usr/bin/env python
"""Recall benchmark: the search index and the context block on generated vaults.

For each vault size (default 1,000 and 10,000 notes of a few KB, with frontmatter,
tags, aliases and wikilinks) plus a Memory.md of 2,000 facts and a Lessons.md of 500
lessons, it measures in the same run:

- baselines: `rg` over the same files (grep -r when rg is missing) and `cat` of all files;
- full index build (`memvault index rebuild`, in-process);
- incremental refresh after one note changed (in-process);
- a search: cold (a new `memvault search --json` process, next to `memvault --version`,
  the interpreter + CLI start-up floor) and warm (in-process, with the pre-search
  refresh, and the query alone);
- `context` with 2,000 facts and 500 lessons (in-process).

Usage:  python benchmarks/bench_recall.py [--sizes 1000 10000] [--json out.json]
Run by hand or as a CI smoke step; never a pass/fail unit test. Results: docs/performance.md.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

QUERY = "zeppelin"
VOCAB = ("market maker liquidity pool swap route venue fee slippage gas token bridge "
         "network wallet approval limit order price chart research note summary risk "
         "evidence table detail compare position staking yield vault ledger trade "
         "journal reflection memory lesson preference answer concise context").split()


def generate_vault(root: Path, notes: int, facts: int = 2000, lessons: int = 500,
                   seed: int = 7) -> None:
    from memvault.services.setup import init_vault

    rng = random.Random(seed)
    init_vault(root)
    for i in range(notes):
        folder = root / f"Area {i % 25:02d}" / f"Topic {i % 7}"
        folder.mkdir(parents=True, exist_ok=True)
        words = [rng.choice(VOCAB) for _ in range(rng.randint(350, 650))]
        if i % 97 == 0:
            words.insert(rng.randrange(len(words)), QUERY)
        paras = [" ".join(words[k:k + 60]) for k in range(0, len(words), 60)]
        links = " ".join(f"[[Note {rng.randrange(notes):05d}]]" for _ in range(3))
        tags = f"#topic/{rng.choice(VOCAB)} #{rng.choice(VOCAB)}"
        (folder / f"Note {i:05d}.md").write_text(
            f"---\naliases: [N{i}, Alias {i}]\ntags: [bench, area{i % 25}]\n"
            f"created: 2026-01-{1 + i % 28:02d}\n---\n# Note {i}\n\n"
            + "\n\n".join(paras) + f"\n\nSee {links} {tags}\n", encoding="utf-8")
    cats = ("identity", "project", "instruction", "other", "communication", "presentation",
            "workflow", "research")
    t0 = 1_784_000_000
    fact_lines = [f"- Fact {i} about {rng.choice(VOCAB)} and {rng.choice(VOCAB)} "
                  f"[{cats[i % len(cats)]}] <!-- id:f{i:05d} updated:{t0 + i} -->"
                  for i in range(facts)]
    (root / "Pilot" / "Memory.md").write_text("# Memory\n\n" + "\n".join(fact_lines) + "\n",
                                              encoding="utf-8")
    lcats = ("response-detail", "evidence-layout", "approval-explanations",
             "comparison-emphasis", "risk-posture")
    lesson_lines = [f"- Lesson {i}: {rng.choice(VOCAB)} first [{lcats[i % 5]}] "
                    f"<!-- id:l{i:05d} updated:{t0 + i} evidence:ev{i} -->"
                    for i in range(lessons)]
    (root / "Pilot" / "Lessons.md").write_text("# Lessons\n\n" + "\n".join(lesson_lines) + "\n",
                                               encoding="utf-8")


def median_time(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def run(cmd: list[str]) -> None:
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)


def bench_size(notes: int, workdir: Path) -> dict[str, float | int | str]:
    from memvault import Vault

    root = workdir / f"vault{notes}"
    generate_vault(root, notes)
    md_files = [str(p) for p in root.rglob("*.md") if ".memvault" not in p.parts]
    total_bytes = sum(os.path.getsize(p) for p in md_files)
    out: dict[str, float | int | str] = {"notes": notes, "mb": round(total_bytes / 1e6, 1)}

    rg = shutil.which("rg")
    grep_cmd = [rg, "-c", QUERY, str(root)] if rg else ["grep", "-rc", QUERY, str(root)]
    out["baseline_tool"] = "rg" if rg else "grep -r (rg not installed)"
    run(grep_cmd)  # warm the page cache for everyone
    out["rg_s"] = median_time(lambda: run(grep_cmd), 5)
    out["cat_s"] = median_time(lambda: run(["sh", "-c", f"find '{root}' -name '*.md' "
                                                         "-print0 | xargs -0 cat >/dev/null"]),
                               3)

    vault = Vault.open(root)
    start = time.perf_counter()
    built = vault.search.rebuild()
    out["index_build_s"] = time.perf_counter() - start
    out["indexed"] = built.added

    target = Path(md_files[len(md_files) // 2])

    def change_and_refresh() -> None:
        with open(target, "a", encoding="utf-8") as fh:
            fh.write("one more line\n")
        start_ns = time.time_ns()
        os.utime(target, ns=(start_ns, start_ns))
        result = vault.search.refresh()
        assert result.updated == 1, result

    times = []
    for _ in range(5):
        start = time.perf_counter()
        change_and_refresh()
        times.append(time.perf_counter() - start)
    out["refresh_one_change_s"] = statistics.median(times)
    out["refresh_nothing_s"] = median_time(vault.search.refresh, 5)

    cmd = [sys.executable, "-m", "memvault", "--vault", str(root), "search", "--json", QUERY]
    run(cmd)
    out["search_cold_s"] = median_time(lambda: run(cmd), 5)
    floor = [sys.executable, "-m", "memvault", "--version"]
    out["cli_floor_s"] = median_time(lambda: run(floor), 5)  # interpreter + CLI start-up
    out["search_warm_s"] = median_time(lambda: vault.search.search(QUERY), 10)
    from memvault.index.query import search_notes

    conn = vault.search.store().connection()
    out["query_only_s"] = median_time(lambda: search_notes(conn, QUERY), 10)
    out["search_typo_warm_s"] = median_time(lambda: vault.search.search("Alais 12"), 5)
    out["context_s"] = median_time(lambda: vault.context.build("give me full detail"), 10)
    block = vault.context.build("give me full detail")
    out["context_selected"] = len(block.selected)
    out["context_manifest"] = len(block.manifest)
    out["cold_vs_rg"] = out["search_cold_s"] / out["rg_s"]
    vault.search.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--keep", action="store_true", help="keep the generated vaults")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="memvault-bench-recall-"))
    results = []
    try:
        for size in args.sizes:
            print(f"generating and measuring {size} notes ...", file=sys.stderr)
            results.append(bench_size(size, workdir))
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    keys = ["notes", "mb", "rg_s", "cat_s", "index_build_s", "refresh_one_change_s",
            "refresh_nothing_s", "search_cold_s", "cli_floor_s", "cold_vs_rg", "search_warm_s",
            "query_only_s", "search_typo_warm_s", "context_s"]
    print("| " + " | ".join(keys) + " |")
    print("|" + "---|" * len(keys))
    for r in results:
        print("| " + " | ".join(f"{r[k]:.3f}" if isinstance(r[k], float) else str(r[k])
                                for k in keys) + " |")
    print(f"baseline: {results[0]['baseline_tool']}; cpus: {os.cpu_count()}; "
          f"python {sys.version.split()[0]}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
