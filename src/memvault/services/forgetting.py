"""Forgetting that a crash cannot leave half done.

A forget touches many files: Memory.md, the tombstones, Lessons.md and Inbox.md (the same
text there), the safety net, the journal (`--permanent` purges the record's events), the
search index and the parse cache. A process killed between two of those steps must never
leave the text behind while the fact is gone. So a forget is an *intent* first:

1. `begin` appends a content-free intent to `.memvault/pending-forgets.jsonl` (record ids,
   tombstone keys, permanent or not; never the text), fsynced, before anything changes;
2. `complete` carries out every step, each one idempotent, in an order where the text is
   always still findable by a later step (Memory.md, tombstones, the other memory files,
   the net, the journal last);
3. the intent is then removed.

`complete_pending` runs when a vault is opened (`Vault.open`): any intent a killed process
left is completed by the next command, whatever it is. So at any kill point either the
fact is intact (the intent was never written) or, once the next command has run, no copy
of its text is left in the vault.
"""

from __future__ import annotations

import json
import secrets
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memvault.backends.base import ANY
from memvault.core.bullets import BulletDocument
from memvault.core.records import Fact, fact_from_item
from memvault.services import parse_cache_forget
from memvault.services.bullet_files import NoChange, edit_bullet_file
from memvault.services.safety_net import LOST, SafetyNet
from memvault.state_paths import EVENTS, PENDING_FORGETS, TOMBSTONES

if TYPE_CHECKING:
    from memvault.services.vault import Vault

_TEXT_FIELDS = ("text", "previous_text")


@dataclass(slots=True)
class ForgetIntent:
    """A forget that was asked for and may not be finished yet (content-free: tombstone
    keys, never texts)."""

    id: str
    scope: str
    records: list[str]
    keys: list[tuple[str, str]]  # (record, tombstone key)
    permanent: bool
    reason: str = "forgotten"
    ts: int = field(default_factory=lambda: int(time.time()))
    hand: list[str] = field(default_factory=list)
    """Records that were hand-written bullets (provisional ids: never marked dead)."""

    def to_json(self) -> bytes:
        return (json.dumps({"id": self.id, "scope": self.scope, "records": self.records,
                            "keys": self.keys, "permanent": self.permanent,
                            "reason": self.reason, "ts": self.ts, "hand": self.hand})
                + "\n").encode()


def begin(vault: Vault, texts: dict[str, str], *, permanent: bool,
          reason: str, hand: list[str] | None = None) -> ForgetIntent:
    """Record (durably) that these records (id -> text) are to be forgotten, before
    anything is touched."""
    keys = sorted({(rid, vault.tombstones.key_for(t)) for rid, t in texts.items() if t})
    intent = ForgetIntent(f"fg-{int(time.time())}-{secrets.token_hex(4)}",
                          vault.layout.scope_name, list(texts), keys, permanent, reason,
                          hand=list(hand or []))
    vault.backend.append(PENDING_FORGETS, intent.to_json(), message="memvault: forget")
    return intent


def complete(vault: Vault, intent: ForgetIntent) -> tuple[list[Fact], int]:
    """Carry out every step of `intent` (safe to run again, from any point); returns the
    facts removed from Memory.md now and the number of journal events purged.

    Order: every text is gathered while it can still be found (Memory.md, the journal),
    then tombstones, the same text in Lessons.md and Inbox.md, the safety net, Memory.md
    itself, the journal (permanent), the search index, a content-free event."""
    with vault.backend.lock():
        texts = _texts_in_memory(vault, intent.records) + \
            _texts_in_history(vault, intent.records)
        all_texts = list(dict.fromkeys(text for _, text in texts))
        active = vault.tombstones.active_keys()
        for rid, key in intent.keys:
            if key not in active:
                vault.tombstones.add_key(key, rid, kind=intent.reason,
                                         provisional=rid in intent.hand)
        net = SafetyNet(vault.backend)
        # the net's copies (lost.jsonl, last-known copies) may hold a text no file does
        files = vault.layout.memory_files
        all_texts = net.scrub(ids=intent.records, texts=all_texts, paths=files)
        for text in all_texts:
            vault.scrub_text_elsewhere(text)
        removed = _remove_from_memory(vault, intent, all_texts)
        # what that write noted as lost (its new copy is the file's real content)
        net.drop(ids=intent.records, texts=all_texts + [f.text for f in removed], paths=files)
        purged = 0
        if intent.permanent:
            first = dict(reversed(texts))  # a text per record, to widen the purge by
            for rid in intent.records:
                purged += vault.events.purge_record(rid, text=first.get(rid))
        _clear_search_index(vault, intent.permanent)
        parse_cache_forget.drop_stale(vault.backend)  # an entry of bytes no file holds any more
        if intent.permanent and vault.backend.capabilities.cache_dir is not None:
            vault.backend.drop_caches()  # type: ignore[attr-defined]  # copies hold the words
        _remove_stale_temps(vault)
        vault.events.append_many({"type": "fact.forgotten", "id": f"ev-{intent.id}-{rid}",
                                  "record": rid, "permanent": intent.permanent}
                                 for rid in intent.records)
        _finish(vault, intent)
        from memvault.errors import VaultError
        from memvault.services import forgets_applied

        try:  # this machine's caches now reflect this forget
            forgets_applied.apply(vault)
            forgets_applied.apply_cached(vault)
        except (OSError, VaultError):
            pass  # the forget is done; the next command brings the note in step
    return removed, purged


