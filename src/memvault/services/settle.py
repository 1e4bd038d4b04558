"""Reading a file another program may be saving at this very moment.

Editors save in two ways. By rename (write a temp file, rename it over the note): a
reader sees the old file or the new one. In place (truncate, then write: Node's
`fs.writeFile`, and so Obsidian): for a moment the file is empty, or holds only part of
its new bytes. A write built on that moment would replace the user's file with almost
nothing, and the editor's bytes would then go to a file that no longer has a name.

`read_settled_file(backend, path, suspicion)` reads the file; if `suspicion(blob)` names a
reason the read may have caught such a moment, it reads again until the file has been
still for `QUIET_SECONDS` (by its change time, or as observed here: a clock that is off
cannot make a fresh change look settled while memvault watches it change), and returns
what the file settled to. A file that keeps changing for `SETTLE_SECONDS` is used as it
is when its latest read is whole (ends with a newline), and refused otherwise (Conflict:
one line, nothing written). Stores whose changes arrive whole (`Blob.changed_ns` None,
e.g. GitHub) are never waited for.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from memvault.backends.base import Backend, Blob
from memvault.errors import Conflict

QUIET_SECONDS = 1.0
"""A suspicious file is settled once it has not changed for this long."""

SETTLE_SECONDS = 2.0
"""How long a read waits for a suspicious file to settle."""

_POLL_SECONDS = 0.02


def empty_file(blob: Blob | None) -> str | None:
    """The suspicion for a note with no fingerprint: only an empty file."""
    return "it is empty" if blob is not None and not blob.data else None


def _whole(blob: Blob | None) -> bool:
    """A read that cannot be a save cut short: a file with content ending in a newline."""
    return blob is not None and blob.data.endswith(b"\n")


def read_settled_file(backend: Backend, path: str,
                      suspicion: Callable[[Blob | None], str | None] = empty_file
                      ) -> Blob | None:
    """Read `path`; if the read looks like a save in progress (see `suspicion`), read it
    again until it has been still for `QUIET_SECONDS` (by its change time, or as observed
    here), and return what it settled on.

    A file that keeps changing for `SETTLE_SECONDS`: its latest state is used when it is
    whole (an editor saving complete files in a row; records it dropped are caught by the
    safety net), and the read is refused (Conflict, nothing written) when it is empty or
    cut off mid-line.
    """
    blob = backend.read(path)
    reason = suspicion(blob)
    if reason is None or (blob is not None and blob.changed_ns is None):
        return blob  # nothing odd, or a store whose changes arrive whole
    start = still_since = time.monotonic()
    while True:
        now = time.monotonic()
        age = (time.time_ns() - blob.changed_ns) / 1e9 if blob and blob.changed_ns else 0.0
        if age >= QUIET_SECONDS or now - still_since >= QUIET_SECONDS:
            return blob  # settled: the caller proceeds on what is there now
        if now - start >= SETTLE_SECONDS:
            if _whole(blob):
                return blob
            raise Conflict(f"looks like another program is saving it ({reason}, changed "
                           f"{max(age, 0):.1f} s ago); nothing was written (try again)",
                           path=path)
        time.sleep(_POLL_SECONDS)
        fresh = backend.read(path)
        if (fresh and fresh.version) != (blob and blob.version):
            blob, still_since = fresh, time.monotonic()
            reason = suspicion(blob)
            if reason is None:
                return blob
