"""git sync for a vault that is a git clone: `memvault sync` and `memvault sync --setup`.

`sync` commits memvault's own pending changes (the home folder and `.memvault/`, with a
clear message), pulls with rebase (the fact-by-fact merge driver does the merging),
pushes, and reports which facts came in from elsewhere by comparing Memory.md by id
before and after. A fact edited differently on two machines is left between conflict
markers in a local commit; nothing is pushed until the user resolves it.

`setup` writes the `.gitattributes` lines that route memory files to the driver, the
per-clone git config that defines the driver, and `.gitignore` lines for local caches.

It calls the `git` command line (the reference behaviour) and never rewrites history,
force-pushes, or touches files outside the vault's memvault paths (other notes are
stashed and restored by git's own `--autostash`).
"""

from __future__ import annotations

import os
import shlex
import socket
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memvault.core.bullets import parse_bullets
from memvault.core.merge import CONFLICT_OPEN
from memvault.errors import Conflict, InvalidInput, RemoteError, VaultError
from memvault.state_paths import JOURNALS, STATE_DIR, TOMBSTONES, cache_ignore_lines

if TYPE_CHECKING:
    from memvault.services.doctor import Finding
    from memvault.services.vault import Vault

DRIVER_NAME = "memvault"
ATTRIBUTES_HEADER = "# memvault: merge memory files fact by fact (memvault sync --setup)"
IGNORE_HEADER = "# memvault: local caches, never committed"
PUSH_ATTEMPTS = 3


def driver_command() -> str:
    return f"{shlex.quote(sys.executable)} -m memvault merge-driver %O %A %B %P"


def attribute_lines(home: str) -> list[str]:
    lines = [f"{home}/**/{name} merge={DRIVER_NAME}"
             for name in ("Memory.md", "Lessons.md", "Inbox.md")]
    lines += [f"{path} merge={DRIVER_NAME}" for path in JOURNALS]
    return lines


@dataclass(slots=True)
class SetupReport:
    gitattributes: list[str] = field(default_factory=list)
    gitignore: list[str] = field(default_factory=list)
    git_config: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"gitattributes_added": self.gitattributes, "gitignore_added": self.gitignore,
                "driver_configured": self.git_config}

    def lines(self) -> list[str]:
        out = [f".gitattributes: added {ln}" for ln in self.gitattributes]
        out += [f".gitignore: added {ln}" for ln in self.gitignore]
        out.append("git config: merge driver 'memvault' "
                   + ("installed" if self.git_config else "already installed"))
        return out


@dataclass(slots=True)
class SyncReport:
    committed: list[str] = field(default_factory=list)
    added: list[dict[str, str]] = field(default_factory=list)
    changed: list[dict[str, str]] = field(default_factory=list)
    forgotten: list[str] = field(default_factory=list)
    pushed: bool = False
    remote: str | None = None
    conflicts: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"committed": self.committed, "incoming": {
            "added": self.added, "changed": self.changed, "forgotten": self.forgotten},
            "pushed": self.pushed, "remote": self.remote, "conflicts": self.conflicts,
            "warnings": self.warnings}

    def lines(self) -> list[str]:
        out = []
        if self.committed:
            out.append(f"committed {len(self.committed)} file(s): {', '.join(self.committed)}")
        for f in self.added:
            out.append(f'+ fact {f["id"]} "{f["text"]}"')
        for f in self.changed:
            out.append(f'~ fact {f["id"]} "{f["text"]}"')
        for fid in self.forgotten:
            out.append(f"- fact {fid}")
        for c in self.conflicts:
            out.append(f"conflict: {c}")
        if self.conflicts:
            out.append("not pushed: resolve the conflict (keep one line), then run "
                       "`memvault sync` again")
        elif self.pushed:
            out.append(f"pushed to {self.remote}")
        elif self.remote is None:
            out.append("no remote configured: committed locally only")
        else:
            out.append(f"up to date with {self.remote}")
        return out


