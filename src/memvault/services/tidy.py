"""Every command reads memory files as a merge should have left them, and writes them so.

A clone synced by plain git or Obsidian Git merges memory files as unions of lines; the
rules that settle what such a merge leaves are pure (`memvault.core.reconcile`). This
module applies them where the vault is read and written:

- `read_view` (`read_document` parsed): what every reader sees — tidied, and each
  conflict block still open shown as this clone's version only (so a fact is never
  listed or served twice, and a forgotten one never at all). Reading never writes.
- `write_view`: what the one write path (`edit_bullet_file`) edits — tidied, with open
  conflict blocks kept for `memvault resolve`. The next write of the file settles it.
- `tidy_vault`: settle every memory file now (every CLI command does it first, and
  `memvault sync` after a merge), recording each older version a newer one replaced in
  the journal, and saying what it did.

Whether the first or second section of a git-style block is this clone's depends on git:
during a rebase git shows upstream first.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memvault.core.kinds import file_names
from memvault.layout import DEFAULT_SCOPE, SCOPES_FOLDER

if TYPE_CHECKING:
    from memvault.backends.base import Backend
    from memvault.core.bullets import BulletDocument
    from memvault.core.reconcile import ConflictBlock
    from memvault.core.tidy_check import Tidied
    from memvault.services.doctor import Finding
    from memvault.services.vault import Vault

# The rules and the journal are imported where they are used: every command imports this
# module (for `collecting_notes`), and a command that reads no memory file needs neither.

MERGED_EVENT = "fact.merged"
_NOTES: ContextVar[list[str] | None] = ContextVar("memvault_tidy_notes", default=None)


@contextmanager
def collecting_notes() -> Iterator[list[str]]:
    """Collect what writes settled while the block runs (the CLI prints it at the end)."""
    notes: list[str] = []
    token = _NOTES.set(notes)
    try:
        yield notes
    finally:
        _NOTES.reset(token)


def report_notes(notes: list[str]) -> None:
    sink = _NOTES.get()
    if sink is not None:
        sink.extend(n for n in notes if n not in sink)


def scope_of(path: str) -> str:
    """The principal a memory file belongs to, from its path (`…/scopes/<name>/X.md`)."""
    parts = path.split("/")
    if len(parts) >= 3 and parts[-3] == SCOPES_FOLDER:
        return parts[-2]
    return DEFAULT_SCOPE


def this_clone_first(backend: Backend) -> bool:
    """False while a rebase is open: git then shows the upstream side first."""
    git_dir = backend.capabilities.git_dir
    if git_dir is None:
        return True
    from memvault.backends.fs_git import operation_in_progress

    return operation_in_progress(git_dir) != "rebase"


def write_view(backend: Backend, path: str, data: bytes, *,
               renumber_copies: bool = True) -> Tidied:
    from memvault.core.tidy_check import Tidied, might_need_tidy
    from memvault.services.journal import dead_records_in

    scope = scope_of(path)
    dead = dead_records_in(backend, scope) if data else frozenset()
    if not might_need_tidy(data, dead):
        return Tidied(data)
    # A file with hand-written bullets passes the quick check every time; once the rules
    # found nothing in these bytes (without asking the journal), they are not run again:
    # in this process, nor (through the parse cache's entry of these bytes) in the next.
    clean_key = (data, dead, renumber_copies)
    with _CLEAN_LOCK:
        if clean_key in _CLEAN:
            return Tidied(data)
    from memvault.services import parse_cache

    verdict = parse_cache.tidy_verdict(dead, renumber_copies)
    known_clean = parse_cache.parse_if_tidy(backend, path, data, verdict)
    if known_clean is not None:
        return Tidied(data, doc=known_clean)
    from memvault.core.reconcile import tidy

    asked = JournalKnows(backend, scope)
    # the rules parse what they settle: from the cache when it holds these bytes
    parsed = parse_cache.parse(backend, path, data, keep=False) \
        if b"<<<<<<<" not in data else None
    out = tidy(data, dead=dead, local_first=this_clone_first(backend), path=path,
               known=asked, renumber_copies=renumber_copies, quick_check=False,
               parsed=parsed)
    if out.data == data and not out.blocks and not out.all_notes and \
            not asked.consulted:
        with _CLEAN_LOCK:
            if len(_CLEAN) >= _CLEAN_MAX:
                _CLEAN.pop(next(iter(_CLEAN)))
            _CLEAN[clean_key] = None
        if out.doc is not None and out.doc.to_bytes() == data:
            parse_cache.note_tidy(backend, path, data, out.doc, verdict)
    return out


_CLEAN: dict[tuple[bytes, frozenset[str], bool], None] = {}
_CLEAN_MAX = 16
_CLEAN_LOCK = threading.Lock()


class JournalKnows:
    """`known(record, text)`: the journal holds this text for this record (read lazily,
    once; `consulted` says whether it was asked at all)."""

    def __init__(self, backend: Backend, scope: str) -> None:
        self.backend, self.scope = backend, scope
        self.consulted = False
        self._pairs: set[tuple[str, str]] | None = None

    def __call__(self, record: str, text: str) -> bool:
        from memvault.core.bullets import normalise_text

        self.consulted = True
        if self._pairs is None:
            from memvault.services.journal import EventLog

            self._pairs = set()
            for ev in EventLog(self.backend, self.scope).events():
                for name in ("text", "previous_text"):
                    if isinstance(ev.get(name), str):
                        self._pairs.add((str(ev.get("record")), normalise_text(ev[name])))
        return (record, normalise_text(text)) in self._pairs



def read_view(backend: Backend, path: str, data: bytes) -> bytes:
    from memvault.core.reconcile import local_view

    tidied = write_view(backend, path, data)
    if not tidied.blocks:
        return tidied.data
    return local_view(tidied.data, local_first=this_clone_first(backend))


def read_document(backend: Backend, path: str, data: bytes) -> BulletDocument:
    """`read_view` parsed (tidying's own parse reused when it made one)."""
    from memvault.core.bullets import parse_bullets
    from memvault.services import parse_cache

    tidied = write_view(backend, path, data)
    if tidied.blocks:
        from memvault.core.reconcile import local_view

        return parse_bullets(local_view(tidied.data, local_first=this_clone_first(backend)))
    if tidied.doc is not None:
        return tidied.doc
    if tidied.data == data:  # the file as it is: its parse may be cached
        return parse_cache.parse(backend, path, data)
    return parse_bullets(tidied.data)


def open_blocks(backend: Backend, path: str) -> list[ConflictBlock]:
    blob = backend.read(path)
    return write_view(backend, path, blob.data).blocks if blob else []


def record_dropped(backend: Backend, path: str, tidied: Tidied) -> None:
    """Each older version a newer one replaced goes to the journal (nothing is lost)."""
    if not tidied.dropped:
        return
    from memvault.services.journal import EventLog

    events = []
    for d in tidied.dropped:
        digest = hashlib.sha1(f"{d.record}\x00{d.dropped_text}\x00{d.kept_text}".encode(
            "utf-8", "surrogateescape")).hexdigest()[:12]
        event = {"id": f"mg-{digest}", "type": MERGED_EVENT, "record": d.record,
                 "previous_text": d.dropped_text, "category": d.category, "via": "merge"}
        if d.kept_text:
            event["text"] = d.kept_text
        events.append(event)
    EventLog(backend, scope_of(path)).append_many(events)


@dataclass(slots=True)
class TidyReport:
    notes: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    skipped: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"notes": self.notes, "conflicts": self.conflicts, "skipped": self.skipped}


