"""git sync for a vault that is a git clone: `memvault sync` and `memvault sync --setup`.

`sync`, in order:

1. Finishes what an earlier sync, `git pull` or Obsidian Git left open: a rebase or merge
   stopped on memory files is completed by memvault (fact by fact, from git's conflict
   stages, whatever the driver did); one stopped on the user's own notes, or an
   autostash that could not be re-applied, is reported with steps that work (exit 1).
2. Makes sure this clone merges memory files safely: the versioned `.gitattributes`
   union lines, this clone's driver lines, and a driver that actually runs (repaired
   with the current interpreter when its program is gone or another version).
3. Commits memvault's own pending changes (the home folder, `.memvault/`, and the two
   git files), with a message naming the machine.
4. Fetches, rebases onto the remote (the user's other uncommitted notes are stashed and
   restored by git's `--autostash`), resolving memory files itself when git stops.
5. Pushes (never forced), and reports what was committed, what came in by fact id, what
   was pushed and what is still waiting. A fact edited differently on two machines is
   left between conflict markers in a local commit and nothing is pushed until
   `memvault resolve` (or a hand edit) settles it. A forget that came in is no loss:
   its records leave this machine's safety net (`SafetyNet.scrub_forgotten`), the
   parse cache keeps no entry of the bytes before the pull (`parse_cache_forget.drop_stale`),
   and a permanent one deletes the search index (`services/forgets_applied.py`).

It never rewrites history, force-pushes, or commits files outside memvault's paths.
"""

from __future__ import annotations

import os
import socket
import tempfile
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from memvault.backends.fs_io import temp_for
from memvault.core.bullets import parse_bullets
from memvault.core.kinds import file_names
from memvault.errors import InvalidInput, VaultError
from memvault.services import leftover_temps
from memvault.services.git_repo import GitRepo, git_error, last_line
from memvault.services.git_setup import (
    DRIVER_NAME,
    SetupReport,
    add_ignore_lines,
    attributes_status,
    check_driver,
    install_driver,
    setup_clone,
)
from memvault.services.merge_driver import TOMBSTONE_ENV, merge_files
from memvault.services.safety_net import SafetyNet
from memvault.services.sync_report import (
    SyncReport,
    autostash_steps,
    open_operation_steps,
    rewritten_upstream_steps,
)
from memvault.state_paths import JOURNALS, STATE_DIR, TOMBSTONES

if TYPE_CHECKING:
    from memvault.services.vault import Vault

PUSH_ATTEMPTS = 3
MAX_REBASE_STEPS = 200


class SyncStopped(Exception):
    """Sync cannot go on safely; the report says why and what to do."""


