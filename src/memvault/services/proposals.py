"""Proposals in Inbox.md: nothing the user did not state is saved without review.

A proposal is a task bullet in Inbox.md (the shared bullet grammar)::

    - [ ] Short answers [communication] <!-- id:p7f3a1 kind:fact src:chat proposed:1784594521 -->

- `propose` adds one (deduped against Memory.md, Lessons.md and the inbox; refused when
  its text was forgotten or rejected before — the tombstone check is content-free).
- `accept` moves it into Memory.md (kind fact) or Lessons.md (kind lesson), keeping its
  id (a proposal whose id another record already has, which older vaults and imports can
  hold, is stored under an id derived from it, the same on every machine, and the journal
  says so); `correct` accepts it with the user's wording (which makes it explicit); `reject`
  removes it and writes a tombstone so it is never proposed again.
- `apply_inbox_edits` applies what the user did in Obsidian: a ticked box accepts, a
  deleted line rejects (only when the inbox was read whole: an empty, truncated or
  symlinked Inbox.md rejects nothing). It writes nothing when there is nothing to apply.
  A ticked line that cannot be accepted (its text breaks the text rule, say) is *held*:
  it stays ticked and pending, the other decisions still take effect, and the line is
  reported with its file, line and reason (`held_ticks` lists them for doctor).
  Front ends call it through `Vault.apply_inbox_edits()`, once per command or tool call.

This service never writes Policy.md or any limit: an accepted proposal is only text.
"""

from __future__ import annotations

import builtins  # `builtins.list` in classes that have a method named list
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from memvault.backends.base import Blob
from memvault.core.bullets import BulletDocument, parse_bullets, render_new_item
from memvault.core.kinds import PROPOSAL, kind_named, proposable_kinds
from memvault.core.records import (
    INBOX_CATEGORIES,
    Proposal,
    Record,
    check_category,
    check_record_text,
    match_key,
    record_from_item,
)
from memvault.errors import BadInput, InvalidInput, VaultError
from memvault.services.bullet_files import (
    NoChange,
    derived_record_id,
    edit_bullet_file,
    find_one,
    ids_beside,
    ids_in_files,
    load_bullet_file,
    new_record_id,
    read_settled,
)
from memvault.services.journal import scan_events
from memvault.services.one_commit import one_commit
from memvault.services.safety_net import SafetyNet, Seen
from memvault.state_paths import EVENTS

if TYPE_CHECKING:
    from memvault.services.doctor import Finding
    from memvault.services.vault import Vault

MAX_PER_TURN = 3
__all__ = ["INBOX_CATEGORIES", "ProposalService", "ProposeResult", "why_not_intact"]


ProposeStatus = Literal["proposed", "duplicate", "tombstoned", "learning-off", "over-limit"]


@dataclass(slots=True)
class ProposeResult:
    """What happened to one candidate: `status` is proposed, duplicate, tombstoned,
    learning-off or over-limit; `proposal` is set when it is in the inbox."""

    status: ProposeStatus
    text: str
    proposal: Proposal | None = None
    existing_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"status": self.status, "text": self.text,
                "proposal": self.proposal.to_dict() if self.proposal else None,
                "existing_id": self.existing_id}


@dataclass(frozen=True, slots=True)
class HeldTick:
    """A ticked proposal that could not be accepted. It stays in the inbox, ticked and
    pending, until the person rewords or unticks it."""

    path: str
    line: int
    id: str
    text: str
    reason: str

    @property
    def message(self) -> str:
        return (f"ticked proposal {self.id} cannot be accepted and stays pending (edit the "
                f"line or untick it): {self.reason}")

    @property
    def key(self) -> str:
        """Who it is: the same proposal, text and reason (not the line number, which
        moves when other lines change)."""
        return "\0".join((self.path, self.id, self.text, self.reason))

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


InboxDecision = Literal["accepted", "rejected"]


@dataclass(slots=True)
class InboxEdits:
    """What applying Inbox.md did: `applied` holds (action, record) pairs, action being
    "accepted" or "rejected"; `held` the ticked lines left pending; `to_report` those of
    them no command has mentioned yet; `problem` when the inbox could not be read."""

    applied: list[tuple[InboxDecision, Record]] = field(default_factory=list)
    held: list[HeldTick] = field(default_factory=list)
    problem: str | None = None
    to_report: list[HeldTick] = field(default_factory=list)


def _now() -> int:
    return int(time.time())


