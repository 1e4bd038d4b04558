"""`memvault doctor`: find what needs the user's attention, and fix only what is safe.

Reports, per file and line: unknown categories, duplicate ids, read-only items and
files (and why), conflict copies, git conflict markers, torn journal lines and an
invalid config. `fix()` stamps ids on hand-written bullets and gives later duplicate
ids a new id derived from the id and the copy's words, changing no other byte.

Other parts of memvault add their own checks and repairs (git sync, merge leftovers,
unreadable notes, Policy.md and Profile.md, lost records, facts the journal never
recorded): `registered_checks()` lists them, in the order they run; adding one is adding
a line there.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, Literal

from memvault.config import parse_config
from memvault.core.bullets import BulletDocument, render_updated_item
from memvault.core.kinds import all_kinds
from memvault.errors import VaultError
from memvault.services.bullet_files import (
    NoChange,
    edit_bullet_file,
    ids_beside,
    load_bullet_file,
    load_raw,
)
from memvault.services.one_commit import one_commit
from memvault.state_paths import CONFIG, EVENTS, TOMBSTONES

if TYPE_CHECKING:
    from memvault.services.vault import Vault

# Obsidian Sync "(Conflicted copy X 2024…)", Dropbox "(X's conflicted copy …)",
# Syncthing "Memory.sync-conflict-20241128-143000-ABC.md".
_CONFLICT_COPY = re.compile(r"\([^)]*conflict[^)]*\)|\.sync-conflict-\d", re.I)


Severity = Literal["error", "warning", "info"]


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing doctor noticed. `severity`: "error" and "warning" need attention."""

    severity: Severity
    path: str
    message: str
    line: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"severity": self.severity, "path": self.path, "line": self.line,
                "message": self.message}

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{where}: {self.message}"


@dataclass(slots=True)
class DoctorReport:
    findings: list[Finding] = field(default_factory=list)
    fixed: list[str] = field(default_factory=list)

    @property
    def needs_attention(self) -> bool:
        return any(f.severity in ("error", "warning") for f in self.findings)

    def to_dict(self) -> dict[str, Any]:
        return {"ok": not self.needs_attention,
                "findings": [f.to_dict() for f in self.findings], "fixed": self.fixed}


Check = Callable[["Vault"], list[Finding]]
"""A check another module contributes: the vault in, findings out (never writes)."""
Repair = Callable[["Vault"], list[str]]
"""A repair for `doctor --fix`: changes only what is safe, returns one note per change."""


def registered_checks() -> tuple[list[Check], list[Repair]]:
    """The checks and repairs other modules contribute, in the order they run. Imported
    here, when doctor runs, so no other command pays for them."""
    from memvault.services import journal_gaps, leftover_temps
    from memvault.services.git_doctor import fix_driver, sync_doctor_findings
    from memvault.services.obsidian_checks import obsidian_settings_findings
    from memvault.services.parse_cache_forget import doctor_findings as parse_cache_findings
    from memvault.services.policy import notes_doctor_findings
    from memvault.services.proposals import held_ticks_findings
    from memvault.services.recovery import recovery_doctor_findings
    from memvault.services.search import unreadable_notes_check
    from memvault.services.tidy import tidy_findings, tidy_journal

    checks: list[Check] = [sync_doctor_findings, tidy_findings, unreadable_notes_check,
                           notes_doctor_findings, recovery_doctor_findings,
                           obsidian_settings_findings, held_ticks_findings,
                           parse_cache_findings, leftover_temps.doctor_findings,
                           journal_gaps.doctor_findings]
    repairs: list[Repair] = [fix_driver, tidy_journal, leftover_temps.doctor_repair,
                             journal_gaps.doctor_repair]
    return checks, repairs


