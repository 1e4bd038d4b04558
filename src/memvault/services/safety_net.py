"""The safety net: what memvault last saw of each memory file, and what vanished since.

For every bullet file it writes (Memory.md, Lessons.md, Inbox.md of each principal),
memvault keeps one file in `.memvault/safety/` (git-ignored, local to this machine):

    {"format": 1, "path": "Pilot/Memory.md", "sha1": "…", "size": 2310, "ids": ["k3x9qa", …]}
    <the file's bytes, as memvault last wrote them (no copy above MAX_COPY_BYTES)>

The first line is the *fingerprint*: a later read that finds the file empty, shorter, or
missing ids it had is treated as a file being saved (see `bullet_files.read_settled`). The
rest is the *last-known copy*: when facts disappear without memvault removing them (an
editor saving a stale buffer, a sync tool restoring an old version, a hand deletion), their
lines are moved from the copy into `lost.jsonl`, which `doctor` reports and
`memvault memory recover` shows, restores or dismisses.

The net honours forgetting: memvault's own removals update it *before* the memory file is
written; `scrub` takes a forgotten record (by id, and its text by the vault's match key) out
of `lost.jsonl` and out of every fingerprint and last-known copy, so no copy of a
permanently forgotten text survives here, even when the record had already vanished from
its file (a hand deletion, or a forget that arrived through sync). A record that was
forgotten (a tombstone for its id, or a forget event in the journal) is never noted as
lost. Only the local-folder backend has a net.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from memvault.backends.base import ANY, Backend
from memvault.state_paths import SAFETY, state_path

if TYPE_CHECKING:
    from memvault.core.bullets import BulletDocument


def _parse(data: bytes) -> BulletDocument:
    from memvault.core.bullets import parse_bullets

    return parse_bullets(data)


def forgotten_ids(backend: Backend) -> set[str]:
    """Record ids that were forgotten, in any principal's scope: a tombstone for the id
    that was not lifted since, or a journal whose latest event about the id is a forget
    (a permanent forget's content-free event stays after its history is erased). Such a
    record vanishing from its file is the forget taking effect, never a loss."""
    from memvault.services.journal import _iter_json_lines
    from memvault.state_paths import EVENTS, TOMBSTONES

    out: set[str] = set()
    try:
        stones = backend.read(TOMBSTONES)
        latest: dict[str, tuple[float, str]] = {}
        for e in _iter_json_lines(stones.data) if stones else ():
            rec, ts = e.get("record"), e.get("ts", 0)
            if not isinstance(rec, str) or e.get("hand") or not isinstance(ts, (int, float)):
                continue
            if rec not in latest or ts >= latest[rec][0]:
                latest[rec] = (ts, str(e.get("kind")))
        out |= {rec for rec, (_ts, kind) in latest.items() if kind != "lifted"}
        journal = backend.read(EVENTS)
        last: dict[str, str] = {}
        for ev in _iter_json_lines(journal.data) if journal else ():
            rec, kind = ev.get("record"), str(ev.get("type", ""))
            if not isinstance(rec, str):
                continue
            if kind.endswith(".forgotten") and ev.get("permanent"):
                out.add(rec)
            last[rec] = kind
        out |= {rec for rec, kind in last.items() if kind.endswith(".forgotten")}
    except Exception:  # noqa: BLE001 - a damaged journal must never stop a write
        return out  # what could be read
    return out

MAX_COPY_BYTES = 4 << 20
"""A memory file larger than this keeps a fingerprint but no copy."""

MAX_LOST_BYTES = 1 << 20
"""`lost.jsonl` keeps the newest entries within this size."""

LOST = state_path("safety/lost.jsonl")
IGNORE_ALL = b"# memvault's local safety net: never committed\n*\n"


@dataclass(frozen=True, slots=True)
class Seen:
    """What memvault last saw of one memory file."""

    sha1: str
    size: int
    ids: frozenset[str]
    copy: bytes | None


@dataclass(frozen=True, slots=True)
class LostItem:
    """A record that vanished from a memory file without memvault removing it."""

    path: str
    id: str
    text: str
    lines: str
    noticed: int

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "id": self.id, "text": self.text, "lines": self.lines,
                "noticed": self.noticed}


def record_ids(doc: BulletDocument) -> frozenset[str]:
    """The ids a file is checked against: written ids only (a hand-written bullet's
    provisional id changes with its text, so it cannot tell an edit from a loss)."""
    return frozenset(it.id for it in doc.items if not it.provisional)


def _sha1(data: bytes, version: str | None) -> str:
    """The SHA-1 of `data`: the first field of a local-folder version of these bytes
    (`backends.fs_io.version_of`: sha1:inode:size:mtime), else computed."""
    if version is not None:
        sha1, _, rest = version.partition(":")
        if len(sha1) == 40 and rest.count(":") == 2 and rest.split(":")[1] == str(len(data)):
            return sha1
    import hashlib

    return hashlib.sha1(data).hexdigest()


class SafetyNet:
    """The net of one vault (a no-op on backends other than the local folder)."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        self.enabled = backend.capabilities.local_root is not None
        self._ignored = False

    @staticmethod
    def seen_path(path: str) -> str:
        from memvault.services.inbox_state import seen_path

        return seen_path(path)

    # -- the fingerprint and last-known copy ---------------------------------------------

    def seen(self, path: str) -> Seen | None:
        if not self.enabled:
            return None
        plain = getattr(self.backend, "read_unversioned", None)  # no hash of a 1 MB copy
        try:
            if plain is not None:
                data = plain(self.seen_path(path))
            else:
                blob = self.backend.read(self.seen_path(path))
                data = None if blob is None else blob.data
        except Exception:  # noqa: BLE001 - a damaged net must never stop a write
            return None
        if data is None:
            return None
        from memvault.services.inbox_state import parse_seen

        parsed = parse_seen(data)
        return None if parsed is None else Seen(*parsed)

    def store(self, path: str, data: bytes, doc: BulletDocument,
              ids: frozenset[str] | None = None, *, durable: bool = True,
              version: str | None = None) -> None:
        """Record `data` (parsed as `doc`) as what memvault last saw of `path`; `ids`
        overrides the records the fingerprint expects (default: those of `doc`);
        `version`: what the backend's `write` of `data` returned (its SHA-1, on the local
        folder: not computed again for a 1 MB file).

        `durable=False` (after a write that removed nothing): replaced atomically but not
        fsynced. Then the copy holds nothing the memory file does not also hold, durably,
        so a power cut can only leave the previous fingerprint and copy (a weaker check
        at the next write, never a word lost or kept against a forget). A store that must
        take words out of the net (before a removal, a scrub) is always durable."""
        if not self.enabled:
            return
        copy = len(data) <= MAX_COPY_BYTES
        # the ids in no particular order (read back as a set; sorting 10,000 took 1.5 ms)
        head = {"format": 1, "path": path, "sha1": _sha1(data, version),
                "size": len(data), "ids": list(record_ids(doc) if ids is None else ids),
                "copy": copy}
        payload = json.dumps(head).encode() + b"\n" + (data if copy else b"")
        self.ensure_ignored()
        replace_unsynced = None if durable else getattr(self.backend, "replace_unsynced",
                                                          None)
        if replace_unsynced is not None:
            replace_unsynced(self.seen_path(path), payload)
            return
        self.backend.write(self.seen_path(path), payload, expected=ANY,
                           message="memvault: safety net")

    def ensure_ignored(self) -> None:
        """The folder carries its own `.gitignore` ("*"), so it stays out of git in any
        vault, whatever the vault's own ignore rules say."""
        if self._ignored:
            return
        marker = f"{SAFETY}/.gitignore"
        if self.backend.read(marker) is None:
            self.backend.write(marker, IGNORE_ALL, expected=ANY, message="memvault: safety net")
        self._ignored = True

    # -- what vanished -------------------------------------------------------------------

    def vanished(self, path: str, seen: Seen | None, doc: BulletDocument,
                 ids: frozenset[str] | None = None) -> list[LostItem]:
        """Records `seen` had that `doc` lacks, with their lines from the last-known copy
        (`ids`: `record_ids(doc)`, when the caller has it)."""
        if seen is None:
            return []
        gone = seen.ids - (record_ids(doc) if ids is None else ids)
        if not gone:
            return []
        from memvault.core.bullets import parse_bullets

        now = int(time.time())
        old = parse_bullets(seen.copy) if seen.copy is not None else None
        order = {it.id: n for n, it in enumerate(old.items)} if old is not None else {}
        out = []
        for rid in sorted(gone, key=lambda r: (order.get(r, len(order)), r)):  # file order
            items = old.find(rid) if old is not None else []
            if not items:
                out.append(LostItem(path, rid, "", "", now))
                continue
            item = items[0]
            lines = "\n".join(ln.text for ln in old.file.lines[item.start:item.end])  # type: ignore[union-attr]
            out.append(LostItem(path, rid, item.text, lines, now))
        return out

    def note_lost(self, items: Iterable[LostItem]) -> None:
        """Add vanished records to `lost.jsonl` (once per path and id); a record that was
        forgotten (here or on another clone) is no loss and is not kept."""
        items = [it for it in items if it.lines]
        if not self.enabled or not items:
            return
        forgotten = forgotten_ids(self.backend)
        items = [it for it in items if it.id not in forgotten]
        if not items:
            return
        kept = self.lost()
        known = {(it.path, it.id) for it in kept}
        kept += [it for it in items if (it.path, it.id) not in known]
        self._write_lost(kept)

    def lost(self) -> list[LostItem]:
        if not self.enabled:
            return []
        try:
            blob = self.backend.read(LOST)
        except Exception:  # noqa: BLE001 - a damaged net must never stop a command
            return []
        out = []
        for raw in (blob.data.split(b"\n") if blob else []):
            try:
                e = json.loads(raw)
                out.append(LostItem(e["path"], e["id"], e["text"], e["lines"], int(e["noticed"])))
            except (ValueError, KeyError, TypeError):
                continue
        return out

    def drop(self, *, ids: Iterable[str] = (), texts: Iterable[str] = (),
             paths: Iterable[str] | None = None) -> int:
        """Remove lost entries by id or by (normalised) text; returns how many."""
        from memvault.core.bullets import normalise_text

        wanted_ids = set(ids)
        keys = {normalise_text(t) for t in texts if t}
        scope = set(paths) if paths is not None else None
        from memvault.core.records import match_key

        matched = {match_key(t) for t in texts if t}
        kept, dropped = [], 0
        for it in self.lost():
            hit = (scope is None or it.path in scope) and (
                it.id in wanted_ids or (it.text and (normalise_text(it.text) in keys
                                                     or match_key(it.text) in matched)))
            if hit:
                dropped += 1
            else:
                kept.append(it)
        if dropped:
            self._write_lost(kept)
        return dropped

    def scrub(self, *, ids: Iterable[str] = (), texts: Iterable[str] = (),
              paths: Iterable[str] | None = None) -> list[str]:
        """Remove every copy of these records (by id) and texts (by match key) from the
        net of `paths` (default: every file): `lost.jsonl` entries, and the items in each
        last-known copy (whose fingerprint then no longer expects those ids). The texts
        the net held for these ids are scrubbed too; returns every text (given or found),
        so a caller can scrub them elsewhere."""
        if not self.enabled:
            return list(texts)
        from memvault.core.records import match_key

        wanted = set(ids)
        scope = set(paths) if paths is not None else None
        found = [it.text for it in self.lost() if it.id in wanted and it.text
                 and (scope is None or it.path in scope)]
        copies = [(p, seen, _parse(seen.copy) if seen.copy is not None else None)
                  for p, seen in self._copies()
                  if (scope is None or p in scope) and not self._in_step(p, seen)]
        for _path, _seen, doc in copies:
            found += [it.text for it in doc.items if it.id in wanted] if doc else []
        all_texts = list(dict.fromkeys([*texts, *found]))
        keys = {match_key(t) for t in all_texts if t}
        self.drop(ids=wanted, texts=all_texts, paths=scope)
        for path, seen, doc in copies:
            self._scrub_copy(path, seen, doc, wanted, keys)
        return [t for t in all_texts if t]

    def _in_step(self, path: str, seen: Seen) -> bool:
        """Whether the file holds exactly what the net holds of it: then the net has no
        copy of anything the file lacks, and memvault's next edit of the file keeps the
        two in step (so a scrub need not parse that copy)."""
        import hashlib

        try:
            blob = self.backend.read(path)
        except Exception:  # noqa: BLE001 - unreadable: scrub the copy to be safe
            return False
        return blob is not None and len(blob.data) == seen.size and \
            hashlib.sha1(blob.data, usedforsecurity=False).hexdigest() == seen.sha1

    def text_of(self, record: str, path: str) -> str | None:
        """The text the net holds for `record` of the file `path` (a lost entry, else the
        last-known copy), or None."""
        for it in self.lost():
            if it.path == path and it.id == record and it.text:
                return it.text
        seen = self.seen(path)
        if seen is not None and seen.copy is not None:
            for item in _parse(seen.copy).find(record):
                return item.text
        return None

    def scrub_forgotten(self) -> int:
        """Scrub every record the net holds that was forgotten (`forgotten_ids`), e.g. by a
        forget that arrived through sync: each from its own file's copies only (texts are
        matched within that file). Returns how many records were scrubbed."""
        if not self.enabled:
            return 0
        held: dict[str, set[str]] = {}
        for it in self.lost():
            held.setdefault(it.path, set()).add(it.id)
        copies = self._copies()
        for path, seen in copies:
            held.setdefault(path, set()).update(seen.ids)
        if not held:
            return 0
        forgotten = forgotten_ids(self.backend)
        done = 0
        for path, ids in held.items():
            hits = ids & forgotten
            if hits:
                self.scrub(ids=hits, paths=[path])
                done += len(hits)
        return done

    def _copies(self) -> list[tuple[str, Seen]]:
        """(memory file, what the net holds of it) for every fingerprint in the net."""
        out = []
        for name in self.backend.list(SAFETY):
            base = name.rpartition("/")[2]
            if not base.endswith(".md"):
                continue
            path = base.replace("%2F", "/").replace("%25", "%")
            seen = self.seen(path)
            if seen is not None:
                out.append((path, seen))
        return out

    def _scrub_copy(self, path: str, seen: Seen, doc: BulletDocument | None, ids: set[str],
                    keys: set[str]) -> None:
        """Rewrite one fingerprint and copy (`doc`: the copy parsed) without the items of
        `ids` or with a text whose match key is in `keys`."""
        from memvault.core.records import match_key

        hits = [it for it in doc.items if it.id in ids or match_key(it.text) in keys] \
            if doc is not None else []
        if not hits and not seen.ids & ids:
            return
        for item in sorted(hits, key=lambda it: it.start, reverse=True):
            doc.delete_item(item)  # type: ignore[union-attr]
        gone = ids | {it.id for it in hits}
        if doc is None:  # no copy kept (a large file): only the fingerprint's ids change
            head = {"format": 1, "path": path, "sha1": seen.sha1, "size": seen.size,
                    "ids": sorted(seen.ids - gone), "copy": False}
            self.backend.write(self.seen_path(path), json.dumps(head).encode() + b"\n",
                               expected=ANY, message="memvault: safety net")
            return
        self.store(path, doc.to_bytes(), doc, ids=seen.ids - gone)

    def _write_lost(self, items: list[LostItem]) -> None:
        lines = [json.dumps(it.to_dict()).encode() + b"\n" for it in items]  # \udcNN-safe
        while lines and sum(map(len, lines)) > MAX_LOST_BYTES:
            lines.pop(0)  # the oldest go first
        self.ensure_ignored()
        self.backend.write(LOST, b"".join(lines), expected=ANY, message="memvault: safety net")
