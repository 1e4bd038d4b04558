"""Whether Inbox.md can hold a decision memvault has not applied yet (cheap, no parse).

Every front end applies the user's Inbox.md edits (a ticked box accepts, a deleted line
rejects) when it opens the vault. Most of the time there is nothing to apply, and
`inbox_as_written` says so from a few small reads: the inbox is missing or blank (no box
to tick, and such a file rejects nothing: `proposals.why_not_intact`), or it has no
ticked box and either holds exactly the bytes memvault last wrote there (the safety
net's fingerprint) or the journal holds no proposal of this principal still waiting (so
no deleted line can stand for one). Other principals' proposals in the shared journal
do not count: their inboxes are other files.

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


def inbox_as_written(read: Read, inbox: str, scope: str) -> bool:
    """True when the user cannot have decided anything in the inbox at `inbox` (the
    principal `scope`'s) since memvault last applied it (see the module doc); False
    means "run the full step", also when a file could not be read."""
    try:
        data = read(inbox)
        if data is None or not data.strip():
            return True  # nothing to tick, and a missing or blank inbox rejects nothing
        if _TICKED.search(data):
            return False  # a ticked box (or what may be one): the full step decides
        seen = _seen(read, inbox)
        if seen is not None:
            if len(data) != seen[1]:
                return False
            import hashlib

            return hashlib.sha1(data, usedforsecurity=False).hexdigest() == seen[0]
        journal = read(EVENTS)
    except Exception:  # noqa: BLE001 - the full step reports read problems
        return False
    return journal is None or not _waiting_proposals(journal, scope)


def _waiting_proposals(journal: bytes, scope: str) -> bool:
    """Whether the journal holds a proposal of `scope` not yet accepted, rejected or
    withdrawn (the same reading as `ProposalService.pending_ids`). Only lines that
    name a proposal event are parsed."""
    if b'"proposal.' not in journal:
        return False
    import json

    waiting: set[str] = set()
    for raw in journal.split(b"\n"):
        if b'"proposal.' not in raw:
            continue
        try:
            event = json.loads(raw)
        except ValueError:
            continue  # a torn line: the full step skips it too
        if not isinstance(event, dict) or event.get("scope", "default") != scope:
            continue
        kind, record = event.get("type"), str(event.get("record"))
        if kind == "proposal.proposed":
            waiting.add(record)
        elif kind in ("proposal.accepted", "proposal.rejected", "proposal.withdrawn"):
            waiting.discard(record)
    return bool(waiting)


def _seen(read: Read, path: str) -> tuple[str, int, frozenset[str], bytes | None] | None:
    try:
        data = read(seen_path(path))
    except Exception:  # noqa: BLE001 - a damaged net must never stop a command
        return None
    return None if data is None else parse_seen(data)
