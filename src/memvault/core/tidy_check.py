"""What every read of a memory file asks before the merge-leftover rules
(`core/reconcile.py`): a cheap byte-level check whether the file may hold anything they
would settle, and `Tidied`, what tidying returns. Kept apart from the rules so that a
command whose files hold nothing to settle never imports them (pure: bytes in)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memvault.core.bullets import BulletDocument
    from memvault.core.reconcile import ConflictBlock, DroppedVersion, Leftover

_ID_IN_COMMENT = re.compile(rb"<!--[^\n]*?[ \t]id:([0-9A-Za-z_-]+)")


@dataclass(slots=True)
class Tidied:
    data: bytes
    notes: list[str] = field(default_factory=list)
    dropped: list[DroppedVersion] = field(default_factory=list)
    blocks: list[ConflictBlock] = field(default_factory=list)
    """Blocks left for `memvault resolve`, with positions in `data`."""
    renumbered: list[str] = field(default_factory=list)
    """Copies given an id of their own (also what doctor reports as a duplicate id)."""
    leftovers: list[Leftover] = field(default_factory=list)
    """Id-less copies removed (line numbers in the file as it was given)."""
    doc: BulletDocument | None = None
    """`data` parsed, when tidying parsed it (a new object each call: a caller may edit
    it instead of parsing `data` again)."""

    @property
    def all_notes(self) -> list[str]:
        return self.notes + self.renumbered


_BULLET_START = re.compile(rb"\n[-*+][ \t]")


def might_need_tidy(data: bytes, dead: Iterable[str] = ()) -> bool:
    """A cheap byte-level test: False means `tidy` would change nothing."""
    if b"<<<<<<<" in data:
        return True
    ids = _ID_IN_COMMENT.findall(data)
    if len(ids) != len(set(ids)):
        return True
    if _may_hold_idless_bullets(data, len(ids)):
        return True  # maybe a copy of a hand-written line a merge left
    dead = set(dead)
    return bool(dead) and any(i.decode("utf-8", "replace") in dead for i in ids)


def _may_hold_idless_bullets(data: bytes, ids: int) -> bool:
    """More lines start like a top-level bullet than the file has id comments: two more
    (two hand-written lines), or one beside a fact."""
    starts = len(_BULLET_START.findall(data))  # (one pass: 4x quicker than six counts)
    if data[:1] in (b"-", b"*", b"+"):
        starts += 1
    return starts - ids >= 2 or (starts > ids > 0)