def memory_files(vault: Vault, *, every_scope: bool = False) -> list[str]:
    files = list(vault.layout.memory_files)
    if every_scope:
        prefix = f"{vault.layout.home_root}/{SCOPES_FOLDER}/"
        for path in vault.backend.list(vault.layout.home_root):
            if path.startswith(prefix) and path.count("/") == prefix.count("/") + 1 and \
                    path.rsplit("/", 1)[-1] in file_names():
                files.append(path)
    return files


def tidy_vault(vault: Vault, *, every_scope: bool = False) -> TidyReport:
    """Settle what merges left in the memory files now (see the module doc)."""
    from memvault.errors import ReadOnly
    from memvault.services.bullet_files import NoChange, edit_bullet_file

    report = TidyReport()
    for path in memory_files(vault, every_scope=every_scope):
        blob = vault.backend.read(path)
        if blob is None:
            continue
        tidied = write_view(vault.backend, path, blob.data)
        report.conflicts += [f"{path}:{b.line_no}: {b.reason}" for b in tidied.blocks]
        if tidied.data == blob.data:
            continue

        def keep(_doc: Any) -> None:
            raise NoChange(None)  # the write path persists the tidied file

        try:
            edit_bullet_file(vault.backend, path, keep, message="memvault: tidy after a merge")
        except ReadOnly as exc:
            report.skipped = str(exc)
            return report
        report.notes += tidied.notes
    return report