class DoctorService:
    def __init__(self, vault: Vault) -> None:
        self.vault = vault
        self.backend = vault.backend
        checks, repairs = registered_checks()
        self.checks: list[Callable[[], list[Finding]]] = [partial(c, vault) for c in checks]
        """The contributed checks, bound to this vault (see `registered_checks`)."""
        self.fixers: list[Callable[[], list[str]]] = [partial(r, vault) for r in repairs]
        """The contributed repairs for `fix()`, bound to this vault."""

    def bullet_files(self) -> list[tuple[str, tuple[str, ...]]]:
        lay = self.vault.layout
        return [(lay.path(kind), kind.categories) for kind in all_kinds()]

    def check(self) -> DoctorReport:
        report = DoctorReport()
        out = report.findings
        blob = self.backend.read(CONFIG)
        if blob is None:
            out.append(Finding("info", CONFIG, "no config file; defaults apply "
                                                    "(run `memvault init`)"))
        else:
            try:
                cfg = parse_config(blob.data)
                for key in cfg.unknown_keys:
                    out.append(Finding("info", CONFIG, f"unknown setting {key!r} (ignored)"))
            except VaultError as exc:
                message = str(exc).removeprefix(CONFIG + ": ")
                at = re.search(r"\bline (\d+)", message)
                out.append(Finding("error", CONFIG, message,
                                   int(at.group(1)) if at else None))
        docs: list[tuple[str, BulletDocument]] = []
        for path, known in self.bullet_files():
            try:
                loaded = load_raw(self.backend, path)
            except VaultError as exc:
                out.append(Finding("error", path, str(exc).removeprefix(path + ": ")))
                continue
            if loaded.exists:
                out.extend(_check_bullets(path, loaded.doc, known,
                                          self._settled_by_a_write(path, loaded.doc),
                                          self._merge_copies(path, loaded.doc)))
                docs.append((path, loaded.doc))
        out.extend(_ids_shared_by_kinds(docs))
        out.extend(self._conflict_copies())
        out.extend(self._symlinked_home_files())
        for path in (EVENTS, TOMBSTONES):
            out.extend(_check_json_lines(self.backend, path))
        for extra in self.checks:
            try:
                out.extend(extra())
            except VaultError as exc:  # one unreadable file must not hide the others
                path = exc.path or ""
                out.append(Finding("error", path, str(exc).removeprefix(f"{path}: ")))
        report.findings = list(dict.fromkeys(out))  # a file two checks trip over: once
        return report

    def _settled_by_a_write(self, path: str, doc: BulletDocument) -> set[str]:
        """Duplicate ids the next write settles as one fact (what a union merge left: the
        same change twice, one fact edited on two machines), which `tidy_findings`
        reports with what will happen; doctor does not also call them duplicates for
        `--fix` to renumber. A copied line (different text, not a version memvault
        wrote) stays a duplicate: `--fix` gives it an id of its own."""
        if not doc.duplicate_ids:
            return set()
        from memvault.core.bullets import parse_bullets
        from memvault.services.tidy import write_view

        tidied = write_view(self.backend, path, doc.to_bytes(), renumber_copies=False)
        if tidied.data == doc.to_bytes():
            return set()
        return set(doc.duplicate_ids) - set(parse_bullets(tidied.data).duplicate_ids)

    def _merge_copies(self, path: str, doc: BulletDocument) -> set[int]:
        """Lines of id-less copies a merge left, which the next write removes (reported by
        `tidy_findings`): doctor does not also offer them to `--fix` for an id."""
        from memvault.core.reconcile import merge_leftovers
        from memvault.services.tidy import JournalKnows, scope_of

        known = JournalKnows(self.backend, scope_of(path))
        return {it.line_no for it, _ in merge_leftovers(doc, known)}

    def _conflict_copies(self) -> list[Finding]:
        found = []
        for path in self.backend.list(self.vault.layout.home):
            name = path.rsplit("/", 1)[-1]
            if name.endswith(".md") and _CONFLICT_COPY.search(name):
                found.append(Finding("warning", path, "sync conflict copy: compare it with the "
                                     "original, merge by hand, then delete it"))
        return found

    def _symlinked_home_files(self) -> list[Finding]:
        """Memory files and folders that are symlinks: read through, never written through
        (Policy.md itself is reported by the policy check, which fails closed on it)."""
        if self.backend.capabilities.local_root is None:
            return []
        link_target = self.backend.link_target  # type: ignore[attr-defined]
        lay = self.vault.layout
        found: list[Finding] = []
        for path in (lay.home, *lay.memory_files, lay.profile, lay.journal_dir,
                     lay.trades_dir, lay.reflections_dir):
            target = link_target(path)
            if target is not None and not (found and path.startswith(lay.home + "/")):
                found.append(Finding("warning", path, f"is reached through a symlink (it leads "
                                     f"to {target}): memvault reads it but refuses to write "
                                     "through it; replace the link with the real file or "
                                     "folder"))
        return found

    @one_commit("memvault doctor --fix")
    def fix(self) -> DoctorReport:
        """Stamp ids on hand-written bullets and resolve duplicate ids; then re-check."""
        fixed: list[str] = []
        for path, _known in self.bullet_files():
            loaded = load_bullet_file(self.backend, path)
            if not loaded.exists or loaded.doc.readonly_reason:
                continue

            def apply(doc: BulletDocument, path: str = path) -> list[str]:
                # An id-less copy a merge left beside the fact it became is removed, never
                # stamped as a second fact (the write has settled it already, unless the
                # quick check missed it).
                known = JournalKnows(self.backend, scope_of(path))
                notes: list[str] = drop_leftovers(doc, known, f"{path}: ")
                taken = {it.id for it in doc.items} | ids_beside(
                    self.backend, self.vault.layout.memory_files, path)
                now = str(int(time.time()))
                seen: set[str] = set()
                for index in range(len(doc.items)):
                    it = doc.items[index]  # re-read: an earlier fix may have moved lines
                    if not it.editable:
                        if not it.provisional:
                            seen.add(it.id)  # a later editable copy still needs a new id
                        continue
                    if it.provisional:
                        # Its id gets written: never one a forget left dead.
                        self.vault.tombstones.revive(it.id, it.text)
                        meta = {"id": it.id, "updated": now, **it.meta}
                        notes.append(f"{path}:{it.line_no}: stamped id {it.id}")
                    elif it.id in seen:
                        # derived from the id and words, as a merge renumbers a copy: the
                        # same on every clone, and known as a copy (`journal_gaps`)
                        new_id = derived_id(it.id, it.text, taken)
                        taken.add(new_id)
                        meta = dict(it.meta)
                        meta["id"] = new_id
                        notes.append(f"{path}:{it.line_no}: duplicate id {it.id} → {new_id}")
                    else:
                        seen.add(it.id)
                        continue
                    seen.add(meta["id"])
                    doc.replace_item(it, render_updated_item(it, meta=meta))
                if not notes:
                    raise NoChange([])
                return notes

            from memvault.core.reconcile import derived_id, drop_leftovers
            from memvault.services.tidy import JournalKnows, collecting_notes, scope_of

            with collecting_notes() as settled:  # what a merge left, settled by the write
                done = edit_bullet_file(self.backend, path, apply,
                                        message="memvault doctor --fix")
            fixed.extend(settled)
            fixed.extend(done)
        for repair in self.fixers:
            fixed.extend(repair())
        report = self.check()
        report.fixed = fixed
        return report


