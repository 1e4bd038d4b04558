"""The git command line, as memvault's sync and history features use it.

`GitRepo(root)` runs `git` in a vault folder (the reference behaviour; no library) with a
fixed locale, no prompts and no editor, and answers the questions sync asks: where the
work tree and git folder are, whether a rebase or merge is open, which paths are
unmerged, what a path held at a ref or in a conflict stage.

It never rewrites history or pushes by itself; callers decide.
"""

from __future__ import annotations

import os
import subprocess
from functools import cached_property
from pathlib import Path

from memvault.backends.fs_git import find_git_dir, operation_in_progress
from memvault.errors import InvalidInput, VaultError

GIT_TIMEOUT = 600  # seconds; a fetch or push over a slow link may take a while


def last_line(text: str) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1] if lines else "unknown error"


def git_error(text: str) -> str:
    """The line of git's stderr that says what went wrong (its first `fatal:`/`error:`
    line; the last line is often advice such as "and the repository exists.")."""
    for line in text.splitlines():
        for prefix in ("fatal: ", "error: "):
            if line.startswith(prefix):
                return line[len(prefix):].strip()
    return last_line(text)


class GitRepo:
    """A git work tree holding a vault (see the module doc)."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)
        self._ident: dict[str, str] | None = None

    # -- running git ---------------------------------------------------------------------

    def run(self, *args: str, check: bool = True, env: dict[str, str] | None = None,
            text: bool = True, cwd: Path | None = None) -> subprocess.CompletedProcess:
        full_env = dict(os.environ, GIT_TERMINAL_PROMPT="0", GIT_EDITOR="true", LC_ALL="C",
                        GIT_MERGE_AUTOEDIT="no")
        full_env.update(self._identity_env())
        full_env.update(env or {})
        try:
            proc = subprocess.run(["git", *args], cwd=cwd or self.root, capture_output=True,
                                  text=text, env=full_env, timeout=GIT_TIMEOUT)
        except FileNotFoundError:
            raise InvalidInput("git is not installed (needed for `memvault sync`)") from None
        except subprocess.TimeoutExpired:
            raise VaultError(f"git {args[0]} took longer than {GIT_TIMEOUT} s; "
                             "nothing more was done") from None
        if check and proc.returncode != 0:
            err = proc.stderr if text else proc.stderr.decode("utf-8", "replace")
            out = proc.stdout if text else ""
            raise VaultError(f"git {args[0]} failed: {git_error(err or out)}")
        return proc

    def out(self, *args: str) -> str:
        return str(self.run(*args).stdout).strip()

    def _identity_env(self) -> dict[str, str]:
        """A fallback author for commits in a clone without user.name/user.email."""
        if self._ident is None:
            self._ident = {}
            if "GIT_AUTHOR_EMAIL" in os.environ:
                return self._ident
            try:
                proc = subprocess.run(["git", "config", "--get", "user.email"], cwd=self.root,
                                      capture_output=True, text=True, timeout=60)
            except (OSError, subprocess.TimeoutExpired):
                return self._ident
            if proc.returncode != 0:
                self._ident = {"GIT_AUTHOR_NAME": "memvault", "GIT_COMMITTER_NAME": "memvault",
                               "GIT_AUTHOR_EMAIL": "memvault@localhost",
                               "GIT_COMMITTER_EMAIL": "memvault@localhost"}
        return self._ident

    # -- where things are ----------------------------------------------------------------

    @cached_property
    def git_dir(self) -> Path | None:
        return find_git_dir(self.root)

    def is_clone(self) -> bool:
        return self.git_dir is not None and \
            self.run("rev-parse", "--show-toplevel", check=False).returncode == 0

    @cached_property
    def toplevel(self) -> Path:
        return Path(self.out("rev-parse", "--show-toplevel"))

    @cached_property
    def prefix(self) -> str:
        """The vault folder's path inside the work tree ("" at the top), with a slash."""
        rel = Path(os.path.realpath(self.root)).relative_to(os.path.realpath(self.toplevel))
        return "" if str(rel) == "." else rel.as_posix() + "/"

    def repo_path(self, vault_path: str) -> str:
        return self.prefix + vault_path

    # -- state ---------------------------------------------------------------------------

    def operation(self) -> str | None:
        """The git operation left open in this clone ("rebase", "merge", ...), or None."""
        return operation_in_progress(self.git_dir)

    def unmerged(self) -> list[str]:
        """Paths (from the top of the work tree) git marks as conflicted."""
        out = self.run("diff", "--name-only", "--diff-filter=U", "-z").stdout
        return sorted({p for p in out.split("\0") if p})

    def stage(self, number: int, repo_path: str) -> bytes | None:
        """A conflicted path's content at stage 1 (base), 2 (ours) or 3 (theirs)."""
        proc = self.run("show", f":{number}:{repo_path}", check=False, text=False,
                        cwd=self.toplevel)
        return proc.stdout if proc.returncode == 0 else None

    def show(self, ref: str, repo_path: str) -> bytes | None:
        proc = self.run("show", f"{ref}:{repo_path}", check=False, text=False,
                        cwd=self.toplevel)
        return proc.stdout if proc.returncode == 0 else None

    def rev(self, ref: str) -> str | None:
        proc = self.run("rev-parse", "--verify", "-q", ref, check=False)
        return proc.stdout.strip() if proc.returncode == 0 else None

    def config_get(self, key: str) -> str | None:
        proc = self.run("config", "--get", key, check=False)
        return proc.stdout.strip() if proc.returncode == 0 else None

    def stashes(self) -> list[str]:
        return [ln for ln in self.run("stash", "list").stdout.splitlines() if ln.strip()]
