#!/usr/bin/env python3
"""Precision and recall of the built-in extractor on a labelled set of chat turns.

Each line of the set is `{"id", "turn", "expected": [statement, ...], "tag"}`; `turn` is
anything `memvault extract` accepts. Scoring is per statement: a found statement counts
as correct when it matches an expected one (same words after case/space folding, one
containing the other, or rapidfuzz ratio >= 85); each expected statement is matched once.

Usage: python scripts/eval_extractor.py [tests/data/extraction_eval.jsonl] [--show-errors]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

DEFAULT_SET = Path(__file__).resolve().parent.parent / "tests" / "data" / "extraction_eval.jsonl"


def _norm(text: str) -> str:
    return " ".join(text.casefold().strip(" .!").split())


def matches(found: str, expected: str) -> bool:
    a, b = _norm(found), _norm(expected)
    if a == b or (len(b) >= 8 and b in a) or (len(a) >= 8 and a in b):
        return True
    from rapidfuzz import fuzz

    return fuzz.ratio(a, b) >= 85


def evaluate(path: Path = DEFAULT_SET) -> dict:
    from memvault.core.extractor import extract_statements, user_words

    tp = fp = fn = 0
    errors = []
    by_tag: dict[str, dict[str, int]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        case = json.loads(line)
        found = [c.text for c in extract_statements(user_words(case["turn"]))]
        expected = list(case["expected"])
        left = list(expected)
        case_tp = 0
        wrong = []
        for f in found:
            hit = next((e for e in left if matches(f, e)), None)
            if hit is None:
                wrong.append(f)
            else:
                left.remove(hit)
                case_tp += 1
        tp += case_tp
        fp += len(wrong)
        fn += len(left)
        tag = by_tag.setdefault(case.get("tag", "-"), {"turns": 0, "fp": 0, "fn": 0})
        tag["turns"] += 1
        tag["fp"] += len(wrong)
        tag["fn"] += len(left)
        if wrong or left:
            errors.append({"id": case["id"], "false_positives": wrong, "missed": left})
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    return {"turns": sum(t["turns"] for t in by_tag.values()), "true_positives": tp,
            "false_positives": fp, "false_negatives": fn, "precision": round(precision, 3),
            "recall": round(recall, 3), "by_tag": by_tag, "errors": errors}


def main(argv: list[str]) -> int:
    args = [a for a in argv if not a.startswith("--")]
    report = evaluate(Path(args[0]) if args else DEFAULT_SET)
    print(f"turns: {report['turns']}  statements found correctly: {report['true_positives']}  "
          f"false positives: {report['false_positives']}  missed: {report['false_negatives']}")
    print(f"precision: {report['precision']:.3f}  recall: {report['recall']:.3f}")
    for tag, row in sorted(report["by_tag"].items()):
        print(f"  {tag:22} turns {row['turns']:3}  false positives {row['fp']:2}  "
              f"missed {row['fn']:2}")
    if "--show-errors" in argv:
        for err in report["errors"]:
            print(json.dumps(err, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