class GitSync:
    def __init__(self, vault: Vault) -> None:
        self.vault = vault
        self.root = Path(vault.root)
        self._ident: dict[str, str] | None = None

    # -- git plumbing --------------------------------------------------------------------

    def _git(self, *args: str, check: bool = True, env: dict[str, str] | None = None,
             ) -> subprocess.CompletedProcess[str]:
        full_env = dict(os.environ, GIT_TERMINAL_PROMPT="0", GIT_EDITOR="true",
                        LC_ALL="C")
        full_env.update(self._identity_env())
        full_env.update(env or {})
        try:
            proc = subprocess.run(["git", *args], cwd=self.root, capture_output=True,
                                  text=True, env=full_env)
        except FileNotFoundError:
            raise InvalidInput("git is not installed (needed for `memvault sync`)") from None
        if check and proc.returncode != 0:
            detail = (proc.stderr or proc.stdout).strip().splitlines()
            raise VaultError(f"git {args[0]} failed: {detail[-1] if detail else proc.returncode}")
        return proc

    def _identity_env(self) -> dict[str, str]:
        """A fallback author for commits in a clone without user.name/user.email."""
        if self._ident is None:
            proc = subprocess.run(["git", "config", "--get", "user.email"], cwd=self.root,
                                  capture_output=True, text=True)
            self._ident = {}
            if proc.returncode != 0 and "GIT_AUTHOR_EMAIL" not in os.environ:
                self._ident = {"GIT_AUTHOR_NAME": "memvault", "GIT_COMMITTER_NAME": "memvault",
                               "GIT_AUTHOR_EMAIL": "memvault@localhost",
                               "GIT_COMMITTER_EMAIL": "memvault@localhost"}
        return self._ident

    def _require_clone(self) -> Path:
        if self.vault.backend.name != "fs":
            raise InvalidInput("`memvault sync` works on a local git clone; the github "
                               "backend commits every change to the repository already")
        proc = self._git("rev-parse", "--show-toplevel", check=False)
        if proc.returncode != 0:
            raise InvalidInput("the vault is not a git clone (git init or git clone it first)",
                               path=str(self.root))
        return Path(proc.stdout.strip())

    def driver_configured(self) -> bool:
        return self._git("config", "--get", f"merge.{DRIVER_NAME}.driver",
                         check=False).returncode == 0

    # -- setup ---------------------------------------------------------------------------

    def setup(self) -> SetupReport:
        self._require_clone()
        report = SetupReport()
        report.gitattributes = _add_lines(self.root / ".gitattributes", ATTRIBUTES_HEADER,
                                          attribute_lines(self.vault.config.home))
        report.gitignore = _add_lines(self.root / ".gitignore", IGNORE_HEADER,
                                      cache_ignore_lines())
        current = self._git("config", "--get", f"merge.{DRIVER_NAME}.driver", check=False)
        if current.stdout.strip() != driver_command():
            self._git("config", f"merge.{DRIVER_NAME}.name", "memvault fact-by-fact merge")
            self._git("config", f"merge.{DRIVER_NAME}.driver", driver_command())
            report.git_config = True
        return report

    # -- sync ----------------------------------------------------------------------------

    def sync(self, message: str | None = None) -> SyncReport:
        self._require_clone()
        report = SyncReport()
        git_dir = Path(self._git("rev-parse", "--absolute-git-dir").stdout.strip())
        if any((git_dir / p).exists() for p in ("rebase-merge", "rebase-apply", "MERGE_HEAD")):
            raise Conflict("a git rebase or merge is in progress in this clone; finish it "
                           "(git status) before `memvault sync`")
        unresolved = conflict_findings(self.vault)
        if not self.driver_configured():
            self.setup()
            report.warnings.append("installed the memvault merge driver in this clone")
        before = self._facts()
        report.committed = self._commit(message)
        if unresolved:
            report.conflicts = [str(f) for f in unresolved]
            return report
        upstream = self._upstream()
        if upstream is None:
            return report
        report.remote = upstream
        for _attempt in range(PUSH_ATTEMPTS):
            self._pull(upstream, report)
            if report.conflicts:
                break
            ahead = self._git("rev-list", "--count", f"{upstream}..HEAD").stdout.strip()
            if ahead == "0":
                break
            remote, _, branch = upstream.partition("/")
            push = self._git("push", remote, f"HEAD:{branch}", check=False)
            if push.returncode == 0:
                report.pushed = True
                break
            if "rejected" not in push.stderr and "fetch first" not in push.stderr:
                raise RemoteError(f"git push failed: {_last_line(push.stderr)}")
        after = self._facts()
        _diff_facts(before, after, report)
        return report

    def _facts(self) -> dict[str, tuple[str, str | None]]:
        path = self.root / self.vault.layout.memory
        try:
            doc = parse_bullets(path.read_bytes())
        except OSError:
            return {}
        return {it.id: (it.text, it.category_raw) for it in doc.items}

    def _commit(self, message: str | None) -> list[str]:
        paths = [p for p in (self.vault.config.home, STATE_DIR, ".gitattributes",
                             ".gitignore") if (self.root / p).exists()]
        self._git("add", "-A", "--", *paths)
        staged = self._git("diff", "--cached", "--name-only", "--", *paths).stdout.split()
        if not staged:
            return []
        msg = message or (f"memvault sync from {socket.gethostname()}: "
                          f"{len(staged)} file(s) changed")
        self._git("commit", "-q", "-m", msg, "--", *paths)
        return staged

    def _upstream(self) -> str | None:
        up = self._git("rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{upstream}",
                       check=False)
        if up.returncode == 0:
            return up.stdout.strip()
        remotes = self._git("remote").stdout.split()
        if not remotes:
            return None
        remote = "origin" if "origin" in remotes else remotes[0]
        branch = self._git("rev-parse", "--abbrev-ref", "HEAD").stdout.strip()
        fetch = self._git("fetch", "-q", remote, check=False)
        if fetch.returncode != 0:
            raise RemoteError(f"git fetch {remote} failed: {_last_line(fetch.stderr)}")
        if self._git("rev-parse", "--verify", "-q", f"{remote}/{branch}",
                     check=False).returncode != 0:
            push = self._git("push", "-q", "-u", remote, f"HEAD:{branch}", check=False)
            if push.returncode != 0:
                raise RemoteError(f"git push failed: {_last_line(push.stderr)}")
        else:
            self._git("branch", f"--set-upstream-to={remote}/{branch}")
        return f"{remote}/{branch}"

    def _pull(self, upstream: str, report: SyncReport) -> None:
        remote, _, branch = upstream.partition("/")
        fetch = self._git("fetch", "-q", remote, check=False)
        if fetch.returncode != 0:
            raise RemoteError(f"git fetch {remote} failed: {_last_line(fetch.stderr)}")
        with tempfile.NamedTemporaryFile(prefix="memvault-tombstones-", suffix=".jsonl",
                                         delete=False) as tmp:
            for ref in ("HEAD", upstream):
                shown = subprocess.run(["git", "show", f"{ref}:{TOMBSTONES}"], cwd=self.root,
                                       capture_output=True)
                if shown.returncode == 0:
                    tmp.write(shown.stdout.rstrip(b"\n") + b"\n")
        env = {"MEMVAULT_MERGE_TOMBSTONES": tmp.name}
        try:
            pull = self._git("rebase", "--autostash", upstream, check=False, env=env)
            for _ in range(50):
                if pull.returncode == 0:
                    return
                unmerged = self._git("diff", "--name-only", "--diff-filter=U").stdout.split()
                if not unmerged:
                    raise VaultError(f"git rebase failed: {_last_line(pull.stderr)}")
                ours = [p for p in unmerged if _is_memvault_merged(self.root, p)]
                if len(ours) != len(unmerged):
                    others = ", ".join(p for p in unmerged if p not in ours)
                    raise Conflict(f"git stopped with conflicts in {others}; resolve them, "
                                   "then `git rebase --continue` and `memvault sync`")
                self._git("add", "--", *ours)
                report.conflicts.extend(str(f) for f in conflict_findings(self.vault))
                pull = self._git("rebase", "--continue", check=False, env=env)
            raise VaultError("git rebase did not finish; see `git status`")
        finally:
            os.unlink(tmp.name)


