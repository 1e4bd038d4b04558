"""`vault.recall`: how relevant each remembered record is to a request.

Used by the context block when not everything fits its budget. Relevance is read from
the search index's per-record rows of this principal's memory files (refreshed with
three `stat`s, not a walk of the vault), so it needs the local folder (`fs` backend);
elsewhere no record is ranked by relevance and the block falls back to standing and
recency. Reads only; the one file it may write is the index cache.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memvault.core.context import Relevance
from memvault.errors import VaultError

if TYPE_CHECKING:
    from memvault.services.search import SearchService
    from memvault.services.vault import Vault

LEXICAL_REASON = "shares words with the request"


class RecallService:
    def __init__(self, vault: Vault) -> None:
        self.vault = vault

    def relevance(self, request: str, *,
                  search: SearchService | None = None) -> dict[str, Relevance]:
        """Record id -> relevance to `request`; empty when it cannot be measured."""
        if self.vault.backend.name != "fs" or not request.strip():
            return {}
        service = search or self.vault.search
        try:
            lexical = service.memory_relevance(request)
        except VaultError:
            return {}  # an unusable index never stops the context block
        return {rid: Relevance(round(score, 4), LEXICAL_REASON)
                for rid, score in lexical.items() if score > 0}
