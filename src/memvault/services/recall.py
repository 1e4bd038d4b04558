"""`vault.recall`: how relevant each remembered record is to a request.

Used by the context block when not everything fits its budget. Relevance is read from
the search index's per-record rows of this principal's memory files (refreshed with
three `stat`s, not a walk of the vault), so it works wherever search does: on the vault
folder, or on the backend's local copy of a remote store's notes. Where search cannot
run (a remote store with its cache turned off) no record is ranked by relevance and the
block falls back to standing and recency. Reads only; the one file it may write is the index cache.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memvault.core.context import Relevance
from memvault.errors import VaultError
from memvault.index.recall import Scored, diversify, fuse

if TYPE_CHECKING:
    from memvault.services.search import SearchService
    from memvault.services.vault import Vault

LEXICAL_REASON = "shares words with the request"
SEMANTIC_REASON = "close in meaning to the request"
BOTH_REASON = "shares words with and is close in meaning to the request"
RELEVANT_MIN = 0.2
"""Hybrid score below which a record does not count as relevant to the request."""
RELEVANT_MAX = 100
"""At most this many records are ranked by relevance; the rest keep their standing."""


class RecallService:
    def __init__(self, vault: Vault) -> None:
        self.vault = vault

    def relevance(self, request: str, *,
                  search: SearchService | None = None) -> dict[str, Relevance]:
        """Record id -> relevance to `request` (hybrid: words and meaning); empty when it
        cannot be measured."""
        service = search or self.vault.search
        if not request.strip() or not service.available():
            return {}
        try:
            lexical, cosine = service.memory_scores(request)
        except VaultError:
            return {}  # an unusable index or endpoint never stops the context block
        return select_relevant(fuse(lexical, cosine), cosine)


def select_relevant(scores: dict[str, Scored], cosine: object = None) -> dict[str, Relevance]:
    """The `RELEVANT_MAX` best records scoring at least `RELEVANT_MIN`, their scores
    lowered for near-repeats of a better one (`diversify`, when `cosine` has vectors)."""
    best = sorted(((s.score, rid) for rid, s in scores.items() if s.score >= RELEVANT_MIN),
                  key=lambda pair: (-pair[0], pair[1]))[:RELEVANT_MAX]
    varied = diversify({rid: score for score, rid in best}, cosine)
    return {rid: Relevance(round(varied[rid], 4), _reason(scores[rid])) for _, rid in best}


def _reason(scored: Scored) -> str:
    if scored.lexical >= 0.3 and scored.semantic >= 0.3:
        return BOTH_REASON
    return LEXICAL_REASON if scored.lexical >= scored.semantic else SEMANTIC_REASON
