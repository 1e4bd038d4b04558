"""The git merge driver (`memvault merge-driver %O %A %B %P`): files in, merged file out.

git calls it for the paths `.gitattributes` marks `merge=memvault`, with the ancestor
(%O), our version (%A, where the result must be written), their version (%B) and the
path in the repository (%P). During a rebase %A is the upstream side and %B the local
commit being replayed; conflict blocks always show this clone's version first. The bullet
files of the record kinds whose merge rule is `record-by-record` (`memvault.core.kinds`:
Memory.md, Lessons.md, Inbox.md) are merged fact by fact (`memvault.core.merge`);
`*.jsonl` journals as unions of lines; anything else with `git merge-file`. Exit status 0
means merged, 1 means conflicts were left for the user.

Tombstones win: a fact the other side forgot does not come back. The tombstones are read
from every version git has at hand (the working tree, HEAD, ORIG_HEAD, MERGE_HEAD,
REBASE_HEAD) plus the file `memvault sync` names in MEMVAULT_MERGE_TOMBSTONES, and keyed
with the vault's salt from the working tree's `.memvault/config.toml`.

It never writes anything but %A, and never touches the network.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from memvault.backends.fs_git import find_git_dir, operation_in_progress
from memvault.core.journal_lines import occurrences
from memvault.core.kinds import kind_of_file
from memvault.core.merge import MergeResult, merge_bullet_files, merge_json_lines
from memvault.core.records import tombstone_keys
from memvault.layout import SCOPES_FOLDER
from memvault.state_paths import CONFIG, TOMBSTONES

TOMBSTONE_ENV = "MEMVAULT_MERGE_TOMBSTONES"
PROBE_ENV = "MEMVAULT_DRIVER_PROBE"
LOCAL_LABEL = "this clone"
INCOMING_LABEL = "incoming"
_REFS = ("HEAD", "ORIG_HEAD", "MERGE_HEAD", "REBASE_HEAD", "CHERRY_PICK_HEAD")


def git_merge_file(base: bytes, local: bytes, incoming: bytes) -> tuple[bytes, bool]:
    """git's own three-way text merge (`git merge-file -p`), this clone's side first."""
    with tempfile.TemporaryDirectory(prefix="memvault-merge-") as tmp:
        paths = []
        for name, data in (("local", local), ("base", base), ("incoming", incoming)):
            p = Path(tmp, name)
            p.write_bytes(data)
            paths.append(str(p))
        proc = subprocess.run(["git", "merge-file", "-p", "-L", LOCAL_LABEL, "-L", "base",
                               "-L", INCOMING_LABEL, *paths], capture_output=True)
    if proc.returncode < 0 or proc.returncode > 127:
        from memvault.core.merge import simple_text_merge

        return simple_text_merge(base, local, incoming)
    return proc.stdout, proc.returncode != 0


def _vault_root(repo_path: str, cwd: Path | None = None) -> tuple[Path, str]:
    """The working-tree folder holding `.memvault/config.toml`, and the path inside it
    (git runs the driver at the top of the work tree, which `repo_path` is relative to)."""
    cwd = cwd or Path.cwd()
    parts = PurePosixPath(repo_path).parts
    for cut in range(len(parts) - 1, -1, -1):
        candidate = cwd.joinpath(*parts[:cut])
        if (candidate / CONFIG).is_file():
            return candidate, "/".join(parts[cut:])
    return cwd, repo_path


def _config(root: Path) -> tuple[str, str]:
    """(salt, home) from the working tree's config; defaults when unreadable."""
    try:
        raw = tomllib.loads((root / CONFIG).read_text("utf-8"))
    except (OSError, ValueError):
        return "", "Pilot"
    return str(raw.get("tombstone_salt", "")), str(raw.get("home", "Pilot")).strip("/")


def _scope_of(vault_path: str, home: str) -> str:
    prefix = f"{home}/{SCOPES_FOLDER}/"
    if vault_path.startswith(prefix):
        return vault_path[len(prefix):].split("/", 1)[0]
    return "default"


