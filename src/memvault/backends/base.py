"""The backend contract every storage implementation honours.

Paths are vault-relative POSIX strings (see `memvault.core.paths`). A *version* is an
opaque string that changes whenever a file's bytes change (a content hash on fs, the blob
SHA on GitHub). Writes are compare-and-swap: pass the version you read (or `MISSING`
for "must not exist yet", or `ANY` to overwrite unconditionally); a mismatch raises
`memvault.errors.Conflict` and changes nothing.
"""

from __future__ import annotations

import builtins  # `builtins.list` in classes that have a method named list
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

from memvault.errors import Conflict, InvalidInput


class _Sentinel:
    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return self._name


MISSING = _Sentinel("MISSING")
"""Expected version meaning: the file must not exist yet."""

ANY = _Sentinel("ANY")
"""Expected version meaning: write whatever is there."""

Expected = str | _Sentinel


@dataclass(frozen=True, slots=True)
class Blob:
    """A file's bytes and the version they were read at.

    `changed_ns`: when the file last changed (nanoseconds since the epoch), where the
    store knows and a reader could catch a file mid-save (a local folder); None where
    every change arrives whole (a remote commit)."""

    data: bytes
    version: str
    changed_ns: int | None = None
    linked_to: str | None = None
    """Set when the path was reached through a symlink (a file or a folder on the way):
    the vault-relative path actually read. Writes through a symlink are refused."""


class StaleBatch(Conflict):
    """A file a batch rewrote changed in the store before the batch could land: the whole
    unit of work must be done again on the new state (see `services/one_commit.py`)."""


@dataclass(frozen=True, slots=True)
class Change:
    """One file of a multi-file commit: new bytes, or `None` to delete it."""

    path: str
    data: bytes | None
    expected: Expected = ANY


@dataclass(frozen=True, slots=True)
class Capabilities:
    """What a backend offers beyond reading and writing files. Services decide by these,
    never by a backend's name, so a new backend gets every feature its capabilities allow.

    A backend that declares a capability also offers the methods named with it."""

    local_root: Path | None = None
    """The folder on this machine that *is* the vault: editors save there, so the watcher,
    the safety net, `memory open` and the on-disk search index work on it. Methods:
    `remove_stale_temps(paths)` (temp files a killed write left), `link_target(path)`
    (where a symlinked path leads), `try_lock()` (the write lock without waiting: a
    context manager yielding whether it is held), `replace_unsynced(path, data)` (an
    atomic replace without `fsync`, for the safety net's copy after an add and the
    forgets note), `read_unversioned(path)` (bytes without a content hash); the parse
    cache keeps its folder there (see `services/parse_cache_files.py`)."""
    git_dir: Path | None = None
    """The git folder, when `local_root` lies in a git work tree: `memvault sync`, counting
    and rewriting history after a permanent forget, doctor's merge checks; writes are
    refused while git is mid-rebase or mid-merge."""
    remote_history: bool = False
    """Every change lands as a commit in a history memvault cannot rewrite (a permanent
    forget says that earlier commits still hold the words)."""
    one_commit: bool = False
    """Writes inside `batch(message)` land as one unit, all of them or none (`in_batch()`
    says whether one is open); without it each write is atomic on its own and `commit`
    is the only multi-file unit."""
    cache_dir: Path | None = None
    """A private folder on this machine where memvault may keep copies of the store's
    files (the search index's copy of the notes, `services/search_mirror.py`). Method:
    `drop_caches()`, which empties it (a permanent forget: the copies hold the words)."""


@runtime_checkable
class Backend(Protocol):
    """Storage for one vault (see `backends/registry.py` for how one is chosen)."""

    name: str

    @property
    def capabilities(self) -> Capabilities:
        """What this backend offers beyond files (see `Capabilities`)."""

    def read(self, path: str) -> Blob | None:
        """The file's bytes and version, or None when it does not exist."""

    def read_many(self, paths: list[str]) -> dict[str, Blob]:
        """`read` of each path, for those that exist; in fewer requests where the store
        can (the GitHub backend: a commit's archive instead of a request per file)."""

    def versions(self, prefix: str = "") -> dict[str, str]:
        """Every file under `prefix` (a folder) with its current version, the versions
        `read` would return; without downloading bytes where the store knows them (the
        GitHub tree listing)."""

    def write(self, path: str, data: bytes, *, expected: Expected = ANY,
              message: str = "") -> str:
        """Replace the file atomically if its version matches; returns the new version."""

    def delete(self, path: str, *, expected: Expected = ANY, message: str = "") -> None:
        """Delete the file if its version matches (a missing file is not an error)."""

    def append(self, path: str, data: bytes, *, message: str = "") -> None:
        """Append bytes to a file (created if missing); used for JSON-lines journals."""

    def list(self, prefix: str = "") -> list[str]:
        """Every file path under `prefix` (a folder), sorted."""

    def commit(self, changes: builtins.list[Change], *, message: str = "") -> None:
        """Apply several changes as one unit: all of them or none."""

    def lock(self) -> AbstractContextManager[None]:
        """A lock held around read-modify-write so concurrent writers never lose updates."""

    def describe(self) -> str:
        """A short human description (e.g. the folder or repository), without secrets."""


_POLICY_WRITER: ContextVar[bool] = ContextVar("memvault_policy_writer", default=False)


@contextmanager
def policy_writer() -> Iterator[None]:
    """The one door to Policy.md: writes inside this block may create or change a file
    named Policy.md (`PolicyService.set` and `init` use it; nothing else does)."""
    token = _POLICY_WRITER.set(True)
    try:
        yield
    finally:
        _POLICY_WRITER.reset(token)


def check_not_policy(path: str) -> None:
    """Refuse a write to any file named Policy.md (any case) outside `policy_writer()`.

    Backends call this for every write, append and delete, on the path where the bytes
    really land (they refuse symlinks first, so that is the path itself)."""
    if path.rsplit("/", 1)[-1].casefold() == "policy.md" and not _POLICY_WRITER.get():
        raise InvalidInput("Policy.md is changed only by `memvault policy set`; nothing was "
                           "written", path=path)
