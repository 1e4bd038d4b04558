"""The GitHub backend: the vault lives in a GitHub repository (PyGithub, imported lazily).

Settings: the `[github]` table of `.memvault/config.toml` (`repo = "owner/name"`,
`branch`, `folder`, `api`), each overridable by `MEMVAULT_GITHUB_REPO`,
`MEMVAULT_GITHUB_BRANCH`, `MEMVAULT_GITHUB_FOLDER`, `MEMVAULT_GITHUB_API` (GitHub
Enterprise, or a stand-in). Tuning: `MEMVAULT_GITHUB_RETRIES` (default 4),
`MEMVAULT_GITHUB_MAX_WAIT` (longest single wait in seconds, default 60),
`MEMVAULT_GITHUB_BACKOFF` (first back-off in seconds, default 1),
`MEMVAULT_GITHUB_TIMEOUT` (default 15) and `MEMVAULT_GITHUB_THROTTLE=0` (turn off
PyGithub's spacing of requests, e.g. against a local stand-in).

- Versions are blob SHAs; a write with a stale SHA (409) or a missing one (422) raises
  `Conflict`, and callers re-read and re-apply (`edit_bullet_file` does, by record id).
  A 409 after a lost response is checked by re-reading: if the file already holds our
  bytes, the write succeeded.
- `commit()` writes several files as one commit through the Git Data API; a
  non-fast-forward (422) rebuilds on the new head, a bounded number of times.
- Files over 1 MB are read through the blob API.
- Rate limits (403/429) honour `Retry-After` / `x-ratelimit-reset`, 5xx and network
  errors back off; every wait is bounded and announced on stderr.
- Any other remote failure is a one-line `RemoteError` (exit 1). It never falls back to
  local files.

The token comes only from `MEMVAULT_GITHUB_TOKEN` or `GITHUB_TOKEN`; it is never written,
logged or shown: every message that leaves this module is scrubbed of it.
"""

from __future__ import annotations

import base64
import contextlib
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

from memvault.backends.base import ANY, MISSING, Blob, Change, Expected
from memvault.backends.github_settings import (DEFAULT_API, GithubSettings, error_message,
                                               rate_limit_wait)
from memvault.core.paths import clean_vault_path
from memvault.errors import Conflict, InvalidInput, RemoteError

if TYPE_CHECKING:
    from memvault.config import Config

T = TypeVar("T")
TOKEN_VARS = ("MEMVAULT_GITHUB_TOKEN", "GITHUB_TOKEN")
WRITE_ATTEMPTS = 5
COMMIT_ATTEMPTS = 5


