"""Forgotten words in git history: count the commits that still hold them, and rewrite
this clone's history without them (`memvault forget --permanent --rewrite-history`).

`forget --permanent` removes a fact's words from every file of the vault, but in a git
clone the earlier commits still hold them (and were pushed). `commits_holding` counts
those commits (every ref and reflog of this clone, memvault's own paths only).

`rewrite` replaces the words in every commit of every local ref with `[forgotten]` using
git-filter-repo (an extra: `memvault[history]`), in partial mode so local branches,
the `origin` remote and unpushed commits stay as they are; then expires the reflogs and
prunes the old objects, so nothing in this clone holds them any more. The remote still
has the old history: the next `memvault sync --force-with-lease` replaces it, and only
if the remote still has the history this clone rewrote (a lease on its old tip,
recorded in `.git/memvault-rewrite.json`); until then `memvault sync` refuses to pull
the words back in.

What no rewrite here can reach: other clones (each must re-clone, or reset to the new
history), forks, and copies GitHub keeps (cached views of old commits, pull-request
refs): GitHub support can purge those.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memvault.errors import InvalidInput, VaultError
from memvault.services.git_repo import GitRepo, git_error
from memvault.state_paths import STATE_DIR

if TYPE_CHECKING:
    from memvault.services.sync import GitSync
    from memvault.services.sync_report import SyncReport
    from memvault.services.vault import Vault

REPLACEMENT = "[forgotten]"
MARKER = "memvault-rewrite.json"
_BATCH = 200


def forms(texts: list[str]) -> list[str]:
    """Each text as it is written in a note and as the journal writes it (JSON-escaped)."""
    out: list[str] = []
    for text in texts:
        for form in (text, json.dumps(text, ensure_ascii=False)[1:-1]):
            if form and form not in out:
                out.append(form)
    return out


def texts_of(vault: Vault, fact_ids: list[str]) -> list[str]:
    """Every text these facts had: now, and in the journal (before a forget erases it)."""
    wanted = set(fact_ids)
    texts = [f.text for f in vault.memory.all() if f.id in wanted]
    for ev in vault.events.events():
        if ev.get("record") in wanted:
            texts += [ev[k] for k in ("text", "previous_text") if isinstance(ev.get(k), str)]
    return list(dict.fromkeys(t for t in texts if t))


@dataclass(slots=True)
class RewriteReport:
    commits_before: int
    commits_after: int
    remote: str | None
    lease: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"commits_before": self.commits_before, "commits_after": self.commits_after,
                "remote": self.remote, "lease": self.lease}


class GitHistory:
    def __init__(self, vault: Vault) -> None:
        self.vault = vault
        self.repo = GitRepo(Path(vault.root))

    def available(self) -> bool:
        return self.vault.backend.capabilities.git_dir is not None and \
            self.repo.is_clone()

    def _paths(self) -> list[str]:
        return [self.repo.repo_path(p) for p in (self.vault.config.home, STATE_DIR)]

    def commits_holding(self, texts: list[str]) -> int:
        """Commits (reachable from any ref or reflog) whose memvault files hold a text."""
        patterns = forms(texts)
        if not patterns or not self.available():
            return 0
        revs = self.repo.run("rev-list", "--all", "--reflog").stdout.split()
        args = [a for p in patterns for a in ("-e", p)]
        found: set[str] = set()
        top = self.repo.toplevel
        for start in range(0, len(revs), _BATCH):
            batch = revs[start:start + _BATCH]
            proc = self.repo.run("grep", "-F", "-l", "-z", *args, *batch, "--",
                                 *self._paths(), check=False, cwd=top)
            found.update(hit.split(":", 1)[0] for hit in proc.stdout.split("\0") if hit)
        return len(found)

    def rewrite(self, texts: list[str]) -> RewriteReport:
        """Rewrite every local ref without `texts` (see the module doc)."""
        from memvault.extras import require

        if not self.available():
            raise InvalidInput("--rewrite-history works on a vault that is a git clone")
        require("history")
        if self.repo.operation() is not None:
            raise VaultError(f"a git {self.repo.operation()} is in progress; finish it first")
        before = self.commits_holding(texts)
        where = self._upstream()
        lease = self.repo.rev(f"{where[0]}/{where[1]}") if where else None
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False,
                                         encoding="utf-8") as tmp:
            for form in forms(texts):
                tmp.write(f"literal:{form}==>{REPLACEMENT}\n")
        try:
            proc = subprocess.run(
                [sys.executable, "-m", "git_filter_repo", "--replace-text", tmp.name,
                 "--force", "--partial", "--quiet"], cwd=self.repo.toplevel,
                capture_output=True, text=True, timeout=3600,
                env=dict(os.environ, LC_ALL="C"))
        finally:
            os.unlink(tmp.name)
        if proc.returncode != 0:
            raise VaultError(f"git-filter-repo failed: {git_error(proc.stderr or proc.stdout)}")
        # The old commits stay reachable from the reflogs until those are expired.
        self.repo.run("reflog", "expire", "--expire=now", "--expire-unreachable=now", "--all")
        self.repo.run("gc", "-q", "--prune=now")
        if where is not None and lease is not None:
            self._record({"remote": where[0], "branch": where[1], "lease": lease})
        return RewriteReport(before, self.commits_holding(texts),
                             f"{where[0]}/{where[1]}" if where else None, lease)

    # -- the force-with-lease push that must follow ------------------------------------

    def _upstream(self) -> tuple[str, str] | None:
        from memvault.services.sync import GitSync

        return GitSync(self.vault)._remote_and_branch()

    def _marker(self) -> Path:
        path = Path(self.repo.out("rev-parse", "--git-path", MARKER))
        return path if path.is_absolute() else self.repo.root / path

    def _record(self, data: dict[str, str]) -> None:
        self._marker().write_text(json.dumps(data) + "\n", "utf-8")

    def pending(self) -> dict[str, str] | None:
        """The push a rewrite is waiting for: {remote, branch, lease}, or None."""
        try:
            data = json.loads(self._marker().read_text("utf-8"))
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def done(self) -> None:
        self._marker().unlink(missing_ok=True)

    def push_rewritten(self, sync: GitSync, report: SyncReport, *, confirmed: bool) -> None:
        """After a rewrite: refuse a normal sync; with `confirmed`, replace the remote's
        history with a force-with-lease push on the tip the rewrite started from."""
        pending = self.pending()
        if pending is None:
            report.problems.append("nothing to push with --force-with-lease: this clone's "
                                   "history was not rewritten by `forget --rewrite-history`")
            return
        remote, branch, lease = pending["remote"], pending["branch"], pending["lease"]
        report.remote = f"{remote}/{branch}"
        ahead = int(self.repo.out("rev-list", "--count", "HEAD"))
        if not confirmed:
            report.waiting = ahead
            report.problems.append(
                f"this clone's history was rewritten by `forget --rewrite-history`; a normal "
                f"sync would pull the forgotten words back from {remote}. Run `memvault sync "
                f"--force-with-lease` to replace {remote}/{branch}'s history with this one "
                f"(other clones must then take the new history; see docs/multi-machine.md)")
            return
        push = self.repo.run("push", "-q", f"--force-with-lease=refs/heads/{branch}:{lease}",
                             remote, f"HEAD:refs/heads/{branch}", check=False)
        if push.returncode != 0:
            report.waiting = ahead
            report.problems.append(
                f"not pushed: {remote}/{branch} is no longer at {lease[:12]}, where the "
                f"rewrite started ({git_error(push.stderr)}); someone pushed meanwhile and "
                f"nothing of theirs was overwritten. Their commits come from the old "
                f"history: see docs/multi-machine.md for taking them in")
            return
        self.repo.run("fetch", "-q", remote, check=False)
        self.done()
        report.pushed = True
        report.pushed_commits = ahead
        report.warnings.append(f"replaced {remote}/{branch}'s history with the rewritten one")
