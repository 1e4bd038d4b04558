#!/usr/bin/env python
"""Recall benchmark: every row of the recall targets as a ratio to a baseline, in one run.

Generated vaults (notes of 3–4 KB: frontmatter with aliases and tags, `#nested/tags`,
wikilinks, ~500 words, in 25 × 7 folders; one note in 97 holds the word `zeppelin` and
one note holds `zanzibarquoka`), a Memory.md of 2,000 (or 10,000) facts and a Lessons.md
of 500 lessons. Baselines are measured in the same run: `python -c pass`,
`python -c "import sqlite3"`, `python -c "import typer"` (the CLI's old start-up cost,
the issue's reference; `import click` when typer is absent) and `rg -l WORD` over the
vault (grep -rl when rg is missing). Bytecode is compiled first (`compileall`), as a
normal install has it. Rows:

1. MCP `memory_context` (real `memvault serve` over stdio, the SDK's client) at 2,000
   and 10,000 facts: median time and result size, vs `proposal_list` on the same server,
   after the memory's first embedding (`memvault index embed`, timed);
2. cold CLI `context` (10,000 notes + 2,000 facts), cold `remember` and
   `memory list --all --json` at 10,000 facts, vs `import typer`;
3. cold `search --json` at each note count vs `rg -l`, and at 1,000 vs `import sqlite3`;
4. a refresh after touching every note's modification time, and one after `cp -a` of the
   vault (every change time new, no byte changed), vs a full rebuild;
5. MCP `memory_search` right after a note edit, `serve` with its watcher;
6. the index size vs the Markdown bytes;
7. a typo in a body word (`zanzibarqouka`): is the right note first?

8. the cold start-up rows again, alternated: every command and baseline once per round
   (`--rounds`, 15), medians with their range and the quartiles of per-round ratios.

Usage:  python benchmarks/bench_recall.py [--sizes 1000 10000 30000] [--rounds 15]
        [--json out.json]
        python benchmarks/bench_recall.py --only-facts      (row 1 and the memory rows of 2)
        python benchmarks/bench_recall.py --only-cold [--workdir DIR] [--rounds 15]
        [--rows search]
        (row 8 alone; with --workdir the generated vaults are kept there and reused;
        --rows keeps the commands whose name holds one of the words, and the baselines;
        `--rows remember memory` generates no note vaults)
Run by hand; never a pass/fail test. Results: docs/performance.md.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

QUERY = "zeppelin"
TYPO_WORD, TYPO_QUERY = "zanzibarquoka", "zanzibarqouka"
VOCAB = ("market maker liquidity pool swap route venue fee slippage gas token bridge "
         "network wallet approval limit order price chart research note summary risk "
         "evidence table detail compare position staking yield vault ledger trade "
         "journal reflection memory lesson preference answer concise context").split()
FACT_WORDS = ("tea coffee kayak violin sourdough compiler orchid marathon telescope pottery "
              "chess beekeeping Lisbon Porto Rust Python dentist invoice ferry garden").split()


def generate_notes(root: Path, notes: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    for i in range(notes):
        folder = root / f"Area {i % 25:02d}" / f"Topic {i % 7}"
        folder.mkdir(parents=True, exist_ok=True)
        words = [rng.choice(VOCAB) for _ in range(rng.randint(350, 650))]
        if i % 97 == 0:
            words.insert(rng.randrange(len(words)), QUERY)
        if i == notes // 2:
            words.insert(rng.randrange(len(words)), TYPO_WORD)
        paras = [" ".join(words[k:k + 60]) for k in range(0, len(words), 60)]
        links = " ".join(f"[[Note {rng.randrange(notes):05d}]]" for _ in range(3))
        tags = f"#topic/{rng.choice(VOCAB)} #{rng.choice(VOCAB)}"
        (folder / f"Note {i:05d}.md").write_text(
            f"---\naliases: [N{i}, Alias {i}]\ntags: [bench, area{i % 25}]\n"
            f"created: 2026-01-{1 + i % 28:02d}\n---\n# Note {i}\n\n"
            + "\n\n".join(paras) + f"\n\nSee {links} {tags}\n", encoding="utf-8")


def generate_memory(root: Path, facts: int, lessons: int = 500, seed: int = 7) -> None:
    rng = random.Random(seed)
    cats = ("identity", "project", "instruction", "other", "preference", "communication",
            "presentation", "workflow")
    t0 = 1_784_000_000
    lines = [f"- Fact {i}: the {rng.choice(FACT_WORDS)} plan mentions {rng.choice(VOCAB)} "
             f"and {rng.choice(FACT_WORDS)} [{cats[i % len(cats)]}] "
             f"<!-- id:f{i:05d} updated:{t0 + i} -->" for i in range(facts)]
    (root / "Pilot" / "Memory.md").write_text("# Memory\n\n" + "\n".join(lines) + "\n",
                                              encoding="utf-8")
    lcats = ("response-detail", "evidence-layout", "approval-explanations",
             "comparison-emphasis", "risk-posture")
    lesson_lines = [f"- Lesson {i}: {rng.choice(VOCAB)} first [{lcats[i % 5]}] "
                    f"<!-- id:l{i:05d} updated:{t0 + i} evidence:ev{i} -->"
                    for i in range(lessons)]
    (root / "Pilot" / "Lessons.md").write_text("# Lessons\n\n" + "\n".join(lesson_lines)
                                               + "\n", encoding="utf-8")


def make_vault(root: Path, notes: int, facts: int) -> None:
    from memvault.services.setup import init_vault

    init_vault(root)
    generate_notes(root, notes)
    generate_memory(root, facts)


def median_time(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def run(cmd: list[str], env: dict[str, str] | None = None) -> None:
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False,
                   env=env)


def cli(vault: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "memvault", "--vault", str(vault), *args]


def markdown_bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*.md") if ".memvault" not in p.parts)


def index_bytes(root: Path) -> int:
    base = root / ".memvault" / "index.sqlite"
    return sum(Path(f"{base}{s}").stat().st_size for s in ("", "-wal")
               if Path(f"{base}{s}").exists())


def baselines(repeat: int) -> dict[str, float]:
    py = sys.executable
    out = {"python_pass_s": median_time(lambda: run([py, "-c", "pass"]), repeat),
           "import_sqlite3_s": median_time(lambda: run([py, "-c", "import sqlite3"]), repeat)}
    try:
        import typer  # noqa: F401
        ref = "typer"
    except ImportError:
        ref = "click"
    out["import_ref"] = ref  # type: ignore[assignment]
    out["import_ref_s"] = median_time(lambda: run([py, "-c", f"import {ref}"]), repeat)
    out["version_s"] = median_time(lambda: run([py, "-m", "memvault", "--version"]), repeat)
    return out


def bench_notes(notes: int, workdir: Path, floor: dict[str, float]) -> dict[str, object]:
    from memvault import Vault

    root = workdir / f"vault{notes}"
    make_vault(root, notes, 2000)
    out: dict[str, object] = {"notes": notes, "md_mb": round(markdown_bytes(root) / 1e6, 1)}
    rg = shutil.which("rg")
    grep = [rg, "-l", QUERY, str(root)] if rg else ["grep", "-rl", QUERY, str(root)]
    out["baseline_tool"] = "rg -l" if rg else "grep -rl"
    run(grep)
    out["rg_s"] = median_time(lambda: run(grep), 5)

    vault = Vault.open(root)
    start = time.perf_counter()
    vault.search.rebuild()
    out["rebuild_s"] = time.perf_counter() - start
    vault.search.close()
    out["index_vs_md"] = index_bytes(root) / markdown_bytes(root)

    cmd = cli(root, "search", "--json", QUERY)
    run(cmd)
    out["search_cold_s"] = median_time(lambda: run(cmd), 5)
    out["search_vs_rg"] = out["search_cold_s"] / out["rg_s"]  # type: ignore[operator]
    out["search_vs_sqlite3"] = out["search_cold_s"] / floor["import_sqlite3_s"]  # type: ignore[operator]

    typo = subprocess.run(cli(root, "search", "--json", TYPO_QUERY), capture_output=True,
                          text=True, check=False)
    results = json.loads(typo.stdout or "{}").get("results", [])
    out["typo_first"] = bool(results) and results[0]["path"].endswith(
        f"Note {notes // 2:05d}.md")
    out["typo_cold_s"] = median_time(lambda: run(cli(root, "search", "--json", TYPO_QUERY)), 3)

    later = time.time_ns() + 10_000_000_000
    for path in root.rglob("*.md"):
        if ".memvault" not in path.parts:
            os.utime(path, ns=(later, later))
    vault = Vault.open(root)
    start = time.perf_counter()
    touched = vault.search.refresh()
    out["touched_refresh_s"] = time.perf_counter() - start
    out["touched_unchanged"] = touched.unchanged
    out["touched_vs_rebuild"] = out["touched_refresh_s"] / out["rebuild_s"]  # type: ignore[operator]
    vault.search.close()

    copy = workdir / f"copy{notes}"  # `cp -a`: times kept, every change time new
    subprocess.run(["cp", "-a", str(root), str(copy)], check=True)
    vault = Vault.open(copy)
    start = time.perf_counter()
    copied = vault.search.refresh()
    out["copied_refresh_s"] = time.perf_counter() - start
    out["copied_unchanged"] = copied.unchanged
    out["copied_vs_rebuild"] = out["copied_refresh_s"] / out["rebuild_s"]  # type: ignore[operator]
    vault.search.close()
    shutil.rmtree(copy, ignore_errors=True)

    if notes == 10_000:
        out["context_cold_s"] = median_time(lambda: run(cli(root, "context", "--json")), 5)
        req = cli(root, "context", "--json", "--request", "plan the kayak trip with Rust")
        run(req)
        out["context_request_cold_s"] = median_time(lambda: run(req), 5)
        out["context_vs_ref"] = out["context_cold_s"] / floor["import_ref_s"]  # type: ignore[operator]
        out["context_request_vs_ref"] = out["context_request_cold_s"] / floor["import_ref_s"]  # type: ignore[operator]
        import anyio

        out.update(anyio.run(mcp_after_edit, root))
    return out


def bench_facts(facts: int, workdir: Path, floor: dict[str, float]) -> dict[str, object]:
    import anyio

    root = workdir / f"facts{facts}"
    from memvault.services.setup import init_vault

    init_vault(root)
    generate_memory(root, facts)
    out: dict[str, object] = {"facts": facts}
    if facts == 10_000:
        listing = cli(root, "memory", "list", "--all", "--json")
        run(listing)
        out["list_cold_s"] = median_time(lambda: run(listing), 5)
        counter = iter(range(10_000))
        out["remember_cold_s"] = median_time(
            lambda: run(cli(root, "remember", f"bench fact number {next(counter)} xq",
                            "--category", "other")), 5)
        out["list_vs_ref"] = out["list_cold_s"] / floor["import_ref_s"]  # type: ignore[operator]
        out["remember_vs_ref"] = out["remember_cold_s"] / floor["import_ref_s"]  # type: ignore[operator]
    # the first embedding of the whole memory, at once (a ranking otherwise spreads it
    # over calls, ten seconds each, and ranks by words until it is done)
    started = time.perf_counter()
    run(cli(root, "index", "embed"))
    out["embed_all_s"] = time.perf_counter() - started
    out.update(anyio.run(mcp_context, root))
    return out


def _server(root: Path, *extra: str):  # type: ignore[no-untyped-def]
    from mcp import StdioServerParameters

    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + env.get("PYTHONPATH", "")
    return StdioServerParameters(command=sys.executable, env=env,
                                 args=["-m", "memvault", "--vault", str(root), "serve", *extra])


async def mcp_context(root: Path, calls: int = 40) -> dict[str, float]:
    from mcp import ClientSession
    from mcp.client.stdio import stdio_client

    out: dict[str, float] = {}
    async with stdio_client(_server(root)) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            plan = [("baseline", "proposal_list", {}),
                    ("context", "memory_context", {}),
                    ("context_request", "memory_context",
                     {"request": "which drink and which city do I like for the kayak trip?"})]
            for label, tool, args in plan:
                result = await session.call_tool(tool, args)  # warm-up (model, vectors)
                samples = []
                for _ in range(calls):
                    start = time.perf_counter()
                    result = await session.call_tool(tool, args)
                    samples.append(time.perf_counter() - start)
                out[f"mcp_{label}_ms"] = statistics.median(samples) * 1000
                if result.structured_content is not None:
                    out[f"mcp_{label}_kb"] = len(json.dumps(
                        result.structured_content, ensure_ascii=False,
                        separators=(",", ":")).encode()) / 1000
    out["mcp_context_vs_baseline"] = out["mcp_context_ms"] / out["mcp_baseline_ms"]
    return out


async def mcp_after_edit(root: Path, edits: int = 15) -> dict[str, float]:
    """`memory_search` right after a note edit, `serve` with its watcher (the default):
    a common query (many results), and the edited note's new word (one result, so the
    typo and fuzzy-name fallbacks run too); then the same searches with nothing changed."""
    import anyio
    from mcp import ClientSession
    from mcp.client.stdio import stdio_client

    note = next(root.glob("Area 03/Topic 3/*.md"))
    common, rare, steady, steady_rare = [], [], [], []

    async def timed(session, query: str, into: list[float]) -> None:  # type: ignore[no-untyped-def]
        start = time.perf_counter()
        await session.call_tool("memory_search", {"query": query})
        into.append(time.perf_counter() - start)

    async with stdio_client(_server(root)) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            await session.call_tool("memory_search", {"query": "meadow"})  # first refresh
            for i in range(edits):
                note.write_text(note.read_text() + f"\nedit {i} liquidity meadowlark{i}\n")
                await anyio.sleep(0.4)  # the watcher sees the event (its own latency)
                await timed(session, "liquidity pool", common)
                await timed(session, "liquidity pool", steady)
                note.write_text(note.read_text() + f"\nagain {i} meadowlark{i}x\n")
                await anyio.sleep(0.4)
                await timed(session, f"meadowlark{i}x", rare)
                await timed(session, f"meadowlark{i}x", steady_rare)
    return {"mcp_search_after_edit_ms": statistics.median(common) * 1000,
            "mcp_search_no_change_ms": statistics.median(steady) * 1000,
            "mcp_search_after_edit_one_hit_ms": statistics.median(rare) * 1000,
            "mcp_search_one_hit_no_change_ms": statistics.median(steady_rare) * 1000}


BASELINES = ("import sqlite3", "import typer", "rg -l, 10,000 notes")


def cold_alternated(workdir: Path, rounds: int, rows: list[str] | None = None
                    ) -> dict[str, object]:
    """The cold start-up targets measured round-robin with their baselines: each round
    runs every command once, so load from other work falls on all of them alike. Reports
    each command's median and range (wall clock) and its median CPU time (user + system,
    which load from other work on a shared machine disturbs less), and for each target
    the ratio of medians, the quartiles of the per-round ratios and the CPU ratio."""
    py = sys.executable
    notes1k, notes10k, facts10k = (workdir / "vault1000", workdir / "vault10000",
                                   workdir / "facts10000")
    rg = shutil.which("rg")
    commands: dict[str, list[str] | None] = {
        "import sqlite3": [py, "-c", "import sqlite3"],
        "import typer": [py, "-c", "import typer"],
        "memvault --version": [py, "-m", "memvault", "--version"],
        "rg -l, 10,000 notes": ([rg, "-l", QUERY, str(notes10k)] if rg
                                else ["grep", "-rl", QUERY, str(notes10k)]),
        "search, 1,000 notes": cli(notes1k, "search", "--json", QUERY),
        "search, 10,000 notes": cli(notes10k, "search", "--json", QUERY),
        "context, 10,000 notes + 2,000 facts": cli(notes10k, "context", "--json"),
        "memory list --all --json, 10,000 facts": cli(facts10k, "memory", "list", "--all",
                                                      "--json"),
        "remember, 10,000 facts": None,  # a new text each time
    }
    commands = {k: v for k, v in commands.items()
                if v is None or not any(isinstance(a, str) and a.startswith(str(workdir))
                                        and not Path(a).exists() for a in v)}
    if rows:
        commands = {k: v for k, v in commands.items()
                    if k in BASELINES or any(word in k for word in rows)}
    import importlib.util

    if "import typer" in commands and importlib.util.find_spec("typer") is None:
        raise SystemExit("bench_recall: typer is not installed here, so the `import typer` "
                         "baseline would time a failing import; pip install -e '.[dev]'")
    times: dict[str, list[float]] = {name: [] for name in commands}
    cpu: dict[str, list[float]] = {name: [] for name in commands}  # user + system
    load_before = [round(x, 2) for x in os.getloadavg()]
    run_id = os.urandom(4).hex()  # a reused --workdir must not make `remember` a no-op
    for n in range(rounds):
        for name, cmd in commands.items():
            if cmd is None:
                cmd = cli(facts10k, "remember", f"alternated bench fact {run_id} {n} xq",
                          "--category", "other")
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            run(cmd)
            times[name].append(time.perf_counter() - start)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu[name].append(after.ru_utime + after.ru_stime - before.ru_utime
                             - before.ru_stime)
    out: dict[str, object] = {"rounds": rounds, "load_average": {
        "before": load_before, "after": [round(x, 2) for x in os.getloadavg()]}, "ms": {
        name: {"median": round(statistics.median(v) * 1000, 1),
               "min": round(min(v) * 1000, 1), "max": round(max(v) * 1000, 1),
               "cpu_median": round(statistics.median(cpu[name]) * 1000, 1)}
        for name, v in times.items()}}
    pairs = [("context, 10,000 notes + 2,000 facts", "import typer"),
             ("remember, 10,000 facts", "import typer"),
             ("memory list --all --json, 10,000 facts", "import typer"),
             ("search, 10,000 notes", "rg -l, 10,000 notes"),
             ("search, 1,000 notes", "import sqlite3"),
             ("memvault --version", "import typer")]
    ratios = {}
    for a, b in pairs:
        if a in times and b in times:
            per_round = sorted(x / y for x, y in zip(times[a], times[b], strict=False))
            q = statistics.quantiles(per_round, n=4) if len(per_round) > 1 else per_round * 3
            ratios[f"{a} / {b}"] = {
                "ratio": round(statistics.median(times[a]) / statistics.median(times[b]), 2),
                "per_round_quartiles": [round(q[0], 2), round(q[2], 2)],
                "cpu_ratio": round(statistics.median(cpu[a]) / max(statistics.median(cpu[b]),
                                                                    1e-6), 2)}
    out["ratios"] = ratios
    return out


def cold_only(workdir: Path, rounds: int, rows: list[str] | None = None) -> dict[str, object]:
    """Row 8 alone: the vaults it needs (made and indexed once), then the rounds."""
    from memvault import Vault
    from memvault.services.setup import init_vault

    workdir.mkdir(parents=True, exist_ok=True)
    # note vaults only when a chosen row runs on notes (`--rows remember memory`: none)
    on_notes = ("search, 1,000 notes", "search, 10,000 notes",
                "context, 10,000 notes + 2,000 facts")
    wanted = rows is None or any(word in name for word in rows for name in on_notes)
    for notes in (1000, 10_000) if wanted else ():
        root = workdir / f"vault{notes}"
        if not root.exists():
            print(f"generating {notes} notes ...", file=sys.stderr)
            make_vault(root, notes, 2000)
            vault = Vault.open(root)
            vault.search.rebuild()
            vault.search.close()
    facts = workdir / "facts10000"
    if not facts.exists():
        print("generating 10,000 facts ...", file=sys.stderr)
        init_vault(facts)
        generate_memory(facts, 10_000)
    print(f"cold start-up, {rounds} alternated rounds ...", file=sys.stderr)
    return cold_alternated(workdir, rounds, rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 30000])
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--keep", action="store_true", help="keep the generated vaults")
    parser.add_argument("--rounds", type=int, default=15,
                        help="rounds of the alternated cold start-up measurement")
    parser.add_argument("--only-facts", action="store_true",
                        help="only the memory rows (2,000 and 10,000 facts: MCP context, "
                             "cold list and remember, first embedding)")
    parser.add_argument("--only-cold", action="store_true",
                        help="only the alternated cold start-up rows (row 8)")
    parser.add_argument("--workdir", type=Path,
                        help="keep the generated vaults here and reuse them (--only-cold)")
    parser.add_argument("--rows", nargs="+", metavar="WORD",
                        help="--only-cold: only the commands whose name holds one of these "
                             "words (e.g. search), with the baselines")
    args = parser.parse_args()
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "src")], check=True)
    if args.only_cold:
        workdir = args.workdir or Path(tempfile.mkdtemp(prefix="memvault-bench-recall-"))
        try:
            results = {"cold_alternated": cold_only(workdir, args.rounds, args.rows)}
        finally:
            if args.workdir is None:
                shutil.rmtree(workdir, ignore_errors=True)
        print(json.dumps(results, indent=2, default=str))
        if args.json:
            args.json.write_text(json.dumps(results, indent=2, default=str))
        return
    workdir = Path(tempfile.mkdtemp(prefix="memvault-bench-recall-"))
    results: dict[str, object] = {}
    try:
        results["baselines"] = baselines(7)
        print("baselines:", results["baselines"], file=sys.stderr)
        for facts in (2000, 10_000):
            print(f"memory of {facts} facts ...", file=sys.stderr)
            results[f"facts{facts}"] = bench_facts(facts, workdir, results["baselines"])  # type: ignore[arg-type]
            print(results[f"facts{facts}"], file=sys.stderr)
        for size in ([] if args.only_facts else args.sizes):
            print(f"{size} notes ...", file=sys.stderr)
            results[f"notes{size}"] = bench_notes(size, workdir, results["baselines"])  # type: ignore[arg-type]
            print(results[f"notes{size}"], file=sys.stderr)
        if not args.only_facts:
            print(f"cold start-up, {args.rounds} alternated rounds ...", file=sys.stderr)
            results["cold_alternated"] = cold_alternated(workdir, args.rounds)
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    print(json.dumps(results, indent=2, default=str))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2, default=str))


if __name__ == "__main__":
    main()
