"""Facts in Memory.md: remember, list, show, edit, forget, restore.

Explicit facts are saved at once (the user is authoritative). Every change appends an
event to the experience journal; forgetting removes the text from the memory files and
writes a content-free tombstone. `--permanent` also removes the fact's past events, so
no copy of the text is left in the vault; forgetting is crash-safe
(`services/forgetting.py`).
"""

from __future__ import annotations

import builtins  # `builtins.list` in classes that have a method named list
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memvault.core.bullets import BulletDocument, BulletItem, render_new_item, render_updated_item
from memvault.core.kinds import FACT
from memvault.core.records import (
    FACT_CATEGORIES,
    Fact,
    check_category,
    check_record_text,
    fact_from_item,
    match_key,
)
from memvault.errors import BadInput, Conflict, InvalidInput, NotFound
from memvault.services import parse_cache
from memvault.services.bullet_files import (
    NoChange,
    edit_bullet_file,
    find_one,
    ids_beside,
    load_bullet_file,
    new_record_id,
)
from memvault.services.one_commit import attempt_memo, one_commit

if TYPE_CHECKING:
    from memvault.services.forget_notes import NotesHolding
    from memvault.services.vault import Vault

NEAR_DUPLICATE_THRESHOLD = 88.0
"""rapidfuzz `token_sort_ratio` (0-100) at or above which a new fact is a near-duplicate."""

RECENT_COUNT = 8



@dataclass(slots=True)
class RememberResult:
    fact: Fact
    created: bool
    near_duplicates: list[tuple[Fact, float]] = field(default_factory=list)
    lifted_tombstone: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "created": self.created,
            "fact": self.fact.to_dict(),
            "near_duplicates": [{"id": f.id, "text": f.text, "score": round(s, 1)}
                                for f, s in self.near_duplicates],
            "lifted_tombstone": self.lifted_tombstone,
        }


@dataclass(slots=True)
class EditResult:
    """The fact after an edit; `changed` is False when the edit asked for what was there."""

    fact: Fact
    changed: bool

    def to_dict(self) -> dict[str, Any]:
        return {"fact": self.fact.to_dict(), "changed": self.changed}


@dataclass(slots=True)
class ForgetResult:
    forgotten: list[Fact]
    permanent: bool
    purged_events: int = 0
    notes: NotesHolding | None = None
    """Permanent forgets: the notes that still hold the words (None: not searchable)."""

    def to_dict(self) -> dict[str, Any]:
        return {"forgotten": [{"id": f.id, "category": f.category} for f in self.forgotten],
                "permanent": self.permanent, "purged_events": self.purged_events,
                **(self.notes.to_dict() if self.notes is not None else {})}


@dataclass(slots=True)
class FactListing:
    """Facts as `memory list` shows them: `facts` (newest first, cut to the limit asked
    for), `total` matching facts, the file, and why the whole file is read-only for
    memvault (NUL bytes, UTF-16, ...) or None."""

    facts: list[Fact]
    total: int
    path: str
    read_only: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"facts": [f.to_dict() for f in self.facts], "total": self.total,
                "path": self.path, "read_only": self.read_only}


def _now() -> int:
    return int(time.time())