class GitSync:
    def __init__(self, vault: Vault) -> None:
        self.vault = vault
        self.root = Path(vault.root)
        self.repo = GitRepo(self.root)

    def _require_clone(self) -> None:
        caps = self.vault.backend.capabilities
        if caps.remote_history:
            raise InvalidInput("`memvault sync` works on a local git clone; this vault's "
                               f"store ({self.vault.backend.describe()}) commits every "
                               "change to its repository already")
        if caps.local_root is None:
            raise InvalidInput("`memvault sync` works on a local git clone; this vault is "
                               f"not a folder on this machine ({self.vault.backend.describe()})")
        if not self.repo.is_clone():
            raise InvalidInput("the vault is not a git clone (git init or git clone it first)",
                               path=str(self.root))

    # -- setup ---------------------------------------------------------------------------

    def setup(self) -> SetupReport:
        self._require_clone()
        return setup_clone(self.repo, self.vault.config.home)

    def driver_configured(self) -> bool:
        return self.repo.config_get(f"merge.{DRIVER_NAME}.driver") is not None

    # -- sync ----------------------------------------------------------------------------

    def sync(self, message: str | None = None, *, force_with_lease: bool = False
             ) -> SyncReport:
        """One sync (see the module doc). `force_with_lease`: push the history that
        `forget --rewrite-history` rewrote, replacing the remote's (nothing else)."""
        from memvault.services.history import GitHistory

        self._require_clone()
        report = SyncReport()
        history = GitHistory(self.vault)
        try:
            self._finish_open_operation(report)
            self._ensure_setup(report)
            self._tidy(report)
            before = self._facts()
            report.committed = self._commit(message)
            report.conflicts = _conflicts(self.vault)
            if report.conflicts:
                report.waiting = self._ahead_of_known_upstream()
                return report
            if history.pending() is not None or force_with_lease:
                history.push_rewritten(self, report, confirmed=force_with_lease)
                return report
            self._exchange(report)
            _diff_facts(before, self._facts(), report)
            self._scrub_net(report)
        except SyncStopped:
            pass
        return report

    def _scrub_net(self, report: SyncReport) -> None:
        """A forget that came in is no loss: its records leave this machine's safety net,
        and a permanent one deletes the search index, as a local permanent forget does
        (`services/forgets_applied.py`; a net that cannot be written is a warning, never
        a failed sync)."""
        from memvault.services import forgets_applied, parse_cache_forget

        try:
            SafetyNet(self.vault.backend).scrub_forgotten()
            parse_cache_forget.drop_stale(self.vault.backend)  # entries of bytes before the pull
            forgets_applied.apply(self.vault)
        except (OSError, VaultError) as exc:
            report.warnings.append(f"the local safety net could not be updated: {exc}")

    # -- 1. what an earlier operation left -------------------------------------------------

    def _finish_open_operation(self, report: SyncReport) -> None:
        operation = self.repo.operation()
        unmerged = self.repo.unmerged()
        if operation is None and not unmerged:
            return
        mine, others = self._split(unmerged)
        if operation is None:
            report.problems.append(autostash_steps(unmerged, self._autostash_ref()))
            raise SyncStopped
        if others or operation not in ("rebase", "merge"):
            report.problems.append(open_operation_steps(operation, others))
            raise SyncStopped
        report.warnings.append(f"finished the git {operation} that was left open")
        self._resolve_memory_files(mine, local_is_theirs=operation == "rebase")
        if operation == "rebase":
            self._drive_rebase(self._continue_rebase(), report)
        else:
            self._stage_own_changes()
            self.repo.run("commit", "-q", "--no-edit")

    def _split(self, repo_paths: list[str]) -> tuple[list[str], list[str]]:
        mine = [p for p in repo_paths if self._is_memvault_file(p)]
        return mine, [p for p in repo_paths if p not in mine]

    def _is_memvault_file(self, repo_path: str) -> bool:
        prefix = self.repo.prefix
        if not repo_path.startswith(prefix):
            return False
        rel = repo_path[len(prefix):]
        if rel in JOURNALS:
            return True
        home = self.vault.config.home.strip("/") + "/"
        return rel.startswith(home) and PurePosixPath(rel).name in file_names()

    def _autostash_ref(self) -> str | None:
        for line in self.repo.stashes():
            ref, _, rest = line.partition(":")
            if "autostash" in rest:
                return ref
        return None

    # -- 2. a clone that merges safely -----------------------------------------------------

    def _ensure_setup(self, report: SyncReport) -> None:
        union, old = attributes_status(self.root)
        configured = self.repo.config_get(f"merge.{DRIVER_NAME}.driver")
        if not union or old or configured is None:
            setup = setup_clone(self.repo, self.vault.config.home)
            if setup.gitattributes or setup.info_attributes or setup.git_config:
                report.warnings.append("set this clone up to merge memory files safely "
                                       "(`memvault sync --setup`)")
            if setup.repaired:
                report.warnings.append(f"repaired the merge driver: {setup.repaired}")
            return
        add_ignore_lines(self.repo, self.vault.config.home)  # a clone set up before a line
        problem = check_driver(self.repo, configured)
        if problem:
            install_driver(self.repo)
            report.warnings.append(f"repaired the merge driver: {problem}")

    def _tidy(self, report: SyncReport) -> bool:
        """Settle what merges left in the memory files and journals (every scope)."""
        from memvault.services.tidy import tidy_journal, tidy_vault

        if self.repo.operation() is not None:
            return False
        notes = tidy_vault(self.vault, every_scope=True).notes + tidy_journal(self.vault)
        report.reconciled += notes
        return bool(notes)

    # -- 3. commit -----------------------------------------------------------------------

    def _own_paths(self) -> list[str]:
        return [p for p in (self.vault.config.home, STATE_DIR, ".gitattributes",
                            ".gitignore") if (self.root / p).exists()]

    def _stage_own_changes(self) -> list[str]:
        paths = self._own_paths()
        if not paths:
            return []
        # a temp file a concurrent write is staging right now: never the shared history's
        self.repo.run("add", "-A", "--", *paths, leftover_temps.exclude_pathspec(
            self.vault.config.home))
        return self.repo.run("diff", "--cached", "--name-only", "--", *paths).stdout.split()

    def _drop_leftover_temps(self) -> None:
        """A killed write's temp file (it may hold an older copy of a memory file) is
        removed before staging; one an older memvault committed stops being tracked."""
        home = self.vault.config.home
        leftover_temps.remove(self.vault)
        pattern = ":(glob)" + leftover_temps.ignore_pattern(home)
        listed = self.repo.run("ls-files", "-z", "--", pattern, check=False).stdout
        tracked = [p for p in listed.split("\0") if temp_for(p.rpartition("/")[2])]
        if tracked:  # gone from disk already: the commit records them as removed
            self.repo.run("rm", "--cached", "-q", "--ignore-unmatch", "--", *tracked)

    def _commit(self, message: str | None) -> list[str]:
        from memvault.services import parse_cache_forget as parse_cache
        from memvault.services.git_doctor import tracked_local_state

        # parse-cache files someone force-added: never believed; stop tracking them here
        tracked = [p for p in tracked_local_state(self.repo) if parse_cache.is_cache_file(p)]
        if tracked:
            self.repo.run("rm", "--cached", "-q", "--", *tracked)
            parse_cache.remove_files(self.vault.backend, tracked)  # the commit says removed
        self._drop_leftover_temps()
        staged = self._stage_own_changes()
        if not staged:
            return []
        msg = message or (f"memvault sync from {socket.gethostname()}: "
                          f"{len(staged)} file(s) changed")
        self.repo.run("commit", "-q", "-m", msg, "--", *self._own_paths())
        return staged

    # -- 4. fetch, rebase, push ------------------------------------------------------------

    def _remote_and_branch(self) -> tuple[str, str] | None:
        up = self.repo.run("rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{upstream}",
                           check=False)
        if up.returncode == 0 and "/" in up.stdout:
            remote, _, branch = up.stdout.strip().partition("/")
            return remote, branch
        remotes = self.repo.run("remote").stdout.split()
        if not remotes:
            return None
        remote = "origin" if "origin" in remotes else remotes[0]
        return remote, self.repo.out("rev-parse", "--abbrev-ref", "HEAD")

    def _ahead_of_known_upstream(self) -> int:
        where = self._remote_and_branch()
        if where is None or self.repo.rev(f"{where[0]}/{where[1]}") is None:
            return int(self.repo.out("rev-list", "--count", "HEAD")) if where else 0
        return int(self.repo.out("rev-list", "--count", f"{where[0]}/{where[1]}..HEAD"))

    def _exchange(self, report: SyncReport) -> None:
        where = self._remote_and_branch()
        if where is None:
            return  # no remote: committed locally only (the report says so)
        remote, branch = where
        upstream = f"{remote}/{branch}"
        report.remote = upstream
        for _attempt in range(PUSH_ATTEMPTS):
            known = self.repo.rev(upstream)
            fetch = self.repo.run("fetch", "-q", remote, check=False)
            if fetch.returncode != 0:
                report.offline = f"cannot reach {remote} ({git_error(fetch.stderr)})"
                report.waiting = self._ahead_of_known_upstream()
                return
            if known and self.repo.rev(upstream) and not self._descends(upstream, known):
                report.problems.append(rewritten_upstream_steps(upstream, known))
                report.waiting = self._ahead_of_known_upstream()
                return
            if self.repo.rev(upstream) is None:
                ahead = int(self.repo.out("rev-list", "--count", "HEAD"))
                if self._push(remote, branch, report, ahead, set_upstream=True):
                    return
                continue
            if self.repo.run("rev-parse", "--abbrev-ref", "@{upstream}",
                             check=False).returncode != 0:
                self.repo.run("branch", "-q", f"--set-upstream-to={upstream}")
            stash_steps = self._rebase(upstream, report)
            if self._tidy(report):
                self._commit("memvault sync: settle what the merge left in memory files")
            report.conflicts = _conflicts(self.vault)
            if report.conflicts or report.problems:
                report.waiting = int(self.repo.out("rev-list", "--count", f"{upstream}..HEAD"))
                return
            ahead = int(self.repo.out("rev-list", "--count", f"{upstream}..HEAD"))
            # Uncommitted notes that met incoming changes stay in the work tree (and the
            # stash); memvault's own commits are whole and can go out meanwhile.
            if ahead == 0 or self._push(remote, branch, report, ahead):
                if stash_steps:
                    report.problems.append(stash_steps)
                return
        report.waiting = int(self.repo.out("rev-list", "--count", f"{upstream}..HEAD"))
        report.problems.append(f"not pushed: {upstream} kept moving while memvault tried "
                               "to push; run `memvault sync` again")

    def _descends(self, ref: str, ancestor: str) -> bool:
        return self.repo.run("merge-base", "--is-ancestor", ancestor, ref,
                             check=False).returncode == 0

    def _push(self, remote: str, branch: str, report: SyncReport, ahead: int, *,
              set_upstream: bool = False) -> bool:
        args = ["push", "-q", *(["-u"] if set_upstream else []), remote, f"HEAD:{branch}"]
        push = self.repo.run(*args, check=False)
        if push.returncode == 0:
            report.pushed = True
            report.pushed_commits += ahead
            return True
        if "rejected" in push.stderr or "fetch first" in push.stderr:
            return False  # someone pushed meanwhile: fetch and rebase again
        report.offline = f"git push to {remote} failed ({git_error(push.stderr)})"
        report.waiting = ahead
        raise SyncStopped

    def _rebase(self, upstream: str, report: SyncReport) -> str | None:
        """Rebase onto upstream; returns steps when the autostash met incoming changes."""
        with tempfile.NamedTemporaryFile(prefix="memvault-tombstones-", suffix=".jsonl",
                                         delete=False) as tmp:
            for ref in ("HEAD", upstream):
                data = self.repo.show(ref, self.repo.repo_path(TOMBSTONES))
                if data:
                    tmp.write(data.rstrip(b"\n") + b"\n")
        self._tombstones_file = tmp.name
        try:
            first = self.repo.run("rebase", "--autostash", upstream, check=False,
                                  env={TOMBSTONE_ENV: tmp.name})
            self._drive_rebase(first, report)
        finally:
            self._tombstones_file = None
            os.unlink(tmp.name)
        left = self.repo.unmerged()
        if left:  # the rebase is done, but the autostash did not apply cleanly
            return autostash_steps(left, self._autostash_ref())
        return None

    _tombstones_file: str | None = None

    def _continue_rebase(self):  # type: ignore[no-untyped-def]
        env = {TOMBSTONE_ENV: self._tombstones_file} if self._tombstones_file else {}
        return self.repo.run("rebase", "--continue", check=False, env=env)

    def _drive_rebase(self, proc, report: SyncReport) -> None:  # type: ignore[no-untyped-def]
        """Keep the rebase going, resolving memory files, until it ends or needs the user."""
        for _ in range(MAX_REBASE_STEPS):
            if proc.returncode == 0 or self.repo.operation() != "rebase":
                return
            mine, others = self._split(self.repo.unmerged())
            if others:
                report.problems.append(open_operation_steps("rebase", others))
                raise SyncStopped
            if not mine:
                self._stage_own_changes()  # a hand edit of a memory file since git stopped
                proc = self._continue_rebase()
                if proc.returncode != 0 and not self.repo.unmerged():
                    report.problems.append(open_operation_steps(
                        "rebase", [], detail=last_line(proc.stderr or proc.stdout)))
                    raise SyncStopped
                continue
            self._resolve_memory_files(mine, local_is_theirs=True)
            proc = self._continue_rebase()
        report.problems.append(open_operation_steps("rebase", [], detail="too many steps"))
        raise SyncStopped

    def _resolve_memory_files(self, repo_paths: list[str], *, local_is_theirs: bool) -> None:
        """Merge each conflicted memory file from git's stages, fact by fact, and stage it.

        Whatever the driver did (or failed to do: a missing program leaves the upstream
        version without markers) is ignored: the stages hold all three versions.
        """
        extra = b""
        if self._tombstones_file:
            extra = Path(self._tombstones_file).read_bytes()
        top = self.repo.toplevel
        for repo_path in repo_paths:
            base = self.repo.stage(1, repo_path) or b""
            ours, theirs = self.repo.stage(2, repo_path), self.repo.stage(3, repo_path)
            if ours is None or theirs is None:  # deleted on one side: keep the other
                merged_data = (ours if theirs is None else theirs) or b""
            else:
                result = merge_files(base, ours, theirs, repo_path, cwd=top,
                                     local_is_theirs=local_is_theirs, extra_tombstones=extra)
                merged_data = result.data
            target = top / repo_path
            tmp = target.with_name(f".{target.name}.memvault-merge.tmp")
            tmp.write_bytes(merged_data)
            os.replace(tmp, target)
            self.repo.run("add", "--", repo_path, cwd=top)

    # -- reporting -----------------------------------------------------------------------

    def _facts(self) -> dict[str, tuple[str, str | None]]:
        path = self.root / self.vault.layout.memory
        try:
            doc = parse_bullets(path.read_bytes())
        except OSError:
            return {}
        return {it.id: (it.text, it.category_raw) for it in doc.items}


def _conflicts(vault: Vault) -> list[str]:
    from memvault.services.git_doctor import conflict_findings

    return [str(f) for f in conflict_findings(vault)]


def _diff_facts(before: dict[str, tuple[str, str | None]],
                after: dict[str, tuple[str, str | None]], report: SyncReport) -> None:
    for fid, (text, cat) in after.items():
        if fid not in before:
            report.added.append({"id": fid, "text": text})
        elif before[fid] != (text, cat):
            report.changed.append({"id": fid, "text": text})
    report.forgotten = [fid for fid in before if fid not in after]

