"""A local vault folder inside a git work tree: no memvault write while git is mid-operation.

When a rebase or merge stops on a conflict, git expects the work tree to hold exactly the
files it left there until `git rebase --continue` (or `git commit`). A memvault write in
between (a fact remembered by an assistant, a journal line) makes `--continue` fail with
a misleading message, or slips into the wrong commit. So `GitWorkTreeBackend` refuses
every write with one line naming the operation while one is open; reads are unaffected.

Finding the git folder and the operation uses only `stat` and one small file read (no
`git` process), so the check costs microseconds per write.
"""

from __future__ import annotations

import os
from pathlib import Path

from memvault.backends.base import ANY, Capabilities, Change, Expected
from memvault.backends.fs import FsBackend
from memvault.errors import ReadOnly

# Marker files and folders git keeps in its folder while an operation is unfinished.
OPERATION_MARKERS = (("rebase-merge", "rebase"), ("rebase-apply", "rebase"),
                     ("MERGE_HEAD", "merge"), ("CHERRY_PICK_HEAD", "cherry-pick"),
                     ("REVERT_HEAD", "revert"))


def find_git_dir(start: Path) -> Path | None:
    """The git folder of the work tree holding `start` (a `.git` folder, or the folder a
    `.git` file points to, as in linked worktrees and submodules), or None."""
    here = Path(os.path.abspath(start))
    for folder in (here, *here.parents):
        dot_git = folder / ".git"
        if dot_git.is_dir():
            return dot_git
        if dot_git.is_file():
            try:
                first = dot_git.read_text("utf-8", "replace").splitlines()[0]
            except (OSError, IndexError):
                return None
            if first.startswith("gitdir:"):
                target = Path(first[len("gitdir:"):].strip())
                return target if target.is_absolute() else (folder / target).resolve()
            return None
    return None


def operation_in_progress(git_dir: Path | None) -> str | None:
    """"rebase", "merge", "cherry-pick" or "revert" while git has one open, else None."""
    if git_dir is None:
        return None
    for marker, name in OPERATION_MARKERS:
        if (git_dir / marker).exists():
            return name
    return None


def refusal_message(operation: str) -> str:
    return (f"a git {operation} is in progress in this clone; memvault changes nothing until "
            f"it is finished: run `memvault sync` (it finishes memory files itself and says "
            f"what is left), or see `git status`")


class GitWorkTreeBackend(FsBackend):
    """`FsBackend` for a vault inside a git work tree (see the module doc)."""

    def __init__(self, root: str | os.PathLike[str], git_dir: Path) -> None:
        super().__init__(root)
        self.git_dir = git_dir

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(local_root=self.root, git_dir=self.git_dir)

    def _refuse_during_git_operation(self) -> None:
        operation = operation_in_progress(self.git_dir)
        if operation is not None:
            raise ReadOnly(refusal_message(operation))

    def write(self, path: str, data: bytes, *, expected: Expected = ANY,
              message: str = "") -> str:
        self._refuse_during_git_operation()
        return super().write(path, data, expected=expected, message=message)

    def delete(self, path: str, *, expected: Expected = ANY, message: str = "") -> None:
        self._refuse_during_git_operation()
        super().delete(path, expected=expected, message=message)

    def append(self, path: str, data: bytes, *, message: str = "") -> None:
        self._refuse_during_git_operation()
        super().append(path, data, message=message)

    def commit(self, changes: list[Change], *, message: str = "") -> None:
        self._refuse_during_git_operation()
        super().commit(changes, message=message)


def local_backend(root: str | os.PathLike[str]) -> FsBackend:
    """The backend for a local vault folder: git-aware when it lies in a git work tree."""
    git_dir = find_git_dir(Path(root))
    return GitWorkTreeBackend(root, git_dir) if git_dir is not None else FsBackend(root)
