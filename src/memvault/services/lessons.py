"""Lessons (docs/learning.md): how the assistant should work with this user, in Lessons.md.

A lesson is proposed (a `kind:lesson` proposal in Inbox.md), reviewed like any proposal,
and only then written to Lessons.md (by `ProposalService.accept`). Every lesson category
except `risk-posture` must cite evidence that exists: an event id in
`.memvault/events.jsonl` or a trade note `Trades/<hash>.md` of this principal. A
proposal citing a missing id is refused with an error naming that id.

This service never writes Memory.md or Policy.md directly.
"""

from __future__ import annotations

import builtins
import re
from typing import TYPE_CHECKING

from memvault.core.records import (
    GENERAL_LESSON_CATEGORIES,
    LESSON_CATEGORIES,
    Lesson,
    check_category,
    record_from_item,
)
from memvault.errors import BadInput, InvalidInput, NotFound
from memvault.services.bullet_files import load_bullet_file
from memvault.services.one_commit import one_commit
from memvault.services.proposals import ProposeResult
from memvault.state_paths import EVENTS

if TYPE_CHECKING:
    from memvault.services.vault import Vault

NO_EVIDENCE_NEEDED = ("risk-posture",)
# Journal event ids (`ev-1796040736-bcc6354c`) and trade hashes (`0x3f…`); nothing that
# could end the metadata comment or hide in it.
_EVIDENCE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}\Z")


class LessonService:
    def __init__(self, vault: Vault) -> None:
        self.vault = vault
        self.path = vault.layout.lessons

    def list(self) -> list[Lesson]:
        doc = load_bullet_file(self.vault.backend, self.path).doc
        return [record_from_item(it, Lesson, LESSON_CATEGORIES) for it in doc.items]

    # `list` below names the method above: the builtin is spelled builtins.list
    def missing_evidence(self, ids: builtins.list[str]) -> builtins.list[str]:
        """The ids that are neither a journal event nor a trade note of this principal."""
        if not ids:
            return []
        events = {str(ev.get("id")) for ev in self.vault.events.events()}
        missing = []
        for eid in ids:
            if eid in events:
                continue
            if self._trade_note_exists(eid):
                continue
            missing.append(eid)
        return missing

    def _trade_note_exists(self, eid: str) -> bool:
        from memvault.core.paths import check_safe_name

        try:
            check_safe_name(eid, "evidence id")
        except InvalidInput:
            return False
        return self.vault.backend.read(f"{self.vault.layout.trades_dir}/{eid}.md") is not None

    def categories(self) -> tuple[str, ...]:
        """The lesson categories this vault offers: the general ones, and the trading ones
        when it uses trading."""
        if self.vault.uses_trading():
            return LESSON_CATEGORIES
        return GENERAL_LESSON_CATEGORIES

    @one_commit("memvault: propose a lesson")
    def propose(self, text: str, category: str, evidence: builtins.list[str] | None = None, *,
                source: str = "agent") -> ProposeResult:
        """Propose a lesson after checking its evidence (see module doc)."""
        offered = self.categories()
        if not category:
            raise BadInput("a lesson needs --category: " + ", ".join(offered))
        lowered = category.strip().lower()
        if lowered in LESSON_CATEGORIES and lowered not in offered:
            raise BadInput(f"{lowered} is a trading lesson category and this vault "
                           "records no trades; use one of " + ", ".join(offered))
        cat = check_category(category, offered)  # unknown: lists this vault's categories
        ids = [e.strip() for raw in (evidence or []) for e in raw.split(",") if e.strip()]
        ids = list(dict.fromkeys(ids))
        for eid in ids:
            if not _EVIDENCE_ID.match(eid):
                raise BadInput(f"evidence id {eid[:40]!r} is not a valid id (letters, "
                               "digits, _ . : -, at most 128)")
        if cat not in NO_EVIDENCE_NEEDED and not ids:
            raise BadInput(f"a {cat} lesson needs --evidence: the ids of journal events "
                           "or trades it rests on (only risk-posture needs none)")
        missing = self.missing_evidence(ids)
        if missing:
            raise NotFound(f"evidence {missing[0]!r} is not in the journal "
                           f"({EVENTS}) or {self.vault.layout.trades_dir}/; "
                           "a lesson must rest on recorded experience")
        return self.vault.proposals.propose(text, cat, kind="lesson", source=source,
                                            evidence=ids or None)
