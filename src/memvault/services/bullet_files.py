"""Reading and editing the three bullet files (Memory.md, Lessons.md, Inbox.md).

`edit_bullet_file` is the one write path: under the backend's lock it reads the file,
parses it, lets the caller change items, and writes it back with compare-and-swap. If
the file changed underneath (another process, Obsidian, a remote commit), the edit is
re-applied to the fresh file a bounded number of times. Callers therefore express edits
by record id, never by line number from an earlier read.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from memvault.backends.base import MISSING, Backend, Expected
from memvault.core.bullets import BulletDocument, BulletItem, encode_id, parse_bullets
from memvault.errors import Conflict, NotFound, ReadOnly

T = TypeVar("T")
MAX_ATTEMPTS = 5


@dataclass(slots=True)
class LoadedFile:
    path: str
    doc: BulletDocument
    version: Expected
    exists: bool


def load_bullet_file(backend: Backend, path: str) -> LoadedFile:
    blob = backend.read(path)
    if blob is None:
        return LoadedFile(path, parse_bullets(b""), MISSING, False)
    return LoadedFile(path, parse_bullets(blob.data), blob.version, True)


class NoChange(Exception):
    """Raised inside an edit callback to finish without writing (carries the result)."""

    def __init__(self, result: object = None) -> None:
        super().__init__()
        self.result = result


def edit_bullet_file(backend: Backend, path: str, apply: Callable[[BulletDocument], T],
                     *, message: str = "memvault: update memory",
                     initial: bytes = b"") -> T:
    """Apply `apply(doc)` to the file and write it back atomically (see module doc).

    `initial` is the content a missing file starts from (e.g. a heading).
    """
    for _ in range(MAX_ATTEMPTS):
        with backend.lock():
            loaded = load_bullet_file(backend, path)
            doc = loaded.doc if loaded.exists else parse_bullets(initial)
            if doc.readonly_reason:
                raise ReadOnly(doc.readonly_reason, path=path)
            try:
                result = apply(doc)
            except NoChange as stop:
                return stop.result  # type: ignore[return-value]
            try:
                backend.write(path, doc.to_bytes(), expected=loaded.version, message=message)
            except Conflict:
                continue
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


def new_record_id(taken: set[str]) -> str:
    while True:
        candidate = encode_id(secrets.randbits(40))
        if candidate not in taken:
            return candidate
