"""When two journal lines are one line, and when a repeated tombstone line may go.

A tombstone line is its key, record, kind, scope and time in whole seconds, so the same
line can be written twice on purpose: `forget`, `memory restore` and `forget` of one fact
within one second write forgotten, lifted, forgotten — and the second `forgotten` is byte
for byte the first. What is forgotten is decided by the *last* entry for a key or record
(readers sort by time, keeping the file's order within a second), so that repeat is the
whole forget: dropping it as a copy would lift the tombstone.

- `occurrences` names each line by its bytes and how many identical lines came before
  it in the same file, so a union of two versions of a journal keeps a line one side
  repeats (the n-th copy on one side is the n-th copy on the other).
- `redundant_tombstone_copies` finds the repeats that can go: a line identical to an
  earlier one with no line in between about the same key or the same record (in any
  scope). Removing it leaves every key's and record's sequence of entries as it was,
  however a reader orders them, so nothing about what is forgotten changes.

Pure: lines in, indexes or names out. Tombstone lines are content-free, and so is
everything here.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

Occurrence = tuple[bytes, int]
"""A journal line as a union of versions knows it: its bytes and its copy number."""


def occurrences(lines: Iterable[bytes]) -> list[Occurrence]:
    """Each line with the number of identical lines before it (0 for the first)."""
    seen: dict[bytes, int] = {}
    out: list[Occurrence] = []
    for ln in lines:
        n = seen.get(ln, 0)
        seen[ln] = n + 1
        out.append((ln, n))
    return out


def _subjects(raw: bytes) -> tuple[tuple[str, str], ...]:
    """What a tombstone line is about: its key and its record (any scope). A line that is
    not a JSON object is about nothing (every reader skips it)."""
    try:
        obj: Any = json.loads(raw)
    except ValueError:
        return ()
    if not isinstance(obj, dict):
        return ()
    return (("key", json.dumps(obj.get("key"))), ("record", json.dumps(obj.get("record"))))


def redundant_tombstone_copies(lines: list[bytes]) -> set[int]:
    """Indexes of the lines in `lines` (one tombstones file, in order) that repeat an
    earlier line with nothing in between about the same key or record; removing all of
    them changes nothing about what is forgotten or lifted."""
    if len(set(lines)) == len(lines):
        return set()  # the usual case: no line twice, nothing parsed
    kept_at: dict[bytes, int] = {}  # a line's bytes -> index of its latest kept copy
    last_about: dict[tuple[str, str], int] = {}  # key or record -> latest kept line on it
    drop: set[int] = set()
    for i, raw in enumerate(lines):
        subjects = _subjects(raw)
        earlier = kept_at.get(raw)
        if earlier is not None and all(last_about[s] == earlier for s in subjects):
            drop.add(i)
            continue
        kept_at[raw] = i
        for s in subjects:
            last_about[s] = i
    return drop