def complete_pending(vault: Vault) -> None:
    """Complete every intent a killed process left (each for its own principal)."""
    from memvault.services.vault import Vault

    for intent in pending(vault):
        scoped = vault if intent.scope == vault.layout.scope_name else Vault(
            vault.root, vault.backend, vault.config,
            None if intent.scope == "default" else intent.scope)
        complete(scoped, intent)


def pending(vault: Vault) -> list[ForgetIntent]:
    blob = vault.backend.read(PENDING_FORGETS)
    out = []
    for raw in (blob.data.split(b"\n") if blob else []):
        try:
            e = json.loads(raw)
            out.append(ForgetIntent(str(e["id"]), str(e["scope"]), list(e["records"]),
                                    [(str(r), str(k)) for r, k in e["keys"]],
                                    bool(e["permanent"]),
                                    str(e.get("reason") or "forgotten"), int(e["ts"]),
                                    [str(r) for r in e.get("hand") or []]))
        except (ValueError, KeyError, TypeError):
            continue  # a torn last line: that intent was never begun
    return out


def _texts_in_memory(vault: Vault, records: list[str]) -> list[tuple[str, str]]:
    from memvault.services.bullet_files import load_bullet_file

    wanted = set(records)
    doc = load_bullet_file(vault.backend, vault.layout.memory).doc
    return [(it.id, it.text) for it in doc.items if it.id in wanted]


def _texts_in_history(vault: Vault, records: list[str]) -> list[tuple[str, str]]:
    """(record, text) for every text the journal holds for these records."""
    wanted = set(records)
    out = []
    for ev in vault.events.events():
        if ev.get("record") in wanted:
            out += [(str(ev["record"]), ev[f]) for f in _TEXT_FIELDS
                    if isinstance(ev.get(f), str) and ev[f]]
    return out


def _remove_from_memory(vault: Vault, intent: ForgetIntent, texts: list[str]) -> list[Fact]:
    """Delete the intent's records from Memory.md (none left: nothing written)."""
    net = SafetyNet(vault.backend)
    wanted = set(intent.records)
    removed: list[Fact] = []

    def apply(doc: BulletDocument) -> list[Fact]:
        removed.clear()
        # A hand-written bullet whose provisional id came to equal a forgotten written id
        # (ids of hand-written bullets follow the file) is not that fact.
        items = [it for it in doc.items if it.id in wanted and it.editable
                 and (not it.provisional or it.id in intent.hand)]
        if not items:
            raise NoChange([])
        for item in sorted(items, key=lambda it: it.start, reverse=True):
            removed.append(fact_from_item(item))
            doc.delete_item(item)
        # no copy in the safety net outlives the fact (dropped before Memory.md moves)
        net.drop(ids=list(wanted), texts=texts + [f.text for f in removed],
                 paths=vault.layout.memory_files)
        return removed

    from memvault.services.tidy import collecting_notes

    with collecting_notes():  # the tombstones just written make these lines "forgotten"
        edit_bullet_file(vault.backend, vault.layout.memory, apply,
                         message="memvault: forget facts")
    return list(reversed(removed))


def _clear_search_index(vault: Vault, permanent: bool) -> None:
    """Forgotten text leaves the search index now. A permanent forget deletes the index
    (a cache, rebuilt by the next search): SQLite keeps deleted rows in free pages, so
    refreshing alone could leave a copy of the text in the file."""
    index = vault.search.index_path()
    if index is None or not index.exists():
        return
    from memvault.errors import VaultError

    if permanent:
        vault.search.discard("a fact was forgotten permanently")
        return
    try:
        vault.search.refresh()
    except VaultError:
        vault.search.store().discard("it could not be refreshed after forgetting")


def _remove_stale_temps(vault: Vault) -> None:
    """A write killed mid-way leaves a temp file beside the file it was replacing, which
    may hold the old bytes (and so the text): remove those of every file a forget
    touches (a local vault only; elsewhere writes leave no temp files)."""
    if vault.backend.capabilities.local_root is None:
        return
    remove = vault.backend.remove_stale_temps  # type: ignore[attr-defined]
    net = SafetyNet(vault.backend)
    files = list(vault.layout.memory_files)
    remove([*files, *(net.seen_path(f) for f in files), LOST, EVENTS, TOMBSTONES,
            PENDING_FORGETS])


def _finish(vault: Vault, intent: ForgetIntent) -> None:
    """Remove the completed intent (the file goes when it is the last one)."""
    blob = vault.backend.read(PENDING_FORGETS)
    if blob is None:
        return
    kept = [raw + b"\n" for raw in blob.data.split(b"\n")
            if raw.strip() and f'"id": "{intent.id}"'.encode() not in raw]
    if kept:
        vault.backend.write(PENDING_FORGETS, b"".join(kept), expected=ANY,
                            message="memvault: forget done")
    else:
        vault.backend.delete(PENDING_FORGETS)


def last_known(vault: Vault, record: str) -> Fact | None:
    """The fact a record id last was, from the journal, else from the safety net (for an
    id Memory.md no longer holds: forgotten, deleted by hand, or removed by a crash
    mid-forget)."""
    last: dict[str, Any] | None = None
    for ev in vault.events.events(record=record):
        if isinstance(ev.get("text"), str) and ev["text"]:
            last = ev
    if last is None:
        text = SafetyNet(vault.backend).text_of(record, vault.layout.memory)
        return None if text is None else Fact(id=record, text=text, category="other",
                                              category_raw="other", updated=None, line=0)
    category = str(last.get("category") or "other")
    return Fact(id=record, text=str(last["text"]), category=category, category_raw=category,
                updated=None, line=0)
