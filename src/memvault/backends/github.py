"""The GitHub backend: the vault lives in a GitHub repository (PyGithub, imported lazily).

Settings: the `[github]` table of `.memvault/config.toml` (`repo = "owner/name"`,
`branch`, `folder`, `api`), each overridable by `MEMVAULT_GITHUB_REPO`,
`MEMVAULT_GITHUB_BRANCH`, `MEMVAULT_GITHUB_FOLDER`, `MEMVAULT_GITHUB_API` (GitHub
Enterprise, or a stand-in). Tuning: `MEMVAULT_GITHUB_RETRIES` (default 4),
`MEMVAULT_GITHUB_MAX_WAIT` (longest single wait in seconds, default 60),
`MEMVAULT_GITHUB_BACKOFF` (first back-off, default 1 s), `MEMVAULT_GITHUB_TIMEOUT`
(default 15), `MEMVAULT_GITHUB_THROTTLE=0` (no spacing of requests, e.g. against a local
stand-in) and `MEMVAULT_GITHUB_CACHE=0` (no blob cache on disk).

How it reads and writes (the Git Data API only, never the contents API's one commit per
file):

- **A snapshot per command.** The branch's head (commit and tree: one request) and the
  tree listing (one request) say which blob every file is; a blob's bytes come from the
  local cache (`github_cache.py`, keyed by blob id) or are downloaded once. Versions are
  blob ids. A snapshot older than `SNAPSHOT_TTL` is taken again outside a batch.
- **One commit per unit of work.** Inside `batch(message)` (a service opens one per
  command, `services/one_commit.py`), writes, appends and deletes are staged; at the end
  they become one tree (new contents inline), one commit and one update of the branch,
  never forced. Until that last request nothing is visible, so a failure at any point
  leaves all of the command or none of it. A write outside a batch is a batch of one.
- **When the branch moved meanwhile** (422, not a fast-forward): the new head is read.
  A file this batch only appended to is appended to again on top of its new content (a
  concurrent journal line is kept); a file it rewrote that changed upstream raises
  `StaleBatch`, and the whole unit is done again on the new head (re-read, re-applied by
  id; a fact changed upstream since it was read is then a reported conflict).
- Rate limits, 5xx and network errors: see `github_api.py`. Any other failure is one
  `RemoteError` line. It never falls back to local files.

The token comes only from `MEMVAULT_GITHUB_TOKEN` or `GITHUB_TOKEN`; it is never written,
logged or shown: every message that leaves this backend is scrubbed of it.
"""

from __future__ import annotations

import builtins  # `builtins.list` in classes that have a method named list
import contextlib
import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memvault.backends.base import (
    ANY,
    MISSING,
    Blob,
    Capabilities,
    Change,
    Expected,
    StaleBatch,
    check_not_policy,
)
from memvault.backends.github_api import GithubApi, Head
from memvault.backends.github_cache import BlobCache, git_blob_id
from memvault.backends.github_settings import DEFAULT_API, GithubSettings, error_message
from memvault.core.paths import clean_vault_path
from memvault.errors import Conflict, RemoteError

if TYPE_CHECKING:
    from memvault.config import Config

TOKEN_VARS = ("MEMVAULT_GITHUB_TOKEN", "GITHUB_TOKEN")
COMMIT_ATTEMPTS = 5
SNAPSHOT_TTL = 2.0
"""Seconds a snapshot serves reads outside a batch (a long-lived MCP server re-reads)."""


@dataclass(slots=True)
class _Snapshot:
    head: Head
    files: dict[str, str]  # repository path -> blob id
    truncated: bool
    taken: float
    sizes: dict[str, int] = field(default_factory=dict)  # repository path -> bytes


@dataclass(slots=True)
class _Batch:
    message: str
    base: _Snapshot
    staged: dict[str, bytes | None] = field(default_factory=dict)  # None: delete
    appended: dict[str, bytes] = field(default_factory=dict)
    rewritten: set[str] = field(default_factory=set)