# -- helpers ----------------------------------------------------------------------------


def _last_line(text: str) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1] if lines else "unknown error"


def _is_memvault_merged(root: Path, repo_path: str) -> bool:
    """A file our merge driver handled (a memory file), left with conflict markers."""
    from memvault.services.merge_driver import BULLET_FILES

    if repo_path.rsplit("/", 1)[-1] not in BULLET_FILES:
        return False
    top = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=root,
                         capture_output=True, text=True).stdout.strip()
    try:
        return b"<<<<<<< " in Path(top or root, repo_path).read_bytes()
    except OSError:
        return False


def _add_lines(path: Path, header: str, wanted: list[str]) -> list[str]:
    """Append the missing lines (under a header comment); never touch existing lines."""
    try:
        text = path.read_text("utf-8")
    except FileNotFoundError:
        text = ""
    present = {ln.strip() for ln in text.splitlines()}
    missing = [ln for ln in wanted if ln not in present]
    if not missing:
        return []
    block = ([] if header in present else [header]) + missing
    prefix = "" if not text or text.endswith("\n") else "\n"
    sep = "\n" if text and header not in present else ""
    tmp = path.with_name(f".{path.name}.memvault.tmp")
    tmp.write_text(text + prefix + sep + "\n".join(block) + "\n", "utf-8")
    os.replace(tmp, path)
    return missing


