"""`memvault memory recover`: records that vanished from Memory.md or Lessons.md without a
forget, shown, restored or dismissed from the safety net (see `safety_net.py`).

A record is *lost* when memvault last saw it in the file and it is gone now, and nobody
forgot it through memvault (forgetting removes it from the net). That is an editor saving
a stale buffer, a sync tool restoring an older copy, or a hand deletion; memvault cannot
tell which, so it keeps the lines and asks:

- `lost()` lists them (read-only: what `doctor` reports);
- `restore(ids)` puts each back into its file, with its original lines and id;
- `dismiss(ids)` drops them from the net (the user deleted them on purpose).

A record that was forgotten or rejected since (its text tombstoned, a tombstone for its
id, or a forget for its id in the journal, merged from another clone included) is never
offered back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from memvault.core.bullets import BulletDocument, normalise_text, parse_bullets
from memvault.core.kinds import all_kinds
from memvault.errors import InvalidInput, NotFound
from memvault.services.bullet_files import NoChange, edit_bullet_file, read_settled
from memvault.services.safety_net import LostItem, SafetyNet, forgotten_ids

if TYPE_CHECKING:
    from memvault.services.doctor import Finding
    from memvault.services.vault import Vault


@dataclass(slots=True)
class RecoverResult:
    action: str  # "restored" or "dismissed"
    items: list[LostItem]

    def to_dict(self) -> dict[str, Any]:
        return {self.action: [it.to_dict() for it in self.items]}


class RecoveryService:
    """The lost records of one principal's bullet files that keep them (Memory.md,
    Lessons.md: `RecordKind.keeps_lost`)."""

    def __init__(self, vault: Vault) -> None:
        self.vault = vault
        self.backend = vault.backend
        self.net = SafetyNet(vault.backend)
        self.files = tuple(vault.layout.path(k) for k in all_kinds() if k.keeps_lost)

    def lost(self) -> list[LostItem]:
        """Every lost record, oldest first (reads only)."""
        found: dict[tuple[str, str], LostItem] = {}
        present: dict[str, set[str]] = {}
        for path in self.files:
            blob = self.backend.read(path)
            doc = parse_bullets(blob.data if blob else b"")
            present[path] = {it.id for it in doc.items} | {normalise_text(it.text)
                                                           for it in doc.items}
            for it in self.net.vanished(path, self.net.seen(path), doc):
                if it.lines:
                    found.setdefault((it.path, it.id), it)
        for it in self.net.lost():
            if it.path in present:
                found[(it.path, it.id)] = it
        stones = self.vault.tombstones.active_keys() if found else set()
        forgotten = forgotten_ids(self.backend) if found else set()
        return sorted((it for it in found.values()
                       if it.id not in present[it.path]  # not back under its id,
                       and normalise_text(it.text) not in present[it.path]  # nor another
                       and it.id not in forgotten  # nor forgotten, here or elsewhere
                       and not self.vault.tombstones.matches(it.text, stones)),
                      key=lambda it: (it.noticed, it.path, it.id))

    def restore(self, ids: list[str] | None) -> RecoverResult:
        """Put lost records back (all of them when `ids` is None), same lines, same id."""
        chosen = self._absorb_and_choose(ids)
        restored: list[LostItem] = []
        for path in self.files:
            mine = [it for it in chosen if it.path == path]
            if not mine:
                continue

            def apply(doc: BulletDocument, mine: list[LostItem] = mine) -> list[LostItem]:
                back = [it for it in mine if not doc.find(it.id)]
                if not back:
                    raise NoChange([])
                for it in back:
                    first, *children = it.lines.split("\n")
                    doc.insert_item(first, tuple(children))
                return back

            restored += edit_bullet_file(self.backend, path, apply,
                                         message="memvault: recover lost records")
        self.net.drop(ids=[it.id for it in chosen], paths=self.files)
        kind = {self.vault.layout.path(k): k.name for k in all_kinds()}
        for it in restored:
            self.vault.events.append(f"{kind[it.path]}.recovered", record=it.id, text=it.text,
                                     path=it.path)
        return RecoverResult("restored", restored)

    def dismiss(self, ids: list[str] | None) -> RecoverResult:
        """Forget the net's copy of lost records (all when `ids` is None)."""
        chosen = self._absorb_and_choose(ids)
        self.net.drop(ids=[it.id for it in chosen], paths=self.files)
        return RecoverResult("dismissed", chosen)

    def _absorb_and_choose(self, ids: list[str] | None) -> list[LostItem]:
        """Move records that vanished since memvault last looked into the lost list (the
        files' current state becomes what memvault has seen), then pick `ids`."""
        with self.backend.lock():
            for path in self.files:
                seen = self.net.seen(path)
                blob = read_settled(self.backend, path, seen)
                if blob is None:
                    continue
                doc = parse_bullets(blob.data)
                self.net.note_lost(self.net.vanished(path, seen, doc))
                if seen is not None and seen.copy != blob.data:
                    self.net.store(path, blob.data, doc)
            lost = self.lost()
        if ids is None:
            return lost
        by_id = {it.id: it for it in lost}
        unknown = [i for i in ids if i not in by_id]
        if unknown:
            raise NotFound(f"no lost record with id {unknown[0]!r} (`memvault memory recover` "
                           "lists them)")
        if not ids:
            raise InvalidInput("give the ids to recover, or --all")
        return [by_id[i] for i in dict.fromkeys(ids)]


def recovery_doctor_findings(vault: Vault) -> list[Finding]:
    """Doctor: one warning per memory file that lost records without a forget."""
    from memvault.services.doctor import Finding

    lost = vault.recovery.lost()
    out = []
    for path in vault.recovery.files:
        ids = [it.id for it in lost if it.path == path]
        if ids:
            shown = ", ".join(ids[:8]) + (f" and {len(ids) - 8} more" if len(ids) > 8 else "")
            out.append(Finding("warning", path, f"{len(ids)} record(s) vanished without a forget "
                               f"(an editor or sync accident?): {shown}; `memvault memory "
                               "recover` shows and restores them (`--dismiss` if you deleted "
                               "them on purpose)"))
    return out