class GithubBackend:
    """A vault stored in (a folder of) a GitHub repository branch."""

    name = "github"

    def __init__(self, settings: GithubSettings, token: str, *,
                 notify: Callable[[str], None] | None = None) -> None:
        self.settings = settings
        self._token = token
        self._notify = notify or (lambda msg: sys.stderr.write(msg + "\n"))
        self._lock = threading.RLock()
        self._repo: Any = None
        self._branch: str | None = settings.branch
        self.retried = False
        """True when the last API call needed more than one attempt."""

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

    # -- the client and error handling --------------------------------------------------

    def _scrub(self, text: str) -> str:
        return text.replace(self._token, "***") if self._token else text

    def _remote(self, what: str, detail: str) -> RemoteError:
        line = " ".join(self._scrub(f"GitHub {self.settings.repo}: {what}: {detail}").split())
        return RemoteError(line)

    def _call(self, what: str, fn: Callable[[], T]) -> T:
        """Run one API call with bounded, announced waits; map failures to RemoteError.

        404, 409 and 422 are re-raised as GithubException for the caller to interpret.
        """
        import requests
        from github import GithubException

        s = self.settings
        delay = s.backoff
        for attempt in range(s.retries + 1):
            last = attempt == s.retries
            self.retried = attempt > 0
            try:
                return fn()
            except GithubException as exc:
                status = exc.status
                message = error_message(exc)
                if status in (404, 409, 422):
                    raise
                if status == 401:
                    raise self._remote(what, "the token was rejected (401 Bad credentials); "
                                       "check MEMVAULT_GITHUB_TOKEN or GITHUB_TOKEN") from None
                wait = rate_limit_wait(exc, delay) if status in (403, 429) else None
                if status in (403, 429) and wait is None:
                    raise self._remote(what, f"access refused ({status}: {message})") from None
                if wait is None and status < 500:
                    raise self._remote(what, f"{status}: {message}") from None
                if wait is None:
                    wait = delay
                reason = (f"rate limited ({status})" if status in (403, 429)
                          else f"server error {status}")
                if last or wait > s.max_wait:
                    raise self._remote(what, f"{reason}; gave up after {attempt + 1} "
                                       f"attempt(s) (asked to wait {wait:.0f} s)") from None
            except (AssertionError, ValueError, KeyError, TypeError) as exc:
                # PyGithub could not make sense of an answer (e.g. a proxy's HTML page).
                raise self._remote(what, f"unexpected answer from {s.api} "
                                   f"({type(exc).__name__}: {exc})") from None
            except requests.exceptions.RequestException as exc:
                kind = "timed out" if isinstance(exc, requests.exceptions.Timeout) else \
                    "cannot connect"
                if last:
                    raise self._remote(what, f"{kind} to {s.api} after {attempt + 1} "
                                       "attempt(s)") from None
                reason, wait = f"{kind} to {s.api}", delay
            self._notify(f"memvault: GitHub {reason}; waiting {wait:.1f} s before retrying "
                         f"({attempt + 1}/{s.retries})")
            time.sleep(wait)
            delay = min(delay * 2, s.max_wait)
        raise self._remote(what, "no attempts left")  # pragma: no cover

    @property
    def repo(self) -> Any:
        if self._repo is None:
            from github import Auth, Github, GithubException

            kwargs: dict[str, Any] = {"base_url": self.settings.api,
                                      "auth": Auth.Token(self._token),
                                      "timeout": int(max(1, self.settings.timeout)),
                                      "retry": None}
            if not self.settings.throttle:
                kwargs.update(seconds_between_requests=None, seconds_between_writes=None)
            client = Github(**kwargs)
            try:
                repo = self._call("open repository", lambda: client.get_repo(self.settings.repo))
            except GithubException as exc:
                raise self._remote("open repository", f"not found, or the token cannot see "
                                   f"it ({exc.status})") from None
            self._branch = self._branch or repo.default_branch
            self._repo = repo
        return self._repo

    @property
    def branch(self) -> str:
        _ = self.repo
        assert self._branch is not None
        return self._branch

    def _full(self, path: str) -> str:
        path = clean_vault_path(path)
        return f"{self.settings.folder}/{path}" if self.settings.folder else path

    # -- reading ------------------------------------------------------------------------

    def read(self, path: str) -> Blob | None:
        return self._read_at(path, self.branch)

    def _read_at(self, path: str, ref: str) -> Blob | None:
        from github import GithubException

        full = self._full(path)
        try:
            found = self._call(f"read {path}", lambda: self.repo.get_contents(full, ref=ref))
        except GithubException as exc:
            if exc.status == 404:
                return None
            raise self._remote(f"read {path}", f"{exc.status}: {error_message(exc)}") from None
        if isinstance(found, list):
            raise InvalidInput("is a folder, expected a file", path=path)
        try:
            if found.encoding == "none" or (found.size and not found.content):
                blob = self._call(f"read {path}", lambda: self.repo.get_git_blob(found.sha))
                data = base64.b64decode(blob.content, validate=False)
            else:
                data = base64.b64decode(found.content, validate=False)
            if not isinstance(found.sha, str):
                raise TypeError("no sha")
        except (TypeError, ValueError) as exc:
            raise self._remote(f"read {path}", f"unexpected answer from "
                               f"{self.settings.api} ({exc})") from None
        return Blob(data, found.sha)

    def list(self, prefix: str = "") -> list[str]:
        from github import GithubException

        base = self._full(prefix) if prefix else self.settings.folder
        try:
            tree = self._call("list files",
                              lambda: self.repo.get_git_tree(self.branch, recursive=True))
        except GithubException as exc:
            if exc.status in (404, 409):
                return []  # an empty repository
            raise self._remote("list files", f"{exc.status}: {error_message(exc)}") from None
        strip = f"{self.settings.folder}/" if self.settings.folder else ""
        out = [el.path[len(strip):] for el in tree.tree
               if el.type == "blob" and (not base or el.path.startswith(base + "/"))]
        return sorted(out)

    # -- writing ------------------------------------------------------------------------

    def write(self, path: str, data: bytes, *, expected: Expected = ANY,
              message: str = "") -> str:
        from github import GithubException

        full = self._full(path)
        msg = message or f"memvault: update {path}"
        with self._lock:
            for _ in range(WRITE_ATTEMPTS):
                if expected is ANY:
                    current = self.read(path)
                    sha = current.version if current else None
                else:
                    sha = None if expected is MISSING else str(expected)
                try:
                    if sha is None:
                        result = self._call(f"write {path}", lambda: self.repo.create_file(
                            full, msg, data, branch=self.branch))
                    else:
                        result = self._call(f"write {path}", lambda: self.repo.update_file(
                            full, msg, data, sha, branch=self.branch))
                    return str(result["content"].sha)
                except GithubException as exc:
                    if exc.status not in (404, 409, 422):
                        raise self._remote(f"write {path}",
                                           f"{exc.status}: {error_message(exc)}") from None
                # Stale or missing SHA -- or, after a retry, our own earlier attempt landed
                # and its answer was lost: then the file already holds our bytes.
                retried = self.retried
                now = self.read(path)
                if retried and now is not None and now.data == data:
                    return now.version
                if expected is ANY:
                    continue
                if expected is MISSING:
                    raise Conflict("already exists", path=path)
                raise Conflict("changed on GitHub since it was read; nothing was written "
                               "(try again)", path=path)
        raise Conflict("kept changing on GitHub while memvault tried to write it", path=path)

    def delete(self, path: str, *, expected: Expected = ANY, message: str = "") -> None:
        from github import GithubException

        full = self._full(path)
        msg = message or f"memvault: delete {path}"
        with self._lock:
            for _ in range(WRITE_ATTEMPTS):
                current = self.read(path)
                if current is None:
                    return
                if expected is MISSING or (expected is not ANY and current.version != expected):
                    raise Conflict("changed on GitHub since it was read; nothing was deleted",
                                   path=path)
                try:
                    self._call(f"delete {path}", lambda: self.repo.delete_file(
                        full, msg, current.version, branch=self.branch))
                    return
                except GithubException as exc:
                    if exc.status not in (404, 409, 422):
                        raise self._remote(f"delete {path}",
                                           f"{exc.status}: {error_message(exc)}") from None
        raise Conflict("kept changing on GitHub while memvault tried to delete it", path=path)

    def append(self, path: str, data: bytes, *, message: str = "") -> None:
        """Read-modify-write with compare-and-swap, retried when someone else wrote."""
        with self._lock:
            for _ in range(WRITE_ATTEMPTS):
                current = self.read(path)
                old = current.data if current else b""
                if old and not old.endswith(b"\n"):
                    old += b"\n"  # a torn last line: start on a fresh one
                try:
                    self.write(path, old + data, expected=current.version if current else MISSING,
                               message=message or f"memvault: append to {path}")
                    return
                except Conflict:
                    continue
        raise Conflict("kept changing on GitHub while memvault tried to append to it",
                       path=path)

    def commit(self, changes: list[Change], *, message: str = "") -> None:
        """All changes as one commit (Git Data API); rebuilt on a moved head (422)."""
        if not changes:
            return
        from github import GithubException, InputGitTreeElement

        msg = message or "memvault: update"
        with self._lock:
            repo = self.repo
            blobs: dict[str, str] = {}
            for ch in changes:
                if ch.data is not None:
                    content = base64.b64encode(ch.data).decode()
                    blobs[ch.path] = self._call("create blob", lambda c=content: repo.create_git_blob(
                        c, "base64")).sha
            for attempt in range(COMMIT_ATTEMPTS):
                try:
                    ref = self._call("read branch", lambda: repo.get_git_ref(f"heads/{self.branch}"))
                    head_sha = self._call("read branch", lambda: ref.object.sha)
                    head = self._call("read commit", lambda: repo.get_git_commit(head_sha))
                except GithubException as exc:
                    raise self._remote("commit", f"branch {self.branch} not readable "
                                       f"({exc.status}); it needs a first commit") from None
                elements = []
                for ch in changes:
                    current = self._read_at(ch.path, head_sha)
                    if ch.expected is MISSING and current is not None:
                        raise Conflict("already exists", path=ch.path)
                    if ch.expected not in (ANY, MISSING) and (
                            current is None or current.version != ch.expected):
                        raise Conflict("changed on GitHub since it was read; nothing was "
                                       "written", path=ch.path)
                    if ch.data is None:
                        if current is not None:
                            elements.append(InputGitTreeElement(self._full(ch.path), "100644",
                                                                "blob", sha=None))
                    else:
                        elements.append(InputGitTreeElement(self._full(ch.path), "100644",
                                                            "blob", sha=blobs[ch.path]))
                if not elements:
                    return
                tree = self._call("create tree", lambda: repo.create_git_tree(
                    elements, base_tree=head.tree))
                new = self._call("create commit", lambda: repo.create_git_commit(
                    msg, tree, [head]))
                try:
                    self._call("move branch", lambda: ref.edit(new.sha, force=False))
                    return
                except GithubException as exc:
                    if exc.status != 422:
                        raise self._remote("move branch",
                                           f"{exc.status}: {error_message(exc)}") from None
                    self._notify(f"memvault: {self.branch} moved on GitHub meanwhile; "
                                 f"rebuilding the commit on the new head ({attempt + 1})")
        raise Conflict(f"branch {self.branch} kept moving on GitHub; nothing was committed")

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """Process-local; the compare-and-swap on GitHub is the real guard."""
        with self._lock:
            yield
