"""After a permanent forget: the notes that still hold the forgotten words.

memvault never edits a note the person wrote. A permanent forget removes the words from
the memory files, the journal and every cache, but a day note, a reflection or any
other Markdown file that holds them keeps them. So before the forget, the search index
(brought in step first) is asked which notes this principal can see hold any wording the
fact ever had, as a phrase; when this machine has no index of a local vault, the notes
are read once instead (`services.note_scan`: building a whole index for one question
costs ten times more, and the forget deletes it right after); the forget's result names
them (paths only, never the words), so the person can edit them. Memory files are not
notes: the forget itself cleans them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memvault.services.vault import Vault

LISTED = 100
"""At most this many paths are carried in a result (the total is always given)."""


@dataclass(slots=True)
class NotesHolding:
    paths: list[str]
    """Sorted, at most `LISTED`."""
    total: int

    def to_dict(self) -> dict[str, Any]:
        return {"still_in_notes": self.paths, "still_in_notes_total": self.total}


def notes_holding(vault: Vault, texts: list[str]) -> NotesHolding | None:
    """The notes holding any of `texts`, or None when the vault cannot be searched here
    (no notes on this machine, an index that cannot be read). A store kept elsewhere
    (GitHub) is asked only when this machine already keeps a copy of its notes with an
    index (it has searched before): the forget does not download every note to answer."""
    from memvault.errors import VaultError

    texts = list(dict.fromkeys(t for t in texts if t.strip()))
    if not texts or not vault.search.available():
        return None
    index = vault.search.index_path()
    no_index = index is None or not index.exists()
    root = vault.backend.capabilities.local_root
    if root is None and no_index:
        return None
    try:
        if root is not None and no_index:
            from memvault.services.note_scan import notes_with_wording

            found = notes_with_wording(root, vault.config.home, texts,
                                       vault.layout.can_see)
        else:
            found = vault.search.notes_holding(texts)
    except VaultError:
        return None
    return NotesHolding(found[:LISTED], len(found))
