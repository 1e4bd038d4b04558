"""Looking a record up by id across every kind (`memvault.core.kinds`).

Ids are unique across a principal's bullet files, so one id names one record, whatever
its kind: a fact, a lesson or a proposal (a context block's manifest lists all three).
`RecordService.show` finds it in table order with its journal history; an id the files
no longer hold but the journal does is a forgotten record, shown without its text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from memvault.core.kinds import RecordKind, all_kinds
from memvault.core.records import Record, record_from_item
from memvault.errors import NotFound
from memvault.services.bullet_files import load_bullet_file

if TYPE_CHECKING:
    from memvault.services.vault import Vault

RecordState = Literal["active", "proposed", "forgotten"]
"""active: an accepted record; proposed: waiting in the inbox; forgotten: only the
journal still names it."""


@dataclass(slots=True)
class ShownRecord:
    """One record found by id: its kind, the record (None when forgotten), its state
    and its journal history (for a forgotten record only event types and times)."""

    kind: str
    record: Record | None
    state: RecordState
    history: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind,
                "fact": self.record.to_dict() if self.record is not None else None,
                "state": self.state, "history": self.history}


class RecordService:
    """Records of every kind of one principal, by id."""

    def __init__(self, vault: Vault) -> None:
        self.vault = vault

    def find(self, record_id: str) -> tuple[RecordKind, Record] | None:
        """The record with this id and its kind, searching the kinds in table order (the
        first of two records sharing an id in an older vault: `doctor` reports them)."""
        for kind in all_kinds():
            doc = load_bullet_file(self.vault.backend, self.vault.layout.path(kind)).doc
            found = doc.find(record_id)
            if found:
                return kind, record_from_item(found[0], kind.record_type, kind.categories)
        return None

    def show(self, record_id: str) -> ShownRecord:
        """The record with its history; NotFound when neither a file nor the journal
        knows the id."""
        history = self.vault.events.events(record=record_id)
        found = self.find(record_id)
        if found is not None:
            kind, record = found
            return ShownRecord(kind.name, record, "proposed" if kind.inbox else "active",
                               history)
        if not history:
            *first, last = [k.name for k in all_kinds()]
            raise NotFound(f"no {', '.join(first)} or {last} with id {record_id!r}",
                           path=self.vault.layout.memory)
        return ShownRecord("fact", None, "forgotten",
                           [{"type": e.get("type"), "ts": e.get("ts")} for e in history])