def tidy_findings(vault: Vault) -> list[Finding]:
    """For doctor: what the next write would settle in each memory file."""
    from memvault.services.doctor import Finding

    out = []
    for path in vault.layout.memory_files:
        blob = vault.backend.read(path)
        if blob is None:
            continue
        tidied = write_view(vault.backend, path, blob.data)
        for note in tidied.notes:
            out.append(Finding("warning", path, note.removeprefix(f"{path}: ")
                               + " — not yet written: `memvault doctor --fix` (or any "
                               "memvault change) writes it"))
    return out


_MARKERS = (b"<<<<<<<", b"=======", b">>>>>>>", b"|||||||")


def tidy_journal(vault: Vault) -> list[str]:
    """Settle what a text merge left in the journals: conflict marker lines and an event
    twice are removed, and the history of a permanently forgotten record that a merge
    brought back is erased again (its content-free `fact.forgotten` event stays).

    A tombstone line repeated is removed only when nothing about the same key or record
    lies between the copies (`redundant_tombstone_copies`): forget, restore and forget
    within one second write the same line twice, and the second one is the forget."""
    from memvault.backends.base import MISSING
    from memvault.errors import Conflict
    from memvault.services.journal import EventLog, erased_records
    from memvault.state_paths import EVENTS, JOURNALS

    notes: list[str] = []
    backend = vault.backend
    for path in JOURNALS:
        with backend.lock():
            blob = backend.read(path)
            if blob is None:
                continue
            lines = [raw for raw in blob.data.split(b"\n") if raw.strip()]
            markers = sum(1 for raw in lines if raw.startswith(_MARKERS))
            lines = [raw for raw in lines if not raw.startswith(_MARKERS)]
            twice = _repeated_lines(lines, events=path == EVENTS)
            kept = [raw + b"\n" for i, raw in enumerate(lines) if i not in twice]
            if markers or twice:
                try:
                    backend.write(path, b"".join(kept), expected=blob.version or MISSING,
                                  message="memvault: tidy the journal after a merge")
                except Conflict:
                    continue  # written meanwhile: the next tidy settles it
                if markers:
                    notes.append(f"{path}: removed {markers} merge conflict marker line(s)")
                if twice:
                    notes.append(f"{path}: removed {len(twice)} line(s) a merge held twice")
    blob = backend.read(EVENTS)
    if blob is not None:
        raw_events = _json_lines(blob.data)
        for record in sorted(erased_records(raw_events)):
            leftovers = [ev for ev in raw_events if ev.get("record") == record
                         and ev.get("type") != "fact.forgotten"]
            if not leftovers:
                continue
            scope = str(leftovers[0].get("scope", DEFAULT_SCOPE))
            removed = EventLog(backend, scope).purge_record(record)
            if removed:
                notes.append(f"{EVENTS}: erased {removed} event(s) of {record}, forgotten "
                             "permanently, that a merge brought back")
    return notes


def _repeated_lines(lines: list[bytes], *, events: bool) -> set[int]:
    """Indexes of the lines a merge held twice: a later copy of an event (same principal
    and id: readers read the first), or a tombstone line whose removal changes nothing
    about what is forgotten."""
    import json

    from memvault.core.journal_lines import redundant_tombstone_copies
    from memvault.services.journal import event_key

    if not events:
        return redundant_tombstone_copies(lines)
    seen: set[Any] = set()
    twice: set[int] = set()
    for i, raw in enumerate(lines):
        key: Any = raw
        try:
            key = event_key(json.loads(raw)) or raw
        except (ValueError, AttributeError):
            pass
        if key in seen:
            twice.add(i)
        else:
            seen.add(key)
    return twice


def _json_lines(data: bytes) -> list[dict[str, Any]]:
    import json

    out = []
    for raw in data.split(b"\n"):
        if b'"record"' not in raw:
            continue
        try:
            obj = json.loads(raw)
        except ValueError:
            continue
        if isinstance(obj, dict):
            out.append(obj)
    return out
