"""What `memvault doctor` checks about git: conflicts, an open operation, the driver.

- conflict blocks left in memory files (memvault's, naming the fact, or git's own);
- a rebase or merge left open, or an autostash that left conflict markers, with the
  same working steps `memvault sync` gives;
- a clone whose versioned `.gitattributes` lacks the union lines (git would merge memory
  files as plain text) or whose configured merge driver does not run (`doctor --fix`
  repairs it with the current interpreter).

Reads only; `fix_driver` is the one repair, run by `doctor --fix`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from memvault.core.merge import CONFLICT_OPEN

if TYPE_CHECKING:
    from memvault.services.doctor import Finding
    from memvault.services.git_repo import GitRepo
    from memvault.services.vault import Vault


def conflict_findings(vault: Vault) -> list[Finding]:
    """Conflict blocks left in the memory files, naming the fact."""
    from memvault.services.doctor import Finding

    out = []
    for path in vault.layout.memory_files:
        blob = vault.backend.read(path)
        if blob is None or b"<<<<<<< " not in blob.data:
            continue
        settled = _settled_blocks(vault, path, blob.data)
        for n, line in enumerate(blob.data.decode("utf-8", "replace").split("\n"), 1):
            if n in settled:
                continue  # the next write settles it (`tidy_findings` says so)
            if line.startswith(CONFLICT_OPEN):
                out.append(Finding("error", path, line[len(CONFLICT_OPEN):].strip(), n))
            elif line.startswith("<<<<<<< "):
                out.append(Finding("error", path, "text changed on both sides (git-style "
                                   "markers): run `memvault resolve`, or keep what you want "
                                   "and delete the markers", n))
    return out


def _settled_blocks(vault: Vault, path: str, data: bytes) -> set[int]:
    """First lines (1-based) of the conflict blocks in `data` that memvault's next write
    settles fact by fact: those that are no longer in the tidied file."""
    from collections import Counter

    from memvault.core.lines import TextFile
    from memvault.core.reconcile import find_blocks
    from memvault.services.tidy import this_clone_first, write_view

    tidied = write_view(vault.backend, path, data)
    if tidied.data == data:
        return set()
    local_first = this_clone_first(vault.backend)
    raw = TextFile.parse(data).lines
    left = Counter(tuple(ln.text for ln in TextFile.parse(tidied.data).lines[b.start:b.end])
                   for b in find_blocks(TextFile.parse(tidied.data).lines,
                                        local_first=local_first))
    settled = set()
    for block in find_blocks(raw, local_first=local_first):
        key = tuple(ln.text for ln in raw[block.start:block.end])
        if left[key]:
            left[key] -= 1
        else:
            settled.add(block.line_no)
    return settled


def tracked_local_state(repo: GitRepo) -> list[str]:
    """Files under `.memvault/` that git tracks but that are local (caches, the parse
    cache's key, locks): someone force-added them (ignore rules do not apply to tracked
    files). Paths relative to the vault (the repository's `root`)."""
    from memvault.state_paths import STATE_DIR, is_local_state

    listed = repo.run("ls-files", "-z", "--", STATE_DIR, check=False).stdout
    return [p for p in listed.split("\0") if p and is_local_state(p)]


def tracked_state_findings(repo: GitRepo) -> list[Finding]:
    from memvault.services.doctor import Finding
    from memvault.services.parse_cache_forget import is_cache_file

    return [Finding("warning", path, "git tracks this local file (a cache, a lock or a key "
                    "of one clone; it may hold your words and memvault never believes it): "
                    + ("`memvault sync` stops tracking it, or run " if is_cache_file(path)
                       else "run ") + f"`git rm --cached -- {path}` and commit")
            for path in tracked_local_state(repo)]


def _in_git(vault: Vault) -> bool:
    return vault.backend.capabilities.git_dir is not None


def sync_doctor_findings(vault: Vault) -> list[Finding]:
    """For doctor: conflict blocks, an open git operation, and the clone's merge setup."""
    from memvault.services.doctor import Finding

    if vault.backend.capabilities.local_root is None:
        return []
    out = conflict_findings(vault)
    if not _in_git(vault):
        return out
    from memvault.services.git_repo import GitRepo
    from memvault.services.git_setup import DRIVER_NAME, attributes_status, check_driver
    from memvault.services.sync import GitSync
    from memvault.services.sync_report import autostash_steps, open_operation_steps

    root = Path(vault.root)
    repo = GitRepo(root)
    if not repo.is_clone():
        return out
    out.extend(tracked_state_findings(repo))
    operation, unmerged = repo.operation(), repo.unmerged()
    if operation or unmerged:
        sync = GitSync(vault)
        mine, others = sync._split(unmerged)
        if operation is None:
            steps = autostash_steps(unmerged, sync._autostash_ref())
        elif others or operation not in ("rebase", "merge"):
            steps = open_operation_steps(operation, others)
        else:
            steps = (f"a git {operation} is open on memory files ({', '.join(mine) or 'none'})"
                     f": run `memvault sync` to finish it")
        out.append(Finding("error", ".git", steps))
    union, old = attributes_status(root)
    nested = not (root / ".git").exists()
    if not union or old:
        why = ("still routes memory files to the memvault driver, which a clone without it "
               "merges as plain text" if old else "lacks the memvault merge lines")
        if nested:
            # A vault inside a larger repository (e.g. examples/vault in memvault's own
            # source tree) is often not synced as a vault: mention it, don't alarm.
            out.append(Finding("info", ".gitattributes", "this vault is inside the git "
                               "repository of a parent folder; if you sync it with git, run "
                               "`memvault sync --setup` (without it git merges Memory.md as "
                               "text)"))
            return out
        out.append(Finding("warning", ".gitattributes", f"this vault is a git clone but "
                           f".gitattributes {why}: run `memvault sync --setup` and commit "
                           f".gitattributes (or just `memvault sync`)"))
    configured = repo.config_get(f"merge.{DRIVER_NAME}.driver")
    if configured is None:
        if not nested:
            out.append(Finding("info", ".git/config", "this clone merges memory files as "
                               "unions of lines (safe, tidied by memvault); `memvault sync "
                               "--setup` adds the fact-by-fact merge driver"))
        return out
    problem = check_driver(repo, configured)
    if problem:
        out.append(Finding("warning", ".git/config", f"the memvault merge driver does not "
                           f"work: {problem}; `memvault doctor --fix` (or `memvault sync`) "
                           "repairs it with this interpreter"))
    return out


def fix_driver(vault: Vault) -> list[str]:
    """For `doctor --fix`: point a broken merge driver at the current interpreter."""
    if not _in_git(vault):
        return []
    from memvault.services.git_repo import GitRepo
    from memvault.services.git_setup import DRIVER_NAME, check_driver, install_driver

    repo = GitRepo(Path(vault.root))
    if not repo.is_clone():
        return []
    configured = repo.config_get(f"merge.{DRIVER_NAME}.driver")
    if configured is None:
        return []
    problem = check_driver(repo, configured)
    if problem is None:
        return []
    install_driver(repo)
    return [f".git/config: repaired the memvault merge driver ({problem})"]