class ProposalService:
    """The inbox of one principal."""

    def __init__(self, vault: Vault) -> None:
        self.vault = vault
        self.backend = vault.backend
        self.path = vault.layout.inbox

    # -- reading -----------------------------------------------------------------------

    def list(self) -> list[Proposal]:
        doc = load_bullet_file(self.backend, self.path).doc
        return [record_from_item(it, Proposal, INBOX_CATEGORIES) for it in doc.items]

    def get(self, proposal_id: str) -> Proposal:
        doc = load_bullet_file(self.backend, self.path).doc
        return record_from_item(find_one(doc, proposal_id, self.path), Proposal,
                                INBOX_CATEGORIES)

    # -- proposing ---------------------------------------------------------------------

    @one_commit("memvault: propose")
    def propose(self, text: str, category: str | None = None, *, kind: str = "fact",
                source: str = "agent", authority: str = "inferred",
                evidence: builtins.list[str] | None = None, automatic: bool = False,
                extra_meta: dict[str, str] | None = None) -> ProposeResult:
        """Add one proposal to the inbox (see module doc for what is refused)."""
        if kind not in proposable_kinds():
            raise BadInput(f"kind must be {' or '.join(proposable_kinds())}, not {kind!r}")
        target = kind_named(kind)
        text = check_record_text(text)
        cat = check_category(category, target.categories) if category else \
            target.default_category
        if cat is None:
            raise BadInput(f"a {kind} needs a --category: " + ", ".join(target.categories))
        if automatic and not self.vault.config.learning:
            return ProposeResult("learning-off", text)
        if self.vault.tombstones.is_tombstoned(text):
            return ProposeResult("tombstoned", text)
        existing = self._accepted_with_text(text)
        if existing:
            return ProposeResult("duplicate", text, existing_id=existing)
        key = match_key(text)

        def apply(doc: BulletDocument) -> ProposeResult:
            for it in doc.items:
                if match_key(it.text) == key:
                    raise NoChange(ProposeResult("duplicate", text, existing_id=it.id))
            pid = new_record_id({it.id for it in doc.items} | ids_beside(
                self.backend, self.vault.layout.memory_files, self.path))
            meta = {"id": pid, "kind": kind, "src": source, "proposed": str(_now())}
            if authority == "inferred":
                meta["auth"] = "inferred"
            if evidence:
                meta["evidence"] = ",".join(evidence)
            meta.update(extra_meta or {})
            doc.insert_item(render_new_item(text, cat, meta, task=" "))
            return ProposeResult("proposed", text, proposal=record_from_item(
                doc.find(pid)[0], Proposal, INBOX_CATEGORIES))

        result = edit_bullet_file(self.backend, self.path, apply,
                                  message="memvault: new proposal",
                                  initial=PROPOSAL.new_file())
        if result.proposal is not None:
            p = result.proposal
            self.vault.events.append("proposal.proposed", record=p.id, text=p.text,
                                     category=p.category_raw, kind=kind, source=source,
                                     evidence=evidence or [])
        return result

    @one_commit("memvault: propose")
    def propose_many(self, candidates: builtins.list[tuple[str, str | None]], *, source: str,
                     automatic: bool = True, kind: str = "fact") -> builtins.list[ProposeResult]:
        """Propose candidates from one chat turn: at most 3 reach the inbox."""
        results: list[ProposeResult] = []
        proposed = 0
        for text, category in candidates:
            if proposed >= MAX_PER_TURN:
                results.append(ProposeResult("over-limit", text))
                continue
            res = self.propose(text, category, kind=kind, source=source, automatic=automatic)
            proposed += res.status == "proposed"
            results.append(res)
        return results

    def _accepted_files(self) -> tuple[str, ...]:
        return tuple(self.vault.layout.path(k) for k in proposable_kinds())

    def _accepted_with_text(self, text: str) -> str | None:
        key = match_key(text)
        for path in self._accepted_files():
            for it in load_bullet_file(self.backend, path).doc.items:
                if match_key(it.text) == key:
                    return it.id
        return None

    # -- deciding ----------------------------------------------------------------------

    @one_commit("memvault: accept a proposal")
    def accept(self, proposal_id: str, *, text: str | None = None,
               category: str | None = None) -> Record:
        """Move a proposal into Memory.md or Lessons.md (same id). With `text` or
        `category`, the user's correction is used and the record becomes explicit.

        A record with the proposal's id already in the target is this proposal accepted
        before (a retry after a crash) only when its text is the proposal's; otherwise
        the id is taken by another record, and the accepted one gets `derived_record_id`
        (recorded as `stored_as` in the journal event)."""
        proposal = self.get(proposal_id)
        corrected = text is not None or category is not None
        # the proposal's own text is checked too: a hand-written inbox line may hold
        # anything, and accepting writes it into Memory.md or Lessons.md
        new_text = check_record_text(text if text is not None else proposal.text)
        text_key = match_key(new_text)
        if proposal.kind not in proposable_kinds():
            raise InvalidInput(f"proposal {proposal.id} has kind:{proposal.kind}; it must be "
                               f"{' or '.join(proposable_kinds())}", path=self.path)
        kind = kind_named(proposal.kind)
        known = kind.categories
        new_cat = check_category(category, known) if category else (
            proposal.category_raw or "other")
        target = self.vault.layout.path(kind)
        proposal_key = match_key(proposal.text)
        meta = {"id": proposal.id, "updated": str(_now())}
        for key in ("src", "evidence"):
            if proposal.meta.get(key):
                meta[key] = proposal.meta[key]
        if proposal.authority == "inferred" and not corrected:
            meta["auth"] = "inferred"
            meta["status"] = "trial"

        outcome: dict[str, str] = {}  # for the journal: duplicate_of or stored_as

        def add(doc: BulletDocument) -> Record:
            outcome.clear()
            found = doc.find(proposal.id)
            if found and match_key(found[0].text) in (text_key, proposal_key):
                # already accepted (a retry after a crash)
                raise NoChange(record_from_item(found[0], kind.record_type, known))
            for it in doc.items:  # the same text is already there: stored once
                if match_key(it.text) == text_key:
                    outcome["duplicate_of"] = it.id
                    raise NoChange(record_from_item(it, kind.record_type, known))
            # taken: the target's ids and the other kinds' but the inbox, which holds
            # the proposal itself
            taken = {it.id for it in doc.items} | ids_in_files(self.backend, [
                p for p in self.vault.layout.memory_files if p not in (target, self.path)])
            meta["id"] = derived_record_id(proposal.id, taken)
            if meta["id"] != proposal.id:
                outcome["stored_as"] = meta["id"]
            doc.insert_item(render_new_item(new_text, new_cat, meta))
            return record_from_item(doc.find(meta["id"])[0], kind.record_type, known)

        fact = edit_bullet_file(self.backend, target, add, message="memvault: accept proposal",
                                initial=kind.new_file())
        self._remove(proposal.id)
        same = dict(outcome)
        self.vault.events.append("proposal.accepted", record=proposal.id, text=new_text,
                                 category=new_cat, kind=proposal.kind, corrected=corrected,
                                 **same)
        if corrected:
            self.vault.tombstones.lift(new_text, proposal.id)
        return fact

    def correct(self, proposal_id: str, text: str, category: str | None = None) -> Record:
        return self.accept(proposal_id, text=text, category=category)

    @one_commit("memvault: reject a proposal")
    def reject(self, proposal_id: str) -> Proposal:
        """Remove a proposal and remember (content-free) never to propose it again."""
        proposal = self.get(proposal_id)
        self._remove(proposal.id)
        self.vault.tombstones.add(proposal.text, proposal.id, kind="rejected")
        self.vault.events.append("proposal.rejected", record=proposal.id)
        return proposal

    def withdraw_same_text(self, text: str, reason: str) -> builtins.list[str]:
        """Remove pending proposals whose text is `text` (by match key): it was just
        remembered, so the proposal is settled. Returns their ids; a journal event
        (`proposal.withdrawn`) records each."""
        key = match_key(text)
        loaded = load_bullet_file(self.backend, self.path)
        if not loaded.exists or not any(match_key(it.text) == key for it in loaded.doc.items):
            return []

        def drop(doc: BulletDocument) -> list[str]:
            hits = [it for it in doc.items if it.editable and not it.provisional and
                    match_key(it.text) == key]
            if not hits:
                raise NoChange([])
            for it in sorted(hits, key=lambda it: it.start, reverse=True):
                doc.delete_item(it)
            return [it.id for it in hits]

        ids: list[str] = edit_bullet_file(self.backend, self.path, drop,
                                          message="memvault: settle proposal")
        self.vault.events.append_many({"type": "proposal.withdrawn", "record": pid,
                                       "reason": reason} for pid in ids)
        return ids

    def _remove(self, proposal_id: str) -> None:
        def drop(doc: BulletDocument) -> None:
            found = doc.find(proposal_id)
            if not found:
                raise NoChange(None)
            doc.delete_item(found[0])

        edit_bullet_file(self.backend, self.path, drop, message="memvault: resolve proposal")

    # -- edits made in Obsidian --------------------------------------------------------

    def pending_ids(self) -> dict[str, dict[str, Any]]:
        """Proposals the journal says are waiting (proposed, not yet resolved)."""
        blob = self.backend.read(EVENTS)
        if blob is None or b'"proposal.' not in blob.data:
            return {}
        pending: dict[str, dict[str, Any]] = {}
        for ev in scan_events(blob.data, ("proposal.",), scope=self.vault.layout.scope_name):
            kind = ev.get("type")
            if kind == "proposal.proposed":
                pending[str(ev.get("record"))] = ev
            elif kind in ("proposal.accepted", "proposal.rejected", "proposal.withdrawn"):
                pending.pop(str(ev.get("record")), None)
        return pending

    @one_commit("memvault: apply inbox edits")
    def apply_inbox_edits(self) -> InboxEdits:
        """Accept ticked proposals and reject deleted ones.

        The inbox is read settled (a save in progress is waited for). A ticked box is the
        user's explicit decision and is applied from any readable inbox; one that cannot
        be accepted is held (see `HeldTick`) and never stops the others. A *missing* line
        rejects its proposal only when the read is intact (`why_not_intact`): an empty,
        missing, truncated or symlinked Inbox.md rejects nothing, since those are not the
        user deleting lines.
        """
        net = SafetyNet(self.backend)
        seen = net.seen(self.path)
        blob = read_settled(self.backend, self.path, seen)
        if blob is not None and blob.linked_to is not None:
            return InboxEdits()  # never decide anything from another file's lines
        doc = parse_bullets(blob.data) if blob is not None else parse_bullets(b"")
        edits = InboxEdits()
        for item in self._ticked(doc):
            p = record_from_item(item, Proposal, INBOX_CATEGORIES)
            try:
                edits.applied.append(("accepted", self.accept(p.id)))
            except VaultError as exc:
                edits.held.append(HeldTick(self.path, item.line_no, p.id, p.text, str(exc)))
        if why_not_intact(blob, seen) is not None:
            return edits
        pending = self.pending_ids()
        if not pending:
            return edits
        present = {it.id for it in load_bullet_file(self.backend, self.path).doc.items}
        for pid, ev in pending.items():
            if pid in present:
                continue
            text = str(ev.get("text") or "")
            fact = Proposal(id=pid, text=text, category=str(ev.get("category") or "other"),
                            category_raw=ev.get("category"), updated=None, line=0)
            if text and not self.vault.tombstones.is_tombstoned(text) and \
                    not self._accepted_with_text(text):
                self.vault.tombstones.add(text, pid, kind="rejected")
                self.vault.events.append("proposal.rejected", record=pid, via="inbox-deletion")
                edits.applied.append(("rejected", fact))
            else:
                self.vault.events.append("proposal.withdrawn", record=pid)
        return edits

    @staticmethod
    def _ticked(doc: BulletDocument) -> builtins.list[Any]:
        return [it for it in doc.items
                if it.task in ("x", "X") and it.editable and not it.provisional]

    def held_ticks(self) -> builtins.list[HeldTick]:
        """Ticked lines whose text memvault cannot accept, as the inbox is now (doctor
        reports them; nothing is applied or written)."""
        loaded = load_bullet_file(self.backend, self.path)
        held = []
        for item in self._ticked(loaded.doc):
            try:
                check_record_text(item.text)
            except VaultError as exc:
                held.append(HeldTick(self.path, item.line_no, item.id, item.text, str(exc)))
        return held


def why_not_intact(blob: Blob | None, seen: Seen | None) -> str | None:
    """Why a (settled) read of Inbox.md cannot be trusted to say which lines the user
    deleted, or None when it can: the file must exist, have content, parse, and not end
    in the middle of a line where memvault left it ending with one (a save cut short).

    A file cut at a line boundary is indistinguishable from the user deleting its last
    lines; the settle wait before this check is what tells it from a save in progress.
    """
    if blob is None:
        return "it is missing"
    data = blob.data
    if not data.strip():
        return "it is empty"
    if parse_bullets(data).readonly_reason:
        return "it cannot be read record by record"
    if seen is not None and seen.copy is not None and data != seen.copy \
            and seen.copy.endswith(b"\n") and not data.endswith(b"\n"):
        return "it ends in the middle of a line"
    return None


def held_ticks_findings(vault: Vault) -> list[Finding]:
    """Doctor lists every held ticked line, each time it runs (commands say each once)."""
    from memvault.services.doctor import Finding

    return [Finding("warning", h.path, h.message, h.line) for h in vault.proposals.held_ticks()]
