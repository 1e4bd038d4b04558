"""What `memvault sync` did, in words and as data, and the steps it gives when it stops.

Every report says what was committed locally, what came in (by fact id), what was pushed
and what is still waiting. Steps are given only where they work as written: they were
checked against real git (an autostash that met incoming changes, a rebase or merge left
open by a conflict in the user's own notes).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class SyncReport:
    committed: list[str] = field(default_factory=list)
    added: list[dict[str, str]] = field(default_factory=list)
    changed: list[dict[str, str]] = field(default_factory=list)
    forgotten: list[str] = field(default_factory=list)
    pushed: bool = False
    pushed_commits: int = 0
    remote: str | None = None
    waiting: int = 0
    """Local commits the remote does not have yet."""
    offline: str | None = None
    """Why the remote could not be reached (the work stays committed locally)."""
    conflicts: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    reconciled: list[str] = field(default_factory=list)

    @property
    def needs_attention(self) -> bool:
        return bool(self.conflicts or self.problems or self.offline)

    def to_dict(self) -> dict[str, Any]:
        return {"committed": self.committed, "incoming": {
            "added": self.added, "changed": self.changed, "forgotten": self.forgotten},
            "pushed": self.pushed, "pushed_commits": self.pushed_commits,
            "remote": self.remote, "waiting": self.waiting, "offline": self.offline,
            "conflicts": self.conflicts, "problems": self.problems,
            "reconciled": self.reconciled, "warnings": self.warnings}

    def lines(self) -> list[str]:
        out = []
        if self.committed:
            out.append(f"committed locally: {len(self.committed)} file(s): "
                       f"{', '.join(self.committed)}")
        for f in self.added:
            out.append(f'+ fact {f["id"]} "{f["text"]}"')
        for f in self.changed:
            out.append(f'~ fact {f["id"]} "{f["text"]}"')
        for fid in self.forgotten:
            out.append(f"- fact {fid}")
        out += [f"tidied: {note}" for note in self.reconciled]
        out += [f"conflict: {c}" for c in self.conflicts]
        out += self.problems
        if self.pushed:
            out.append(f"pushed {self.pushed_commits} commit(s) to {self.remote}")
        waiting = f"{self.waiting} local commit(s) wait" if self.waiting else "nothing waits"
        if self.conflicts:
            out.append(f"not pushed ({waiting}): resolve the conflicts with `memvault resolve` "
                       "(or keep one line by hand), then run `memvault sync` again")
        elif self.offline:
            out.append(f"not pushed: {self.offline}; your work is committed locally "
                       f"({waiting}) and goes out with the next `memvault sync`")
        elif self.problems:
            if self.waiting:
                out.append(f"not pushed yet: {waiting}")
        elif self.remote is None:
            out.append("no remote configured: committed locally only")
        elif not self.pushed:
            out.append(f"up to date with {self.remote}")
        return out


def _names(paths: list[str]) -> str:
    return ", ".join(paths)


def autostash_steps(paths: list[str], stash_ref: str | None) -> str:
    """Steps after `--autostash` could not re-apply uncommitted changes cleanly."""
    kept = (f"; your uncommitted version is also kept in the stash ({stash_ref})"
            if stash_ref else "")
    drop = f", then `git stash drop {stash_ref}`" if stash_ref else ""
    quoted = " ".join(paths)
    return (f"your uncommitted changes to {_names(paths)} met incoming changes, and git left "
            f"conflict markers in them{kept}. To finish: edit them to keep what you want "
            f"(delete the <<<<<<< ======= >>>>>>> lines), run `git restore --staged "
            f"{quoted}`{drop}; then `memvault sync` again")


def open_operation_steps(operation: str, paths: list[str], *, detail: str = "") -> str:
    """Steps for a rebase or merge that needs the user (conflicts in their own notes)."""
    if operation == "rebase" and paths:
        return (f"git stopped the rebase on conflicts in your notes: {_names(paths)}. To "
                "finish: edit them to keep what you want (delete the <<<<<<< ======= >>>>>>> "
                "lines), `git add` them, then run `memvault sync` again (it continues the "
                "rebase and merges memory files itself); `git rebase --abort` instead goes "
                "back to before the sync")
    if operation == "rebase":
        return (f"git cannot continue the rebase ({detail}): `git status` lists what changed "
                "since it stopped; `git add` those files, then run `memvault sync` again")
    if operation == "merge" and paths:
        return (f"a git merge stopped on conflicts in your notes: {_names(paths)}. To "
                "finish: edit them to keep what you want (delete the <<<<<<< ======= >>>>>>> "
                "lines), `git add` them, then run `memvault sync` again (it finishes the "
                "merge and merges memory files itself)")
    return (f"a git {operation} is in progress: finish it with `git {operation} --continue` "
            f"(or `git {operation} --abort`), then run `memvault sync`")


def rewritten_upstream_steps(upstream: str, known: str) -> str:
    """Steps when the remote's history was replaced (a `forget --rewrite-history`)."""
    return (f"{upstream}'s history was rewritten (by `memvault forget --rewrite-history` on "
            f"another clone, or a force push): a normal sync would bring back what was "
            f"removed, so nothing was pulled or pushed. To take the new history and keep this "
            f"clone's unpushed commits: `git rebase --onto {upstream} {known[:12]}`, then "
            f"`memvault sync`; or, to drop them, `git reset --keep {upstream}` (uncommitted "
            f"notes stay)")
