"""`memvault resolve`: settle the merge conflicts memvault could not settle by itself.

A block is left when a fact was changed differently on two machines, edited on one and
deleted on the other without a tombstone, or when notes around the facts changed on both
sides. Each block holds this clone's version and the incoming one; the user keeps one
(`ours` = this clone, `theirs` = incoming) or both (a second copy of one fact gets an id
of its own). A version that is not kept goes to the journal when it is a fact, so
`memvault memory show ID` still has its words.

Writes go through the one write path (`edit_bullet_file`), so a resolve during an open
git rebase is refused like any write.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memvault.core.bullets import BulletDocument, parse_bullets
from memvault.core.lines import TextFile
from memvault.core.reconcile import (
    CHOICES,
    ConflictBlock,
    DroppedVersion,
    Tidied,
    find_blocks,
    resolve_block,
)
from memvault.errors import NotFound, UsageError
from memvault.services.bullet_files import edit_bullet_file
from memvault.services.one_commit import one_commit
from memvault.services.tidy import open_blocks, record_dropped, this_clone_first

if TYPE_CHECKING:
    from memvault.services.vault import Vault


@dataclass(slots=True)
class OpenConflict:
    path: str
    block: ConflictBlock

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, **self.block.to_dict()}


@dataclass(slots=True)
class ResolveReport:
    resolved: list[dict[str, Any]] = field(default_factory=list)
    left: list[OpenConflict] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"resolved": self.resolved, "left": [c.to_dict() for c in self.left]}


class ResolveService:
    def __init__(self, vault: Vault) -> None:
        self.vault = vault

    def conflicts(self) -> list[OpenConflict]:
        return [OpenConflict(path, block) for path in self.vault.layout.memory_files
                for block in open_blocks(self.vault.backend, path)]

    @one_commit("memvault resolve")
    def resolve(self, choice: str, *, fact_id: str | None = None,
                line: int | None = None, path: str | None = None) -> ResolveReport:
        """Apply `choice` to every open block (or those naming `fact_id`, or the one at
        `path`:`line`)."""
        if choice not in CHOICES:
            raise UsageError(f"choose one of {', '.join(CHOICES)}")
        report = ResolveReport()
        matched = False
        for file_path in self.vault.layout.memory_files:
            if path is not None and file_path != path:
                continue
            wanted = [b for b in open_blocks(self.vault.backend, file_path)
                      if (fact_id is None or fact_id in b.fact_ids())
                      and (line is None or b.line_no == line)]
            if not wanted:
                continue
            matched = True
            report.resolved += self._resolve_file(file_path, wanted, choice)
        if not matched:
            what = f"about {fact_id!r}" if fact_id else "left"
            raise NotFound(f"no merge conflict {what} in the memory files")
        report.left = self.conflicts()
        return report

    def _resolve_file(self, path: str, wanted: list[ConflictBlock],
                      choice: str) -> list[dict[str, Any]]:
        keys = {(b.reason, tuple(ln.text for ln in b.local)) for b in wanted}
        done: list[dict[str, Any]] = []
        dropped: list[DroppedVersion] = []
        first = this_clone_first(self.vault.backend)

        def apply(doc: BulletDocument) -> list[dict[str, Any]]:
            done.clear()
            dropped.clear()
            data = doc.to_bytes()
            blocks = [b for b in find_blocks(TextFile.parse(data).lines, local_first=first)
                      if (b.reason, tuple(ln.text for ln in b.local)) in keys]
            for block in reversed(blocks):  # bottom up: earlier positions stay valid
                mine, theirs = block.versions()
                data = resolve_block(data, block, choice)
                kept, lost = {"ours": (mine, theirs), "theirs": (theirs, mine),
                              "both": (mine + theirs, [])}[choice]
                dropped.extend(_lost_versions(kept, lost))
                done.append({"path": path, "line": block.line_no, "facts": block.fact_ids(),
                             "kept": choice})
            fresh = parse_bullets(data)
            doc.file.lines[:] = fresh.file.lines
            doc._reparse()
            return list(reversed(done))

        result = edit_bullet_file(self.vault.backend, path, apply,
                                  message=f"memvault resolve: keep {choice}")
        record_dropped(self.vault.backend, path, Tidied(b"", dropped=dropped))
        return result


def _lost_versions(kept: list[str], lost: list[str]) -> list[DroppedVersion]:
    """Facts in the version not kept: their words go to the journal."""
    kept_items = {it.id: it for it in _items(kept)}
    out = []
    for it in _items(lost):
        if it.provisional:
            continue
        now = kept_items.get(it.id)
        if now is None or now.text != it.text:
            out.append(DroppedVersion(it.id, now.text if now else "", it.text,
                                      it.category_raw))
    return out


def _items(lines: list[str]) -> list[Any]:
    return parse_bullets("".join(ln + "\n" for ln in lines).encode("utf-8",
                                                                   "surrogateescape")).items
