#!/usr/bin/env python3
"""Benchmark what the input-safety checks cost, each against a baseline in the same run.

- **YAML limits**: every frontmatter block of the shared corpus (about 6,000 notes) read
  with PyYAML's C loader alone (baseline) and through `core.yaml_limits.load_limited`;
  and how long an alias bomb takes to be refused.
- **Search index rebuild** of the corpus vault with the limits on, and with the limit
  check switched off (baseline), in-process.
- **Match keys**: the comparison form of 10,000 fact texts (a tenth of them accented or
  with invisible characters) with 0.1.0's `normalise_text` (baseline) and `match_key`.
- **Import** of a 2,000-fact export into an empty vault (plan + apply), with the
  read-back check of every line, and with it switched off (baseline); and with each
  batch inserted by one parse, against one parse per line as 0.1.0 did (baseline).

Medians of --runs; prints a Markdown table. Nothing here is a pass/fail test.

    python benchmarks/bench_input.py            # 5 runs
    python benchmarks/bench_input.py --runs 3
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))


def median_time(fn: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def corpus_path() -> Path | None:
    for base in (REPO.parent / "shared" / "corpus", Path("/work/shared/corpus")):
        found = sorted(base.glob("*.tar.gz")) if base.is_dir() else []
        if found:
            return found[0]
    return None


def corpus_frontmatter(archive: Path) -> list[str]:
    from memvault.core.notes import read_frontmatter

    blocks = []
    with tarfile.open(archive) as tar:
        for member in tar.getmembers():
            if member.isfile() and member.name.endswith(".md"):
                handle = tar.extractfile(member)
                assert handle is not None
                raw, _ = read_frontmatter(handle.read().decode("utf-8", "replace"))
                if raw:
                    blocks.append(raw)
    return blocks


def bench_yaml(blocks: list[str], runs: int) -> list[tuple[str, float, float]]:
    import yaml

    from memvault.core.yaml_limits import YamlLimitError, check_limits, load_limited

    loader = yaml.CSafeLoader

    def plain() -> None:
        for b in blocks:
            try:
                yaml.load(b, Loader=loader)  # noqa: S506
            except yaml.YAMLError:
                pass

    def limited() -> None:
        for b in blocks:
            try:
                load_limited(b, loader)
            except (yaml.YAMLError, YamlLimitError):
                pass

    bomb = "\n".join([f"l0: &l0 [{', '.join(['x'] * 10)}]"] + [
        f"l{n}: &l{n} [{', '.join([f'*l{n - 1}'] * 10)}]" for n in range(1, 9)])

    def refuse_bomb() -> None:
        try:
            check_limits(bomb)
        except YamlLimitError:
            return
        raise AssertionError("the bomb was not refused")

    return [(f"read {len(blocks):,} corpus frontmatter blocks", median_time(plain, runs),
             median_time(limited, runs)),
            ("refuse a 10^9-value alias bomb (no baseline: it never finishes)", 0.0,
             median_time(refuse_bomb, runs))]


def bench_index(archive: Path, runs: int) -> tuple[str, float, float]:
    from memvault.core import yaml_limits
    from memvault.index.store import IndexStore

    tmp = Path(tempfile.mkdtemp())
    try:
        with tarfile.open(archive) as tar:
            tar.extractall(tmp / "vault", filter="data")
        root = tmp / "vault"
        (root / ".memvault").mkdir(exist_ok=True)

        def rebuild() -> None:
            store = IndexStore(root, "Pilot")
            store.rebuild(None)
            store.close()

        original = yaml_limits.check_limits
        yaml_limits.check_limits = lambda text: None  # type: ignore[assignment]
        try:
            base = median_time(rebuild, runs)
        finally:
            yaml_limits.check_limits = original
        return "rebuild the corpus search index", base, median_time(rebuild, runs)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def fact_texts(n: int) -> list[str]:
    rng = random.Random(7)
    words = ["I", "prefer", "concise", "answers", "café", "naïve", "résumé", "tables",
             "Lisbon", "morning", "meetings", "Rust", "examples", "USD"]
    out = []
    for i in range(n):
        text = " ".join(rng.choice(words) for _ in range(10))
        if i % 10 == 0:
            text = text.replace("a", "a\u200b", 1)
        out.append(text if i % 3 else text.encode("ascii", "ignore").decode())
    return out


def bench_keys(runs: int) -> tuple[str, float, float]:
    from memvault.core.bullets import normalise_text
    from memvault.core.records import match_key

    texts = fact_texts(10_000)
    return ("compare 10,000 fact texts (0.1.0 key vs match key)",
            median_time(lambda: [normalise_text(t) for t in texts], runs),
            median_time(lambda: [match_key(t) for t in texts], runs))


def bench_import(runs: int) -> list[tuple[str, float, float]]:
    from memvault import Vault
    from memvault.services import transfer
    from memvault.services.setup import init_vault

    export = json.dumps({"format": "memvault", "version": 2, "facts": [
        {"id": f"f{i:05d}", "text": text, "category": "project",
         "meta": {"id": f"f{i:05d}", "updated": "1784594521", "src": "cli"}}
        for i, text in enumerate(dict.fromkeys(fact_texts(2_400)))][:2_000]}).encode()

    def run_import() -> None:
        tmp = Path(tempfile.mkdtemp())
        try:
            init_vault(tmp / "v")
            vault = Vault.open(tmp / "v")
            vault.transfer.apply(vault.transfer.plan(export))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    from memvault.core.bullets import BulletDocument

    original = transfer._checked_action
    transfer._checked_action = lambda action, where, source: action  # type: ignore
    try:
        base = median_time(run_import, runs)
    finally:
        transfer._checked_action = original
    checked = median_time(run_import, runs)

    batch = BulletDocument.insert_items

    def one_by_one(self: BulletDocument, lines: list[str]) -> None:
        for line in lines:  # how 0.1.0 inserted: the file parsed again after each line
            batch(self, [line])

    BulletDocument.insert_items = one_by_one  # type: ignore[method-assign]
    try:
        old = median_time(run_import, 1)
    finally:
        BulletDocument.insert_items = batch  # type: ignore[method-assign]
    return [("import 2,000 facts (plan + apply): without / with the read-back check",
             base, checked),
            ("import 2,000 facts: one parse per line (0.1.0) / one per batch", old, checked)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    rows: list[tuple[str, float, float]] = []
    archive = corpus_path()
    if archive is not None:
        rows += bench_yaml(corpus_frontmatter(archive), args.runs)
        rows.append(bench_index(archive, max(1, args.runs // 2)))
    else:
        print("(no corpus found: YAML and index rows skipped)")
    rows.append(bench_keys(args.runs))
    rows += bench_import(args.runs)
    print("| measurement | baseline | with the checks | ratio |")
    print("| --- | ---: | ---: | ---: |")
    for name, base, new in rows:
        ratio = f"{new / base:.2f}x" if base else "-"
        shown = f"{base * 1000:.2f} ms" if base else "-"
        print(f"| {name} | {shown} | {new * 1000:.2f} ms | {ratio} |")


if __name__ == "__main__":
    main()
