"""The experience journal (`.memvault/events.jsonl`) and tombstones (`tombstones.jsonl`).

Both are append-only JSON lines, committed with the vault and merged across machines as
unions of lines. Event ids dedupe retries: appending an event whose id is already there
does nothing. A torn last line (a crash mid-append) is skipped when reading.

The journal is shared by every principal of the vault, so an event is known by its
principal and its id together (`event_key`): readers and the merge clean-up settle
duplicates by that pair. New ids are unique per principal as well: an id derived from
content (a trade hash, an idempotency key a caller passes) is the principal's own
(`principal_event_id`), so two principals recording the same trade write two events.

Tombstones are content-free: a keyed hash (HMAC-SHA256 with the vault's
`tombstone_salt`) of the text's match key (`core.records.match_key`: NFKC, case folded,
invisible characters removed), the record id and the time; never the text. Keys written
by memvault 0.1.0 (a plainer normalisation) are still honoured when reading.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from memvault.backends.base import Backend
from memvault.core.records import match_key, tombstone_keys
from memvault.layout import DEFAULT_SCOPE
from memvault.state_paths import EVENTS, TOMBSTONES


def new_event_id(prefix: str = "ev") -> str:
    return f"{prefix}-{int(time.time())}-{os.urandom(4).hex()}"


def principal_event_id(key: str, scope: str) -> str:
    """The event id for `key` (a trade hash, a caller's idempotency key) as one
    principal's: the default principal keeps `key` itself (as memvault always wrote it),
    another principal's is `<scope>:<key>` (scope names hold no ':')."""
    if scope == DEFAULT_SCOPE or key.startswith(f"{scope}:"):
        return key
    return f"{scope}:{key}"


def event_key(ev: dict[str, Any]) -> tuple[str, Any] | None:
    """What makes an event the same event: its principal and its id (None without an
    id). Journals written before ids were made per principal may hold two principals'
    events under one id; they stay two events."""
    if "id" not in ev:
        return None
    return str(ev.get("scope", DEFAULT_SCOPE)), ev["id"]


def _iter_json_lines(data: bytes) -> Iterator[dict[str, Any]]:
    for raw in data.split(b"\n"):
        raw = raw.strip()
        if not raw:
            continue
        try:
            obj = json.loads(raw)
        except ValueError:
            continue  # a torn or hand-mangled line: skipped, reported by doctor
        if isinstance(obj, dict):
            yield obj


def scan_events(data: bytes, type_prefixes: tuple[str, ...], *,
                scope: str | None = None) -> Iterator[dict[str, Any]]:
    """Events in journal bytes whose type starts with one of `type_prefixes`.

    Lines that cannot hold such a type are skipped with a byte check before any JSON
    parsing, so scanning a large journal for a few kinds of event stays cheap. With
    `scope`, only that principal's events.
    """
    needles = tuple(b'"' + t.encode() for t in type_prefixes)
    seen: set[tuple[str, Any]] = set()
    for raw in data.split(b"\n"):
        if not any(n in raw for n in needles):
            continue
        try:
            ev = json.loads(raw)
        except ValueError:
            continue
        if not isinstance(ev, dict) or not str(ev.get("type", "")).startswith(type_prefixes):
            continue
        if scope is not None and ev.get("scope", "default") != scope:
            continue
        key = event_key(ev)
        if key is not None:  # a union merge may hold one event twice: read it once
            if key in seen:
                continue
            seen.add(key)
        yield ev


_ID_PREFIX = b'{"id":"'


def _event_ids(data: bytes) -> set[Any]:
    """The ids of the events in `data`, for deduplication.

    Fast path for lines written by `_dump` (the id comes first, no escapes in it): the id
    is sliced out without parsing the line, so appending to a journal of 10,000 events
    stays cheap. Any other line is parsed as JSON (torn lines are skipped).
    """
    ids: set[Any] = set()
    for raw in data.split(b"\n"):
        if raw.startswith(_ID_PREFIX):
            end = raw.find(b'"', 7)
            if end > 7 and raw.find(b"\\", 7, end) == -1 and raw.rstrip().endswith(b"}") \
                    and raw.count(b"{") == raw.count(b"}"):
                ids.add(raw[7:end].decode("utf-8", "replace"))
                continue
        for obj in _iter_json_lines(raw):
            ids.add(obj.get("id"))
    return ids


def _dump(obj: dict[str, Any]) -> bytes:
    return (json.dumps(obj, ensure_ascii=False, separators=(",", ":"), sort_keys=False)
            + "\n").encode("utf-8")


class EventLog:
    """Append-only events, deduplicated by id."""

    def __init__(self, backend: Backend, scope: str) -> None:
        self.backend = backend
        self.scope = scope

    def read_all(self) -> list[dict[str, Any]]:
        """Every event once (by id), without the history of permanently forgotten records
        (a merge with a clone that still had it may bring those lines back)."""
        blob = self.backend.read(EVENTS)
        return without_erased_history(_iter_json_lines(blob.data)) if blob else []

    def events(self, *, record: str | None = None, type_prefix: str | None = None,
               all_scopes: bool = False) -> list[dict[str, Any]]:
        out = []
        for ev in self.read_all():
            if not all_scopes and ev.get("scope", "default") != self.scope:
                continue
            if record is not None and ev.get("record") != record:
                continue
            if type_prefix is not None and not str(ev.get("type", "")).startswith(type_prefix):
                continue
            out.append(ev)
        return out

    def append(self, type_: str, *, event_id: str | None = None, **fields: Any) -> bool:
        """Append one event; returns False when an event with this id already exists."""
        return self.append_many([{"type": type_, "id": event_id, **fields}]) == 1

    def append_many(self, events: Iterable[dict[str, Any]]) -> int:
        """Append events (skipping ids already present); returns how many were added.
        An id the caller gives is made this principal's own (`principal_event_id`)."""
        with self.backend.lock():
            blob = self.backend.read(EVENTS)
            existing = _event_ids(blob.data) if blob else set()
            chunks = []
            for ev in events:
                ev = dict(ev)
                given = ev.get("id")
                ev["id"] = principal_event_id(str(given), str(ev.get("scope", self.scope))) \
                    if given else new_event_id()
                if ev["id"] in existing:
                    continue
                existing.add(ev["id"])
                full = {"id": ev.pop("id"), "ts": ev.pop("ts", int(time.time())),
                        "type": ev.pop("type"), "scope": ev.pop("scope", self.scope), **ev}
                chunks.append(_dump(full))
            if chunks:
                from memvault.services import forgets_applied

                data = b"".join(chunks)
                in_step = forgets_applied.before_append(self.backend)
                self.backend.append(EVENTS, data, message="memvault: journal")
                if in_step is not None:  # the forgets note stays in step with this line
                    forgets_applied.after_append(self.backend, in_step, data)
            return len(chunks)

    def purge_record(self, record: str, *, text: str | None = None) -> int:
        """Remove every event about `record` (used by `forget --permanent`).

        Also removed: events of this scope carrying any text the record ever had (its
        `text` / `previous_text` values, and `text`) under another record id, e.g. an
        earlier fact with the same words that was forgotten and remembered again, and so
        on transitively, so that no copy of the words is left in the journal.
        """
        with self.backend.lock():
            blob = self.backend.read(EVENTS)
            if blob is None:
                return 0
            rows: list[tuple[bytes, dict[str, Any] | None]] = []
            for raw in blob.data.split(b"\n"):
                if not raw.strip():
                    continue
                try:
                    obj = json.loads(raw)
                except ValueError:
                    obj = None
                mine = isinstance(obj, dict) and obj.get("scope", "default") == self.scope
                rows.append((raw, obj if mine else None))
            records = {record}
            keys = {match_key(text)} if text else set()
            changed = True
            while changed:  # the closure of records and texts linked to this one
                changed = False
                for _raw, obj in rows:
                    if obj is None:
                        continue
                    texts = {match_key(obj[f]) for f in _TEXT_FIELDS
                             if isinstance(obj.get(f), str)}
                    rec = obj.get("record")
                    if rec in records or texts & keys:
                        if isinstance(rec, str) and rec not in records:
                            records.add(rec)
                            changed = True
                        if not texts <= keys:
                            keys |= texts
                            changed = True
            kept: list[bytes] = []
            removed = 0
            for raw, obj in rows:
                if obj is not None and obj.get("type") == ERASED and obj.get("permanent"):
                    kept.append(raw + b"\n")  # content-free: it keeps the erasure known
                    continue
                if obj is not None and (obj.get("record") in records or any(
                        isinstance(obj.get(f), str) and match_key(obj[f]) in keys
                        for f in _TEXT_FIELDS)):
                    removed += 1
                    continue
                kept.append(raw + b"\n")
            if removed:
                self.backend.write(EVENTS, b"".join(kept), expected=blob.version,
                                   message="memvault: purge forgotten record")
            return removed


_TEXT_FIELDS = ("text", "previous_text")
ERASED = "fact.forgotten"
"""The event type that, with `permanent: true`, marks a record whose history was erased."""


def erased_records(events: Iterable[dict[str, Any]]) -> set[str]:
    return {str(ev.get("record")) for ev in events
            if ev.get("type") == ERASED and ev.get("permanent") and ev.get("record")}


def without_erased_history(events: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Events once each (by id), minus those of permanently forgotten records (their
    content-free `fact.forgotten` events stay)."""
    unique: list[dict[str, Any]] = []
    seen: set[tuple[str, Any]] = set()
    for ev in events:
        key = event_key(ev)
        if key is not None:
            if key in seen:
                continue
            seen.add(key)
        unique.append(ev)
    erased = erased_records(unique)
    if not erased:
        return unique
    return [ev for ev in unique if ev.get("record") not in erased or ev.get("type") == ERASED]


@dataclass(frozen=True, slots=True)
class Tombstone:
    key: str
    record: str
    ts: int
    kind: str


class Tombstones:
    """Content-free keys of forgotten and rejected texts."""

    def __init__(self, backend: Backend, scope: str, salt: str) -> None:
        self.backend = backend
        self.scope = scope
        self.salt = salt

    def key_for(self, text: str) -> str:
        """The key a new tombstone for `text` is written with (normalisation-proof)."""
        return tombstone_keys(self.salt, text)[0]

    def keys_for(self, text: str) -> tuple[str, ...]:
        """Every key `text` may be tombstoned under: today's and 0.1.0's."""
        return tombstone_keys(self.salt, text)

    def _entries(self) -> list[dict[str, Any]]:
        blob = self.backend.read(TOMBSTONES)
        if blob is None:
            return []
        return [e for e in _iter_json_lines(blob.data) if e.get("scope", "default") == self.scope]

    def active_keys(self) -> set[str]:
        """Keys whose latest entry is a tombstone (a later `lifted` entry cancels it)."""
        latest: dict[str, dict[str, Any]] = {}
        for e in sorted(self._entries(), key=lambda e: e.get("ts", 0)):  # stable: file order
            latest[str(e.get("key"))] = e
        return {k for k, e in latest.items() if e.get("kind") != "lifted"}

    def is_tombstoned(self, text: str) -> bool:
        return self.matches(text, self.active_keys())

    def matches(self, text: str, active: set[str]) -> bool:
        """Whether `text` is tombstoned under any of its keys, given `active_keys()`."""
        return any(key in active for key in self.keys_for(text))

    def dead_records(self) -> frozenset[str]:
        """Record ids whose latest tombstone entry is not `lifted`: forgotten or rejected,
        and not restored since. A merged line with such an id is removed."""
        return dead_records_in(self.backend, self.scope)

    def add(self, text: str, record: str, kind: str = "forgotten", *,
            provisional: bool = False) -> Tombstone:
        """`provisional`: `record` is a hand-written bullet's provisional id, which the
        same words typed again would get again; such an entry never marks the id dead."""
        ts = int(time.time())
        stone: dict[str, Any] = {"key": self.key_for(text), "record": record, "ts": ts,
                                 "kind": kind, "scope": self.scope}
        if provisional:
            stone["hand"] = True
        self.backend.append(TOMBSTONES, _dump(stone), message="memvault: tombstone")
        return Tombstone(stone["key"], record, ts, kind)

    def add_key(self, key: str, record: str, kind: str = "forgotten", *,
                provisional: bool = False) -> Tombstone:
        """A tombstone from its key alone (finishing a forget whose text is gone);
        `provisional` as in `add`."""
        ts = int(time.time())
        stone: dict[str, Any] = {"key": key, "record": record, "ts": ts, "kind": kind,
                                 "scope": self.scope}
        if provisional:
            stone["hand"] = True
        self.backend.append(TOMBSTONES, _dump(stone), message="memvault: tombstone")
        return Tombstone(key, record, ts, kind)

    def revive(self, record: str, text: str) -> None:
        """A hand-written bullet's provisional id is about to be written: if an earlier
        fact with that id was forgotten, say the id is alive again (else the next tidy
        would take the new line for the forgotten one)."""
        if record in self.dead_records():
            self.lift(text, record)

    def lift(self, text: str, record: str) -> bool:
        """Cancel the tombstones for `text` (an explicit `remember` by the user), under
        whichever of its keys they were written, and mark `record` alive again (a
        restore) even when the text was lifted meanwhile."""
        active = self.active_keys()
        keys = [key for key in dict.fromkeys(self.keys_for(text)) if key in active]
        if not keys and record in self.dead_records():
            keys = [self.key_for(text)]
        if not keys:
            return False
        now = int(time.time())
        lines = b"".join(_dump({"key": key, "record": record, "ts": now, "kind": "lifted",
                                "scope": self.scope}) for key in keys)
        self.backend.append(TOMBSTONES, lines, message="memvault: lift tombstone")
        return True


_DEAD_CACHE: dict[tuple[str, str], frozenset[str]] = {}
_STONE = re.compile(rb'\{"key":"[0-9a-f]*","record":"([^"\\]*)","ts":(\d+),"kind":"([^"\\]*)",'
                    rb'"scope":"([^"\\]*)"(,"hand":true)?\}')


def dead_records_in(backend: Backend, scope: str) -> frozenset[str]:
    """`Tombstones.dead_records`, parsed once per tombstones version (cheap to call)."""
    blob = backend.read(TOMBSTONES)
    if blob is None:
        return frozenset()
    key = (scope, blob.version)  # versions are content hashes on every backend
    hit = _DEAD_CACHE.get(key)
    if hit is not None:
        return hit
    latest: dict[str, tuple[Any, str]] = {}
    for raw in blob.data.split(b"\n"):
        fast = _STONE.fullmatch(raw.rstrip(b"\r"))
        if fast:  # a line as `Tombstones.add` writes it: no JSON parsing needed
            record, stamp, kind, where, hand = (g.decode("utf-8", "replace") if g else ""
                                                for g in fast.groups())
            ts: Any = int(stamp)
        else:
            e = next(_iter_json_lines(raw), None)
            if e is None or not isinstance(e.get("record"), str):
                continue
            record, kind, where = e["record"], str(e.get("kind")), str(e.get("scope", "default"))
            hand = "1" if e.get("hand") else ""
            ts = e.get("ts", 0) if isinstance(e.get("ts", 0), (int, float)) else 0
        if where != scope or hand:
            continue
        if record not in latest or ts >= latest[record][0]:
            latest[record] = (ts, kind)
    dead = frozenset(r for r, (_ts, kind) in latest.items() if kind != "lifted")
    if len(_DEAD_CACHE) > 64:
        _DEAD_CACHE.clear()
    _DEAD_CACHE[key] = dead
    return dead