class MemoryService:
    """Operations on one principal's Memory.md."""

    def __init__(self, vault: Vault) -> None:
        self.vault = vault
        self.backend = vault.backend
        self.path = vault.layout.memory

    # -- reading -----------------------------------------------------------------------

    def document(self) -> BulletDocument:
        return load_bullet_file(self.backend, self.path).doc

    def all(self) -> list[Fact]:
        """Every fact, in file order."""
        return [fact_from_item(it, FACT_CATEGORIES) for it in self.document().items]

    def list(self, *, all: bool = False, category: str | None = None,
             limit: int | None = None) -> list[Fact]:
        """Facts, most recently updated first (the 8 most recent unless `all`); facts
        updated in the same second: the one further down the file first."""
        return self.listing(all=all, category=category, limit=limit).facts

    def listing(self, *, all: bool = False, category: str | None = None,
                limit: int | None = None) -> FactListing:
        """`list` with the count of every matching fact and the file's read-only reason
        (one read of Memory.md)."""
        doc = self.document()
        facts = [fact_from_item(it, FACT_CATEGORIES) for it in doc.items]
        if category:
            wanted = category.strip().lower()
            facts = [f for f in facts if (f.category_raw or "other").lower() == wanted]
        facts.sort(key=lambda f: (f.updated or 0, f.line), reverse=True)  # ties: later line first
        total = len(facts)
        if limit is not None:
            facts = facts[:limit]
        elif not all:
            facts = facts[:RECENT_COUNT]
        return FactListing(facts, total, self.path, doc.readonly_reason)

    def get(self, fact_id: str) -> Fact:
        doc = self.document()
        return fact_from_item(_find_for_reading(doc, fact_id, self.path), FACT_CATEGORIES)

    def history(self, fact_id: str) -> builtins.list[dict[str, Any]]:
        return self.vault.events.events(record=fact_id)

    # -- writing -----------------------------------------------------------------------

    @one_commit("memvault: remember a fact")
    def remember(self, text: str, category: str | None = None, *, source: str = "cli",
                 extra_meta: dict[str, str] | None = None) -> RememberResult:
        """Save an explicit fact. An exact (normalised) duplicate is a no-op."""
        text = check_record_text(text)
        cat = check_category(category) if category else "other"
        key = match_key(text)
        near: list[tuple[Fact, float]] = []

        def apply(doc: BulletDocument) -> RememberResult:
            near.clear()
            keys = parse_cache.match_keys(self.backend, self.path, doc)  # for both checks
            if key in keys:
                same = doc.items[keys.index(key)]
                raise NoChange(RememberResult(fact_from_item(same), created=False))
            near.extend(_near_duplicates(key, doc, keys))
            fact_id = new_record_id(doc.ids() | ids_beside(
                self.backend, self.vault.layout.memory_files, self.path))
            meta = {"id": fact_id, "updated": str(_now())}
            if source and source != "cli":
                meta["src"] = source
            meta.update(extra_meta or {})
            doc.insert_item(render_new_item(text, cat, meta))
            item = doc.find(fact_id)[0]
            return RememberResult(fact_from_item(item), created=True, near_duplicates=list(near))

        # Saved first, journalled second, both under the vault lock: `doctor --fix` (which
        # takes it) never sees the fact between the two steps unless this process died
        # there, and then journals it (`services/journal_gaps.py`).
        with self.backend.lock():
            result = edit_bullet_file(self.backend, self.path, apply,
                                      message="memvault: remember a fact",
                                      initial=FACT.new_file())
            if result.created:
                self.vault.events.append("fact.remembered", record=result.fact.id,
                                         text=text, category=cat, source=source)
        if result.created:
            result.lifted_tombstone = self.vault.tombstones.lift(text, result.fact.id)
        # a proposal of the same text is settled: the text is stored once, in Memory.md.
        # The fact is saved either way: an unreadable Inbox.md (reported by every command
        # that needs it, and by doctor) must not turn a done `remember` into an error.
        from memvault.errors import VaultError

        try:
            self.vault.proposals.withdraw_same_text(text, reason="remembered")
        except VaultError:
            pass
        return result

    @one_commit("memvault: edit a fact")
    def edit(self, fact_id: str, text: str | None = None,
             category: str | None = None) -> EditResult:
        """Correct a fact: same id, `updated` bumped; an inferred fact becomes explicit.

        Asking for the text and category the fact already has (an inferred fact excepted:
        the edit confirms it) changes nothing: no write, no event, `changed` is False.
        A category-only edit is journalled with the old and new category, not the text.
        """
        if text is None and category is None:
            raise BadInput("nothing to change: give new text and/or --category")
        new_text = check_record_text(text) if text is not None else None
        new_cat = check_category(category) if category is not None else None
        before: list[Fact] = []
        changed = [False]
        first_seen = attempt_memo()

        def apply(doc: BulletDocument) -> Fact:
            item = find_one(doc, fact_id, self.path)
            seen = (item.text, item.category_raw, item.task)
            if first_seen.setdefault(("edit", fact_id), seen) != seen:
                # Read again after a write elsewhere (GitHub, another program), the fact is
                # not what this edit was asked against: say so, never overwrite it.
                raise Conflict(f"fact {fact_id} was changed elsewhere since memvault read it "
                               f"(it now reads {item.text!r}); nothing was written: run the "
                               "edit again to change that version", path=self.path)
            old = fact_from_item(item, FACT_CATEGORIES)
            before[:] = [old]
            changed[0] = False
            same_text = new_text is None or new_text == item.text
            same_cat = new_cat is None or new_cat.lower() == (item.category_raw or "other").lower()
            if same_text and same_cat and item.meta.get("auth") != "inferred":
                raise NoChange(old)
            meta = dict(item.meta)
            meta["id"] = item.id
            meta["updated"] = str(_now())
            if meta.get("auth") == "inferred":
                meta["auth"] = "explicit"
            if item.provisional:  # its id gets written: never one a forget left dead
                self.vault.tombstones.revive(item.id, new_text or item.text)
            doc.replace_item(item, render_updated_item(item, text=new_text, category=new_cat,
                                                       meta=meta))
            changed[0] = True
            return fact_from_item(doc.find(fact_id)[0])

        fact = edit_bullet_file(self.backend, self.path, apply, message="memvault: edit a fact")
        old = before[0] if before else None
        if not changed[0]:
            return EditResult(fact, changed=False)
        details: dict[str, Any] = {"category": fact.category}
        if old is None or fact.text != old.text:
            details.update(text=fact.text, previous_text=old.text if old else None)
        if old is not None and fact.category != old.category:
            details["previous_category"] = old.category
        self.vault.events.append("fact.edited", record=fact.id, **details)
        return EditResult(fact, changed=True)

    def find_matches(self, query: str, *, history: bool = False) -> builtins.list[Fact]:
        """Facts whose id equals `query` or whose text contains it (case-insensitive).
        With `history`, an id Memory.md no longer holds but the journal does counts too
        (so `forget --permanent ID` can still erase what is left of it)."""
        q = query.strip()
        if not q:
            raise BadInput("give a text or an id to forget")
        doc = self.document()
        facts = [fact_from_item(it, FACT_CATEGORIES) for it in doc.items]
        by_id = [f for f in facts if f.id == q]
        if by_id:
            return by_id
        if history:
            from memvault.services.forgetting import last_known

            past = last_known(self.vault, q)
            if past is not None:
                return [past]
        needle = q.casefold()
        found = [f for f in facts if needle in f.text.casefold()]
        if not found and doc.readonly_reason:
            from memvault.errors import ReadOnly

            raise ReadOnly(doc.readonly_reason, path=self.path)  # not "no match": unreadable
        return found

    @one_commit("memvault: forget facts")
    def forget(self, ids: builtins.list[str], *, permanent: bool = False,
               reason: str = "forgotten") -> ForgetResult:
        """Remove facts by id, tombstone their text, and (permanent) purge their history.

        Crash-safe (see `services/forgetting.py`): a content-free intent is written first
        and every step after it is completed by the next command if this one is killed.
        With `permanent`, an id only the journal still holds is erased from it too.
        """
        from memvault.services.forgetting import begin, complete, last_known

        wanted = list(dict.fromkeys(ids))
        doc = self.document()
        texts: dict[str, str] = {}
        previous: dict[str, Fact] = {}
        for fid in wanted:
            if doc.find(fid) or not permanent:
                previous[fid] = fact_from_item(find_one(doc, fid, self.path))
            else:
                past = last_known(self.vault, fid)
                if past is None:
                    raise NotFound(f"no fact with id {fid!r}, and no history of it",
                                   path=self.path)
                previous[fid] = past
            texts[fid] = previous[fid].text
        hand = [fid for fid, fact in previous.items() if fact.provisional]
        notes = None
        if permanent:  # asked before the forget deletes the index (a cache)
            from memvault.services.forget_notes import notes_holding
            from memvault.services.history import texts_of

            notes = notes_holding(self.vault, [*texts.values(), *texts_of(self.vault, wanted)])
        intent = begin(self.vault, texts, permanent=permanent, reason=reason, hand=hand)
        _, purged = complete(self.vault, intent)
        return ForgetResult(forgotten=[previous[fid] for fid in wanted], permanent=permanent,
                            purged_events=purged, notes=notes)

    def clear(self, *, permanent: bool = False) -> ForgetResult:
        doc = self.document()
        ids = [it.id for it in doc.items if it.editable]
        if not ids:
            if doc.readonly_reason:
                from memvault.errors import ReadOnly

                raise ReadOnly(doc.readonly_reason, path=self.path)
            return ForgetResult([], permanent)
        return self.forget(ids, permanent=permanent)

    @one_commit("memvault: restore a fact")
    def restore(self, fact_id: str) -> Fact:
        """Bring back a forgotten fact from its history (same id)."""
        if self.document().find(fact_id):
            raise InvalidInput(f"fact {fact_id!r} is not forgotten", path=self.path)
        last = None
        for ev in self.history(fact_id):
            if ev.get("text"):
                last = ev
        if last is None:
            raise NotFound(f"no history for {fact_id!r} (forgotten permanently, or never existed)")
        text = str(last["text"])
        category = str(last.get("category") or "other")

        def apply(doc: BulletDocument) -> Fact:
            meta = {"id": fact_id, "updated": str(_now())}
            doc.insert_item(render_new_item(text, category, meta))
            return fact_from_item(doc.find(fact_id)[0])

        fact = edit_bullet_file(self.backend, self.path, apply, message="memvault: restore a fact",
                                initial=FACT.new_file())
        self.vault.tombstones.lift(text, fact_id)
        self.vault.events.append("fact.restored", record=fact_id, text=text, category=category)
        return fact


def _find_for_reading(doc: BulletDocument, fact_id: str, path: str) -> BulletItem:
    """The first item with this id (reading tolerates duplicates and read-only lines)."""
    found = doc.find(fact_id)
    if not found:
        raise NotFound(f"no fact with id {fact_id!r}", path=path)
    return found[0]


def _near_duplicates(key: str, doc: BulletDocument,
                     keys: list[str] | None = None) -> list[tuple[Fact, float]]:
    """Facts whose text is close to the one with match key `key` (`keys`: the items'
    match keys, when the caller has them)."""
    if not doc.items:
        return []
    from rapidfuzz import fuzz, process

    if keys is None:
        keys = [match_key(it.text) for it in doc.items]
    # a list, not a dict of positions: the same hits (a list's are its indexes), ~1 ms
    # less at 10,000 facts
    hits = process.extract(key, keys, scorer=fuzz.token_sort_ratio,
                           score_cutoff=NEAR_DUPLICATE_THRESHOLD, limit=3)
    return [(fact_from_item(doc.items[idx]), float(score)) for _, score, idx in hits]
