"""Whether Inbox.md can hold a decision memvault has not applied yet (cheap, no parse).

Every front end applies the user's Inbox.md edits (a ticked box accepts, a deleted line
rejects) when it opens the vault. Most of the time there is nothing to apply, and
`inbox_as_written` says so from a few small reads: no ticked box, and either the file
holds exactly the bytes memvault last wrote there (the safety net's fingerprint) or the
journal has never held a proposal (so no line can stand for a pending one).

Also here, because that check needs them and must stay cheap to import (the quick
search path runs it before anything else is loaded): where the safety net keeps its
file for a memory file (`seen_path`) and how that file's first line, the fingerprint,
is read (`parse_seen`).
"""

from __future__ import annotations

import re

from memvault.state_paths import EVENTS, SAFETY

TYPE_CHECKING = False  # on the cold path of `memvault search --json`
if TYPE_CHECKING:
    from collections.abc import Callable

    Read = Callable[[str], bytes | None]
    """Reads a vault-relative file: its bytes, None when missing; raises when unreadable."""

_TICKED = re.compile(rb"(?m)^[ \t]*[-*+][ \t]+\[[xX]\]")


def seen_path(path: str) -> str:
    """The safety net's file for the memory file at vault-relative `path`."""
    return f"{SAFETY}/" + path.replace("%", "%25").replace("/", "%2F")


def parse_seen(data: bytes) -> tuple[str, int, frozenset[str], bytes | None] | None:
    """(sha1, size, ids, last-known copy or None) from a safety-net file; None when its
    first line is not a fingerprint."""
    import json

    head, _, rest = data.partition(b"\n")
    try:
        meta = json.loads(head)
        return (str(meta["sha1"]), int(meta["size"]), frozenset(meta["ids"]),
                rest if meta.get("copy") else None)
    except (ValueError, KeyError, TypeError):
        return None


def inbox_as_written(read: Read, inbox: str) -> bool:
    """True when the user cannot have decided anything in the inbox at `inbox` since
    memvault last applied it (see the module doc); False means "run the full step",
    also when a file could not be read."""
    try:
        data = read(inbox)
        if data is not None and _TICKED.search(data):
            return False  # a ticked box (or what may be one): the full step decides
        seen = _seen(read, inbox)
        if seen is not None:
            if data is None or len(data) != seen[1]:
                return False
            import hashlib

            return hashlib.sha1(data, usedforsecurity=False).hexdigest() == seen[0]
        journal = read(EVENTS)
    except Exception:  # noqa: BLE001 - the full step reports read problems
        return False
    return journal is None or b'"proposal.' not in journal


def _seen(read: Read, path: str) -> tuple[str, int, frozenset[str], bytes | None] | None:
    try:
        data = read(seen_path(path))
    except Exception:  # noqa: BLE001 - a damaged net must never stop a command
        return None
    return None if data is None else parse_seen(data)