def _tombstone_sources(root: Path, extra: bytes = b"") -> list[bytes]:
    out: list[bytes] = [extra] if extra else []
    try:
        out.append((root / TOMBSTONES).read_bytes())
    except OSError:
        pass
    extra_file = os.environ.get(TOMBSTONE_ENV)
    if extra_file:
        try:
            out.append(Path(extra_file).read_bytes())
        except OSError:
            pass
    try:
        top = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=root,
                             capture_output=True, text=True).stdout.strip()
    except OSError:
        return out
    if top:
        rel = (root / TOMBSTONES).resolve().relative_to(Path(top).resolve()).as_posix()
        for ref in _REFS:
            proc = subprocess.run(["git", "show", f"{ref}:{rel}"], cwd=top, capture_output=True)
            if proc.returncode == 0:
                out.append(proc.stdout)
    return out


def active_tombstone_keys(sources: list[bytes], scope: str) -> set[str]:
    """Keys whose latest entry (by time, then order) is a tombstone, over all given
    versions. An entry is known by its line and copy number (`occurrences`): a version
    that holds one line twice (forget, restore, forget within one second) counts both."""
    entries: dict[tuple[bytes, int], dict[str, object]] = {}
    for data in sources:
        for line in occurrences(ln.strip() for ln in data.split(b"\n") if ln.strip()):
            if line in entries:
                continue
            try:
                obj = json.loads(line[0])
            except ValueError:
                continue
            if isinstance(obj, dict) and obj.get("scope", "default") == scope:
                entries[line] = obj
    latest: dict[str, dict[str, object]] = {}
    for e in sorted(entries.values(), key=lambda e: e.get("ts", 0)):  # type: ignore[arg-type, return-value]
        latest[str(e.get("key"))] = e
    return {k for k, e in latest.items() if e.get("kind") != "lifted"}


def forgotten_checker(root: Path, vault_path: str, extra: bytes = b"") -> Callable[[str], bool]:
    salt, home = _config(root)
    keys = active_tombstone_keys(_tombstone_sources(root, extra), _scope_of(vault_path, home))
    if not keys:
        return lambda _text: False

    def is_forgotten(text: str) -> bool:
        return any(key in keys for key in tombstone_keys(salt, text))

    return is_forgotten


def merge_files(base: bytes, ours: bytes, theirs: bytes, repo_path: str, *,
                local_is_theirs: bool = False, cwd: Path | None = None,
                extra_tombstones: bytes = b"") -> MergeResult:
    """Merge one file git handed us (see the module doc). `local_is_theirs`: this clone's
    version is `theirs` (during a rebase git replays the local commits onto upstream)."""
    name = PurePosixPath(repo_path).name
    kind = kind_of_file(name)
    if kind is not None and kind.merge == "record-by-record":
        root, vault_path = _vault_root(repo_path, cwd)
        return merge_bullet_files(base, ours, theirs,
                                  is_forgotten=forgotten_checker(root, vault_path,
                                                                 extra_tombstones),
                                  merge_text=git_merge_file, local_is_theirs=local_is_theirs)
    if name.endswith(".jsonl"):
        return MergeResult(merge_json_lines(base, ours, theirs))
    local, incoming = (theirs, ours) if local_is_theirs else (ours, theirs)
    merged, conflicted = git_merge_file(base, local, incoming)
    return MergeResult(merged, ["text changed on both sides (git-style markers)"]
                       if conflicted else [])


def run_driver(base_file: str, ours_file: str, theirs_file: str, repo_path: str) -> int:
    """Entry point for git: writes the result over `ours_file`; returns the exit code."""
    if os.environ.get(PROBE_ENV):
        from memvault import __version__

        sys.stdout.write(f"memvault {__version__}\n")  # `memvault sync` checks the driver
    base = Path(base_file).read_bytes()
    ours = Path(ours_file).read_bytes()
    theirs = Path(theirs_file).read_bytes()
    result = merge_files(base, ours, theirs, repo_path,
                         local_is_theirs=operation_in_progress(find_git_dir(Path.cwd()))
                         == "rebase")
    Path(ours_file).write_bytes(result.data)
    for why in result.conflicts:
        sys.stderr.write(f"memvault merge: {repo_path}: {why}\n")
    return 0 if result.clean else 1