class GithubBackend:
    """A vault stored in (a folder of) a GitHub repository branch."""

    name = "github"

    def __init__(self, settings: GithubSettings, token: str, *,
                 notify: Callable[[str], None] | None = None) -> None:
        self.settings = settings
        self.api = GithubApi(settings, token, notify)
        self._notify = self.api._notify
        self.cache = BlobCache(settings.api, settings.repo, os.environ)
        self._lock = threading.RLock()
        self._branch: str | None = settings.branch
        self._snap: _Snapshot | None = None
        self._batch: _Batch | None = None

    @classmethod
    def from_config(cls, config: Config) -> GithubBackend:
        settings = GithubSettings.resolve(config.section("github"), os.environ)
        token = next((os.environ[v] for v in TOKEN_VARS if os.environ.get(v)), "")
        if not token:
            raise RemoteError("no GitHub token: set MEMVAULT_GITHUB_TOKEN (or GITHUB_TOKEN) "
                              "in the environment")
        return cls(settings, token)

    def describe(self) -> str:
        where = f"github:{self.settings.repo}@{self._branch or '(default branch)'}"
        if self.settings.folder:
            where += f"/{self.settings.folder}"
        if self.settings.api != DEFAULT_API:
            where += f" via {self.settings.api}"
        return where

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(remote_history=True, one_commit=True, cache_dir=self.cache.folder)

    @property
    def requests(self) -> int:
        """HTTP requests made so far (for measuring)."""
        return self.api.requests

    @property
    def branch(self) -> str:
        if self._branch is None:
            from github import GithubException

            name = self.cache.default_branch()
            if name is None:
                try:
                    name = self.api.default_branch()
                except GithubException as exc:
                    raise self.api.remote_error("open repository", f"not found, or the token "
                                                f"cannot see it ({exc.status})") from None
                self.cache.remember_default_branch(name)
            self._branch = name
        return self._branch

    def _vault_path(self, full: str) -> str:
        folder = f"{self.settings.folder}/" if self.settings.folder else ""
        return full[len(folder):] if folder and full.startswith(folder) else full

    def _full(self, path: str) -> str:
        path = clean_vault_path(path)
        return f"{self.settings.folder}/{path}" if self.settings.folder else path

    # -- the snapshot -------------------------------------------------------------------

    def _take_snapshot(self) -> _Snapshot:
        head = self.api.head(self.branch)
        if head.commit is None and self.settings.branch is None and \
                self.cache.default_branch() is not None:
            # The remembered default branch is gone: ask again once.
            self.cache.remember_default_branch("")
            self._branch = None
            head = self.api.head(self.branch)
        files, truncated, sizes = {}, False, {}
        if head.tree is not None:
            listing = self.api.listing(head.tree)
            files, truncated, sizes = listing.files, listing.truncated, listing.sizes
        return _Snapshot(head, files, truncated, time.monotonic(), sizes)

    def _snapshot(self) -> _Snapshot:
        if self._batch is not None:
            return self._batch.base
        if self._snap is None or time.monotonic() - self._snap.taken > SNAPSHOT_TTL:
            self._snap = self._take_snapshot()
        return self._snap

    def refresh(self) -> None:
        """Forget the snapshot: the next read sees the branch as it is now."""
        with self._lock:
            if self._batch is None:
                self._snap = None

    def _bytes(self, full: str, sha: str) -> bytes:
        data = self.cache.get(sha)
        if data is None:
            data = self.api.blob(sha, full)
            if git_blob_id(data) != sha:
                raise self.api.remote_error(f"read {full}", "the blob's content does not "
                                            "match its id")
            self.cache.put(data, sha)
        return data

    # -- reading ------------------------------------------------------------------------

    def read(self, path: str) -> Blob | None:
        full = self._full(path)
        with self._lock:
            if self._batch is not None and full in self._batch.staged:
                staged = self._batch.staged[full]
                return None if staged is None else Blob(staged, git_blob_id(staged))
            snap = self._snapshot()
            sha = snap.files.get(full)
            if sha is None:
                if not (snap.truncated and snap.head.commit):
                    return None
                found = self.api.file_at(full, snap.head.commit)
                if found is None:
                    return None
                self.cache.put(*found)
                return Blob(*found)
            return Blob(self._bytes(full, sha), sha)

    def read_many(self, paths: list[str]) -> dict[str, Blob]:
        """Like `read` for each path; blobs this machine lacks come from the commit's
        archive in two requests when that is cheaper than one request each
        (`github_archive.py`)."""
        from memvault.backends.github_archive import fill_cache

        with self._lock:
            snap = self._snapshot()
            staged = self._batch.staged if self._batch is not None else {}
            missing = {full: sha for full in map(self._full, paths)
                       if (sha := snap.files.get(full)) is not None and full not in staged
                       and self.cache.get(sha) is None}
            if snap.head.commit and not snap.truncated:
                fill_cache(self.api, self.cache, snap.head.commit, missing, snap.sizes)
            found = {path: self.read(path) for path in paths}
            return {path: blob for path, blob in found.items() if blob is not None}

    def list(self, prefix: str = "") -> list[str]:
        return sorted(self.versions(prefix))

    def versions(self, prefix: str = "") -> dict[str, str]:
        """From the tree listing (blob ids): nothing is downloaded."""
        base = self._full(prefix) if prefix else self.settings.folder
        strip = f"{self.settings.folder}/" if self.settings.folder else ""
        with self._lock:
            found = dict(self._snapshot().files)
            if self._batch is not None:
                for full, data in self._batch.staged.items():
                    if data is None:
                        found.pop(full, None)
                    else:
                        found[full] = git_blob_id(data)
        return {p[len(strip):]: sha for p, sha in found.items()
                if p.startswith(strip) and (not base or p.startswith(base + "/"))}

    # -- writing (staged in a batch) ----------------------------------------------------

    @contextlib.contextmanager
    def batch(self, message: str) -> Iterator[None]:
        """Stage every write inside; commit them as one commit at the end (see the
        module doc). Nested batches join the outer one."""
        with self._lock:
            if self._batch is not None:
                yield
                return
            self._batch = _Batch(message, self._snapshot())
            try:
                yield
                self._push(self._batch)
            finally:
                self._batch = None

    def in_batch(self) -> bool:
        return self._batch is not None

    def _check(self, path: str, current: Blob | None, expected: Expected) -> None:
        if expected is ANY:
            return
        if expected is MISSING:
            if current is not None:
                raise Conflict("already exists", path=path)
        elif current is None or current.version != expected:
            raise Conflict("changed on GitHub since it was read; nothing was written "
                           "(try again)", path=path)

    def write(self, path: str, data: bytes, *, expected: Expected = ANY,
              message: str = "") -> str:
        check_not_policy(path)
        full = self._full(path)
        with self.batch(message or f"memvault: update {path}"):
            assert self._batch is not None
            self._check(path, self.read(path), expected)
            self._batch.staged[full] = data
            self._batch.rewritten.add(full)
        return git_blob_id(data)

    def delete(self, path: str, *, expected: Expected = ANY, message: str = "") -> None:
        check_not_policy(path)
        full = self._full(path)
        with self.batch(message or f"memvault: delete {path}"):
            assert self._batch is not None
            current = self.read(path)
            if current is None:
                return
            self._check(path, current, expected)
            self._batch.staged[full] = None
            self._batch.rewritten.add(full)

    def append(self, path: str, data: bytes, *, message: str = "") -> None:
        """Append bytes; if another machine appends meanwhile, both lines are kept."""
        check_not_policy(path)
        full = self._full(path)
        with self.batch(message or f"memvault: append to {path}"):
            assert self._batch is not None
            current = self.read(path)
            self._batch.staged[full] = _joined(current.data if current else b"", data)
            if full not in self._batch.rewritten:
                self._batch.appended[full] = self._batch.appended.get(full, b"") + data

    def commit(self, changes: builtins.list[Change], *, message: str = "") -> None:
        """All changes in one commit: all of them or none."""
        if not changes:
            return
        with self.batch(message or "memvault: update"):
            for ch in changes:
                if ch.data is None:
                    self.delete(ch.path, expected=ch.expected)
                else:
                    self.write(ch.path, ch.data, expected=ch.expected)

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """Process-local; the branch update, never forced, is the real guard."""
        with self._lock:
            yield

    def drop_caches(self) -> None:
        """Forget every cached blob (after a permanent forget: old ones hold the words)."""
        self.cache.clear()

    # -- the commit ---------------------------------------------------------------------

    def _entries(self, b: _Batch) -> builtins.list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for full, data in b.staged.items():
            before = b.base.files.get(full)
            if data is None:
                if before is not None:
                    out.append({"path": full, "mode": "100644", "type": "blob", "sha": None})
                continue
            if before == git_blob_id(data):
                continue  # unchanged
            try:
                out.append({"path": full, "mode": "100644", "type": "blob",
                            "content": data.decode("utf-8")})
            except UnicodeDecodeError:  # bytes that are not UTF-8 go up as a blob
                out.append({"path": full, "mode": "100644", "type": "blob",
                            "sha": self.api.create_blob(data)})
        return out

    def _push(self, b: _Batch) -> None:
        from github import GithubException

        for attempt in range(COMMIT_ATTEMPTS):
            entries = self._entries(b)
            if not entries:
                return
            head = b.base.head
            tree = self.api.create_tree(head.tree, entries)
            commit = self.api.create_commit(b.message, tree,
                                            [head.commit] if head.commit else [])
            try:
                self.api.move_branch(self.branch, commit, create=head.commit is None)
            except GithubException as exc:
                if exc.status not in (409, 422):
                    raise self.api.remote_error("move branch", f"{exc.status}: "
                                                f"{error_message(exc)}") from None
                fresh = self._snap = self._take_snapshot()  # a redo starts from here
                if fresh.head.commit == commit:
                    self._landed(b, fresh.head, commit, tree)  # our earlier try landed
                    return
                self._rebase(b, fresh)
                self._notify(f"memvault: {self.branch} moved on GitHub meanwhile; rebuilding "
                             f"the commit on the new head ({attempt + 1})")
                continue
            self._landed(b, head, commit, tree)
            return
        raise Conflict(f"branch {self.branch} kept moving on GitHub; nothing was committed")

    def _rebase(self, b: _Batch, fresh: _Snapshot) -> None:
        """Carry the staged changes onto a newer head, or raise StaleBatch."""
        for full in list(b.staged):
            if fresh.files.get(full) == b.base.files.get(full):
                continue  # nobody else touched it
            if full in b.appended and full not in b.rewritten:
                sha = fresh.files.get(full)
                upstream = self._bytes(full, sha) if sha else b""
                b.staged[full] = _joined(upstream, b.appended[full])
                continue
            raise StaleBatch("changed on GitHub meanwhile", path=self._vault_path(full))
        b.base = fresh

    def _landed(self, b: _Batch, head: Head, commit: str, tree: str) -> None:
        files, sizes = dict(b.base.files), dict(b.base.sizes)
        for full, data in b.staged.items():
            if data is None:
                files.pop(full, None)
                sizes.pop(full, None)
            else:
                files[full], sizes[full] = self.cache.put(data), len(data)
        self._snap = _Snapshot(Head(commit, tree), files, b.base.truncated, time.monotonic(),
                               sizes)


def _joined(old: bytes, data: bytes) -> bytes:
    if old and not old.endswith(b"\n"):
        old += b"\n"  # a torn last line: start on a fresh one
    return old + data