def _diff_facts(before: dict[str, tuple[str, str | None]],
                after: dict[str, tuple[str, str | None]], report: SyncReport) -> None:
    for fid, (text, cat) in after.items():
        if fid not in before:
            report.added.append({"id": fid, "text": text})
        elif before[fid] != (text, cat):
            report.changed.append({"id": fid, "text": text})
    report.forgotten = [fid for fid in before if fid not in after]


def conflict_findings(vault: Vault) -> list[Finding]:
    """Conflict blocks the merge driver left in the memory files, naming the fact."""
    from memvault.services.doctor import Finding

    out = []
    for path in vault.layout.memory_files:
        blob = vault.backend.read(path)
        if blob is None or b"<<<<<<< " not in blob.data:
            continue
        for n, line in enumerate(blob.data.decode("utf-8", "replace").split("\n"), 1):
            if line.startswith(CONFLICT_OPEN):
                out.append(Finding("error", path, line[len(CONFLICT_OPEN):].strip(), n))
            elif line.startswith("<<<<<<< "):
                out.append(Finding("error", path, "text changed on both sides (git-style "
                                   "markers): keep what you want and delete the markers", n))
    return out


def sync_doctor_findings(vault: Vault) -> list[Finding]:
    """For doctor: memvault conflict blocks, and a git clone without the merge driver."""
    from memvault.services.doctor import Finding

    if vault.backend.name != "fs":
        return []
    out = conflict_findings(vault)
    root = Path(vault.root)
    if not any((p / ".git").exists() for p in (root, *root.parents)):
        return out
    git = GitSync(vault)
    attrs = root / ".gitattributes"
    try:
        has_attrs = f"merge={DRIVER_NAME}" in attrs.read_text("utf-8")
    except OSError:
        has_attrs = False
    if not has_attrs or not git.driver_configured():
        missing = "the .gitattributes lines" if not has_attrs else "the git config"
        if not (root / ".git").exists():
            # A vault nested in a larger repository (e.g. examples/vault in memvault's own
            # source tree) is often not synced as a vault: mention it, don't alarm.
            out.append(Finding("info", ".gitattributes", "this vault is inside the git "
                               "repository of a parent folder; if you sync it with git, run "
                               "`memvault sync --setup` (without it git merges Memory.md as "
                               "text)"))
            return out
        out.append(Finding("warning", ".gitattributes", f"this vault is a git clone but "
                           f"{missing} for the memvault merge driver are missing: run "
                           "`memvault sync --setup` (without it git merges Memory.md as text)"))
    return out