def _check_bullets(path: str, doc: BulletDocument, known: tuple[str, ...],
                   settled: Collection[str] = (), copies: Collection[int] = ()
                   ) -> list[Finding]:
    """Findings about one bullet file. A whole conflict block is reported by the sync
    check (`git_doctor.conflict_findings`, pointing to `memvault resolve`); only marker
    lines outside any block are reported here. Ids in `settled` are duplicates the next
    write settles, and lines in `copies` id-less copies it removes (both reported by
    `tidy_findings`)."""
    from memvault.core.bullets import CONFLICT_REASON
    from memvault.core.reconcile import find_blocks

    out: list[Finding] = []
    if doc.readonly_reason:
        out.append(Finding("error", path, f"file is read-only for memvault: {doc.readonly_reason}"))
    in_block = {n for block in find_blocks(doc.file.lines)
                for n in range(block.start, block.end)}
    for index, ln in enumerate(doc.file.lines):
        if index in in_block:
            continue
        if ln.text.startswith(("<<<<<<<", ">>>>>>>", "|||||||")) or ln.text == "=======":
            out.append(Finding("error", path, "a merge conflict marker line outside any "
                               "complete conflict block (a half-edited block?): delete the "
                               "marker line; `memvault resolve` settles complete blocks",
                               index + 1))
    for it in doc.items:
        if it.readonly_reason == CONFLICT_REASON:
            continue  # its block is reported once, with `memvault resolve`
        if it.readonly_reason and it.readonly_reason != doc.readonly_reason:
            out.append(Finding("warning", path, f"item is read-only: {it.readonly_reason}",
                               it.line_no))
        if it.category_raw and it.category_raw.lower() not in known:
            out.append(Finding("warning", path, f"unknown category [{it.category_raw}] "
                               f"(treated as 'other'; known: {', '.join(known)})", it.line_no))
        if it.provisional and it.editable and it.line_no not in copies:
            out.append(Finding("info", path, f"hand-written bullet without an id (provisional "
                               f"id {it.id}; `doctor --fix` stamps it)", it.line_no))
    for dup_id, items in doc.duplicate_ids.items():
        items = [it for it in items if it.readonly_reason != CONFLICT_REASON]
        if dup_id in settled or len(items) < 2:
            continue  # the two versions of a conflict block: `memvault resolve` decides
        lines = ", ".join(str(i.line_no) for i in items)
        out.append(Finding("warning", path, f"duplicate id {dup_id} on lines {lines} "
                           "(`doctor --fix` gives the later copies new ids)", items[1].line_no))
    return out


def _ids_shared_by_kinds(docs: list[tuple[str, BulletDocument]]) -> list[Finding]:
    """Ids that two bullet files share (memvault gives every record an id unused in any
    of them; an older vault, an import or a copied line may still hold one twice)."""
    first: dict[str, tuple[str, int]] = {}
    out: list[Finding] = []
    for path, doc in docs:
        here: set[str] = set()
        for it in doc.items:
            if it.provisional or it.id in here:
                continue  # provisional ids are stamped by --fix; in-file copies above
            here.add(it.id)
            if it.id in first:
                other, line = first[it.id]
                out.append(Finding("warning", path, f"id {it.id} is also used in {other} "
                                   f"(line {line}): `memvault show` finds that record first; "
                                   "an accepted proposal is stored under a new id",
                                   it.line_no))
            else:
                first[it.id] = (path, it.line_no)
    return out


def _check_json_lines(backend: Any, path: str) -> list[Finding]:
    import json

    blob = backend.read(path)
    if blob is None:
        return []
    out = []
    for n, raw in enumerate(blob.data.split(b"\n"), 1):
        if not raw.strip():
            continue
        try:
            ok = isinstance(json.loads(raw), dict)
        except ValueError:
            ok = False
        if not ok:
            out.append(Finding("warning", path, "unreadable journal line (skipped)", n))
    return out
