"""Reading and editing the bullet files (one per record kind: Memory.md, Lessons.md,
Inbox.md).

`edit_bullet_file` is the one write path. Under the backend's lock it

1. reads the file *settled* (`read_settled`): a file that is empty, shorter than, or
   missing records since memvault last saw it (the safety net's fingerprint) is treated as
   being saved by another program, and read again until it has been still for a second
   (at most two; see `settle.py`; then the edit is refused and nothing is written);
2. moves records that vanished without memvault removing them into the safety net;
3. parses it (from the parse cache when it holds these exact bytes: `parse_cache.py`),
   lets the caller change items, and writes it back with compare-and-swap; if the file
   changed underneath (another process, Obsidian, a remote commit), the edit is re-applied
   to the fresh file a bounded number of times;
4. records the new bytes in the safety net and the parse cache: *before* the write when
   the edit removes records (the net's copy is replaced and the cache entry deleted, so a
   crash never leaves a removed text only there), after it otherwise.

Callers therefore express edits by record id, never by line number from an earlier read.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar, cast

from memvault.backends.base import MISSING, Backend, Blob, Expected
from memvault.core.bullets import BulletDocument, BulletItem, encode_id, parse_bullets
from memvault.core.kinds import kind_of_file
from memvault.errors import Conflict, NotFound, ReadOnly
from memvault.services import parse_cache, parse_cache_forget
from memvault.services.safety_net import SafetyNet, Seen, record_ids
from memvault.services.settle import read_settled_file

T = TypeVar("T")
MAX_ATTEMPTS = 8

@dataclass(slots=True)
class LoadedFile:
    path: str
    doc: BulletDocument
    version: Expected
    exists: bool


def _loaded(backend: Backend, path: str, blob: Blob | None, *,
            keep: bool = True) -> LoadedFile:
    """The file parsed (`keep`: a parse the cache did not hold is stored there)."""
    if blob is None:
        return LoadedFile(path, parse_bullets(b""), MISSING, False)
    return LoadedFile(path, parse_cache.parse(backend, path, blob.data, keep=keep),
                      blob.version, True)


def load_bullet_file(backend: Backend, path: str) -> LoadedFile:
    """The file as readers see it (an empty file caught mid-save is waited for): what a
    merge left is settled and an open conflict block shows this clone's version
    (`memvault.services.tidy.read_view`). Never writes."""
    from memvault.services.tidy import read_document

    blob = read_settled(backend, path, None)
    if blob is None:
        return _loaded(backend, path, None)
    return LoadedFile(path, read_document(backend, path, blob.data), blob.version, True)


def load_raw(backend: Backend, path: str) -> LoadedFile:
    """The file exactly as it is on disk, merge leftovers included (for `doctor`)."""
    return _loaded(backend, path, read_settled(backend, path, None))


def suspicion(blob: Blob | None, seen: Seen | None) -> str | None:
    """Why this read may have caught the file in the middle of a save, or None.

    Without a fingerprint only an empty file is suspicious; with one, also a file that is
    missing, shorter, cut off mid-line, or lacks records it had when memvault last saw it.
    """
    if blob is None:
        return "it is missing" if seen is not None and seen.size else None
    if not blob.data:
        return "it is empty" if seen is None or seen.size else None
    if seen is None or blob.data == seen.copy:
        return None
    if len(blob.data) < seen.size:
        return f"it shrank from {seen.size} to {len(blob.data)} bytes"
    if seen.copy and seen.copy.endswith(b"\n") and not blob.data.endswith(b"\n"):
        return "it ends in the middle of a line"
    gone = seen.ids - record_ids(parse_bullets(blob.data))
    if gone:
        return f"{len(gone)} record(s) vanished"
    return None


def read_settled(backend: Backend, path: str, seen: Seen | None) -> Blob | None:
    """Read a bullet file settled (`settle.read_settled_file`), suspicious per
    `suspicion` against what memvault last saw of it (`seen`)."""
    return read_settled_file(backend, path, lambda blob: suspicion(blob, seen))


class NoChange(Exception):
    """Raised inside an edit callback to finish without writing (carries the result)."""

    def __init__(self, result: object = None) -> None:
        super().__init__()
        self.result = result


def edit_bullet_file(backend: Backend, path: str, apply: Callable[[BulletDocument], T],
                     *, message: str = "memvault: update memory",
                     initial: bytes = b"") -> T:
    """Apply `apply(doc)` to the file and write it back atomically (see module doc).

    `initial` is the content a missing file starts from (e.g. a heading). Records that
    vanished are kept as lost only for the kinds that keep them (`RecordKind.keeps_lost`):
    from Inbox.md a deleted proposal is a rejection, which the proposal service applies
    from a settled, intact read.
    """
    from memvault.services.tidy import record_dropped, report_notes, write_view

    kind = kind_of_file(path.rpartition("/")[2])
    track_losses = kind is None or kind.keeps_lost
    net = SafetyNet(backend)
    for attempt in range(MAX_ATTEMPTS):
        if attempt:  # another program is saving: give it a moment, not a tight loop
            import random

            time.sleep(random.uniform(0.01, 0.05) * attempt)
        with backend.lock():
            seen = net.seen(path)
            blob = read_settled(backend, path, seen)
            # What a merge left is settled in the same write, as memvault's own change
            # (open conflict blocks stay, their items read-only, for `memvault resolve`).
            tidied = write_view(backend, path, blob.data) if blob is not None else None
            settled = blob is not None and tidied is not None and tidied.data != blob.data
            if blob is not None and tidied is not None and not settled and \
                    tidied.doc is not None:
                loaded = LoadedFile(path, tidied.doc, blob.version, True)  # parsed once
            else:
                loaded = _loaded(backend, path, blob, keep=False)  # stored after the write
            doc = loaded.doc if loaded.exists else parse_bullets(initial)
            if doc.readonly_reason:
                raise ReadOnly(doc.readonly_reason, path=path)
            before = record_ids(doc)
            if track_losses:
                net.note_lost(net.vanished(path, seen, doc, before))
            if tidied is not None and settled:
                doc = tidied.doc if tidied.doc is not None else parse_bullets(tidied.data)
            try:
                result = apply(doc)
            except NoChange as stop:
                if tidied is None or blob is None or tidied.data == blob.data:
                    return cast(T, stop.result)
                result = cast(T, stop.result)  # nothing asked, but the merge leftovers are written
            data = doc.to_bytes()
            after = record_ids(doc)
            if before - after:  # removes records: their text leaves the net first
                net.store(path, data, doc, ids=before & after)
                parse_cache_forget.drop(backend, path)
            try:
                written = backend.write(path, data, expected=loaded.version, message=message)
            except Conflict:
                continue
            if after - before or not before - after:
                # nothing removed, or the removal's words already left the net before the
                # write (durably): this copy holds only what the file now holds
                net.store(path, data, doc, ids=after, durable=False, version=written)
            parse_cache.store(backend, path, data, doc)
            if tidied is not None:
                record_dropped(backend, path, tidied)
                report_notes(tidied.all_notes)
            return result
    raise Conflict("kept changing while memvault tried to update it; nothing was written",
                   path=path)


def find_one(doc: BulletDocument, item_id: str, path: str) -> BulletItem:
    """The single editable item with this id, or a clear error."""
    found = doc.find(item_id)
    if not found:
        raise NotFound(f"no record with id {item_id!r}", path=path)
    if len(found) > 1:
        lines = ", ".join(str(it.line_no) for it in found)
        raise Conflict(f"id {item_id!r} appears on lines {lines}; run `memvault doctor --fix` "
                       "to give the later copy a new id", path=path)
    item = found[0]
    if item.readonly_reason:
        raise ReadOnly(f"line {item.line_no} is read-only: {item.readonly_reason}", path=path)
    return item


def ids_in_files(backend: Backend, paths: list[str]) -> set[str]:
    """Every record id in these bullet files as they are now (a plain read: never waits).

    Ids are unique across a principal's bullet files, not only within one: a new id is
    checked against this set too, so looking a record up by id across the kinds finds
    one record."""
    ids: set[str] = set()
    for path in paths:
        blob = backend.read(path)
        if blob is not None:
            ids.update(it.id for it in parse_cache.parse(backend, path, blob.data).items)
    return ids


def ids_beside(backend: Backend, files: tuple[str, ...], path: str) -> set[str]:
    """The record ids of every bullet file in `files` but `path` (a principal's
    `Layout.memory_files`): what a new record in `path` must not reuse."""
    return ids_in_files(backend, [p for p in files if p != path])


def derived_record_id(record_id: str, taken: set[str]) -> str:
    """`record_id` when it is free, else the first free id derived from it by hashing:
    the same on every machine, so two clones accepting the same colliding proposal store
    it under the same id (and their merge sees one record)."""
    import hashlib

    n = 0
    candidate = record_id
    while candidate in taken:
        n += 1
        digest = hashlib.sha256(f"{record_id}\n{n}".encode()).digest()
        candidate = encode_id(int.from_bytes(digest[:5], "big"))
    return candidate


def random_id_number() -> int:
    """40 bits from the system's random source (as `secrets.randbits(40)` draws them,
    without importing `secrets`, `random`, `base64` and `hmac` on every write)."""
    return int.from_bytes(os.urandom(5), "big")


def new_record_id(taken: set[str]) -> str:
    """A random id that is not in `taken` (drawn again until it is free)."""
    while True:
        candidate = encode_id(random_id_number())
        if candidate not in taken:
            return candidate
