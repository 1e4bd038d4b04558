"""Reading a note's frontmatter properties through the backend, and setting one of them.

`load_properties` never fails on a broken file (the `Frontmatter` carries the reason);
`set_note_property` edits one key's lines (see `memvault.core.frontmatter`) under the
backend lock with compare-and-swap, so a concurrent edit in Obsidian is never lost.

It refuses Policy.md: the only writer of the policy is `PolicyService.set`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from memvault.backends.base import MISSING, Backend, Expected
from memvault.core.frontmatter import Frontmatter, parse_frontmatter, set_property
from memvault.errors import InvalidInput, ReadOnly


@dataclass(slots=True)
class LoadedNote:
    path: str
    fm: Frontmatter
    version: Expected
    exists: bool
    linked_to: str | None = None
    """Where the path really led, when it was read through a symlink."""


def load_properties(backend: Backend, path: str, initial: bytes = b"") -> LoadedNote:
    from memvault.services.settle import read_settled_file

    blob = read_settled_file(backend, path)  # an empty note caught mid-save is waited for
    if blob is None:
        return LoadedNote(path, parse_frontmatter(initial), MISSING, False)
    return LoadedNote(path, parse_frontmatter(blob.data), blob.version, True, blob.linked_to)


def is_policy_path(path: str) -> bool:
    return path.rsplit("/", 1)[-1].casefold() == "policy.md"


def set_note_property(backend: Backend, path: str, key: str, value: Any, *,
                      initial: bytes = b"", message: str = "") -> bytes:
    """Set `key` in the note at `path` (created from `initial` if missing)."""
    if is_policy_path(path):
        raise InvalidInput("Policy.md is changed only by `memvault policy set`", path=path)
    with backend.lock():
        loaded = load_properties(backend, path, initial)
        if loaded.fm.readonly_reason:
            raise ReadOnly(f"properties are read-only: {loaded.fm.readonly_reason}", path=path)
        try:
            new = set_property(loaded.fm, key, value)
        except (InvalidInput, ReadOnly) as exc:
            raise type(exc)(str(exc), path=path) from None
        backend.write(path, new, expected=loaded.version, message=message or
                      f"memvault: set {key} in {path}")
        return new
