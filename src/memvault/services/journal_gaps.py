"""Facts in Memory.md that the journal never recorded, found by `doctor`.

`remember` (and a correction, `feedback … corrected --text`) saves the fact in Memory.md
first and appends its `fact.remembered` event to the journal second, each step durable
on its own. A process killed between the two leaves a fact the journal, the user's audit
trail, has no word of. `doctor` names each such fact in one line (the file, the line and
the id); `doctor --fix` appends the event it lacks, as `remember` would have written it
(`record`, `text`, `category`, `source`, and `supersedes` for a correction) plus
`via: "doctor"`, so the journal says the event was recovered by doctor, not written when
the fact was saved.

A fact is reported when its line carries an id (memvault wrote it) and no event of the
journal names that id, in any field (`record`, `stored_as`, `supersedes`, ...) and for any
principal. The journal is one file that every machine appends to and that sync merges as
a union of lines, so a fact remembered on another machine arrives with its event. Not
reported, because they never had an event of their own:

- a bullet typed by hand without an id, and one `doctor --fix` stamped (its id is the
  provisional id of its words);
- a copy a merge or `doctor --fix` gave a new id (a copied line, or one fact edited by
  hand on two machines: the id is derived from the original's id and the copy's words);
- a record whose id is tombstoned (forgotten; the next write removes a line a merge
  brought back), or whose words are: a permanent forget of an earlier fact with the same
  words erased every event holding them, this fact's too;
- a line in an open conflict block, and a read-only line.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from memvault.state_paths import EVENTS

if TYPE_CHECKING:
    from memvault.core.bullets import BulletItem
    from memvault.services.doctor import Finding
    from memvault.services.vault import Vault

MAX_DERIVATION_CHECKS = 32
"""Above this many candidates in one file, the (quadratic) check for renumbered copies is
skipped and every candidate is reported: a journal that lost that many events is worth
the user's look whatever their origin."""

STAMPED_OCCURRENCES = 16
"""How many lines with the same words a stamped id is looked for among."""

RECOVERED_VIA = "doctor"


@dataclass(frozen=True, slots=True)
class Gap:
    """A fact saved in `path` (at `line`) whose id no journal event names."""

    path: str
    line: int
    id: str
    text: str
    category: str
    source: str
    supersedes: str | None

    def event(self) -> dict[str, Any]:
        """The journal event `doctor --fix` appends: what `remember` writes, and `via`."""
        ev: dict[str, Any] = {"type": "fact.remembered", "id": f"recovered-{self.id}",
                              "record": self.id, "text": self.text,
                              "category": self.category, "source": self.source}
        if self.supersedes:
            ev["supersedes"] = self.supersedes
        ev["via"] = RECOVERED_VIA
        return ev


def named_in_journal(data: bytes) -> set[bytes]:
    """Every JSON string of the journal's bytes (field names and the odd piece of text
    included, which can only make doctor quieter): an id is named when it is one of them,
    whatever the field, the event or the line. A split at the quotes, not a JSON parse:
    ~10 ms for 10,000 events instead of ~50. Ids hold no character JSON escapes."""
    return set(data.split(b'"'))


def find_gaps(vault: Vault) -> list[Gap]:
    """The facts of this principal's Memory.md that no journal event names (see the
    module doc), in file order."""
    from memvault.services.bullet_files import load_raw
    from memvault.services.journal import dead_records_in

    path = vault.layout.memory
    loaded = load_raw(vault.backend, path)
    if not loaded.exists:
        return []
    doc = loaded.doc
    written = [it for it in doc.items if it.editable and not it.provisional]
    if not written:
        return []
    blob = vault.backend.read(EVENTS)  # after Memory.md: a remember in progress is seen whole
    named = named_in_journal(blob.data) if blob is not None else set()
    dead = dead_records_in(vault.backend, vault.layout.scope_name)
    unnamed = [it for it in written if it.id.encode("utf-8", "surrogateescape") not in named
               and it.id not in dead]
    if not unnamed:
        return []
    active = vault.tombstones.active_keys()
    candidates = [it for it in unnamed if not _stamped(it)
                  and not vault.tombstones.matches(it.text, active)]
    if len(candidates) <= MAX_DERIVATION_CHECKS:
        from memvault.core.reconcile import derived_from_any

        ids = {it.id for it in doc.items if not it.provisional}
        candidates = [it for it in candidates
                      if not derived_from_any(it.id, it.text, ids - {it.id})]
    return [_gap(path, it) for it in candidates]


def _stamped(item: BulletItem) -> bool:
    """Whether the item's id is one its words get as a hand-written bullet (what `doctor
    --fix` stamps): the provisional id of its text, for the first `STAMPED_OCCURRENCES`
    lines holding the same words (each later one counts up)."""
    from memvault.core.bullets import provisional_id

    return any(provisional_id(item.text, n) == item.id for n in range(STAMPED_OCCURRENCES))


def _gap(path: str, item: BulletItem) -> Gap:
    from memvault.core.records import fact_from_item

    fact = fact_from_item(item)
    return Gap(path, item.line_no, item.id, item.text, item.category_raw or fact.category,
               item.meta.get("src") or ("correction" if item.meta.get("supersedes") else "cli"),
               item.meta.get("supersedes"))


def doctor_findings(vault: Vault) -> list[Finding]:
    """One warning per fact the journal never recorded: the file, the line and the id."""
    from memvault.services.doctor import Finding

    return [Finding("warning", gap.path, f"fact {gap.id} was remembered but not journaled "
                    "(a command was interrupted after saving it): `doctor --fix` adds its "
                    "journal event", gap.line)
            for gap in find_gaps(vault)]


def doctor_repair(vault: Vault) -> list[str]:
    """`doctor --fix`: append the missing `fact.remembered` events (marked as recovered by
    doctor), under the vault lock, which `remember` holds from saving a fact until its
    event is written: a remember still running is never taken for an interrupted one."""
    with vault.backend.lock():
        gaps = find_gaps(vault)
        if gaps:
            vault.events.append_many(gap.event() for gap in gaps)
    return [f"{gap.path}:{gap.line}: journaled fact {gap.id} (event recovered by doctor)"
            for gap in gaps]
