"""`memvault learn`: turn repeated facts in validated trades into pending proposals.

Reads the `trade` events of this principal from the experience journal, applies the
pure rules of `memvault.core.inference`, and hands each candidate to
`vault.proposals.propose(..., source="inference", automatic=True)`, which refuses it
when learning is off, when its text was forgotten or rejected (tombstone), or when it
duplicates an accepted fact or a pending proposal. Nothing is ever accepted here.

Never writes Policy.md, Memory.md or Lessons.md: its only output is Inbox.md proposals.
"""

from __future__ import annotations

import datetime as _dt
from typing import TYPE_CHECKING, Any

from memvault.core.inference import Candidate, Observation, infer_candidates
from memvault.services.journal import scan_events
from memvault.state_paths import EVENTS

if TYPE_CHECKING:
    from memvault.services.proposals import ProposeResult
    from memvault.services.vault import Vault


class LearningService:
    def __init__(self, vault: Vault) -> None:
        self.vault = vault

    def observations(self) -> list[Observation]:
        blob = self.vault.backend.read(EVENTS)
        if blob is None:
            return []
        scope = self.vault.layout.scope_name
        out: list[Observation] = []
        for ev in scan_events(blob.data, ("trade",), scope=scope):
            if ev.get("type") != "trade":
                continue
            ob = _observation(ev)
            if ob is not None:
                out.append(ob)
        return out

    def _existing_texts(self) -> list[str]:
        from memvault.services.bullet_files import load_bullet_file

        texts: list[str] = []
        for path in (self.vault.layout.memory, self.vault.layout.inbox):
            texts.extend(it.text for it in load_bullet_file(self.vault.backend, path).doc.items)
        return texts

    def candidates(self) -> list[Candidate]:
        return infer_candidates(self.observations(), self._existing_texts())

    def run(self) -> list[ProposeResult]:
        """Propose every current candidate; returns what happened to each."""
        if not self.vault.config.learning:
            return []
        results = []
        for cand in self.candidates():
            results.append(self.vault.proposals.propose(
                cand.text, cand.category, kind="fact", source="inference",
                authority="inferred", evidence=list(cand.evidence), automatic=True))
        return results


def _observation(ev: dict[str, Any]) -> Observation | None:
    trade = ev.get("trade")
    if not isinstance(trade, dict):
        return None
    try:
        ts = int(ev.get("ts") or 0)
    except (TypeError, ValueError):
        return None
    day = ev.get("date") or _dt.datetime.fromtimestamp(ts, _dt.UTC).date().isoformat()
    a, b = trade.get("asset_in"), trade.get("asset_out")
    if not isinstance(a, str) or not isinstance(b, str) or not ts:
        return None
    return Observation(str(trade.get("hash") or ev["id"]), ts, str(day), a, b)
