"""The few GitHub REST calls the GitHub backend makes, through PyGithub's requester.

Every call is one HTTP request (no hidden follow-ups), so a command's request count is
known: the branch (its head commit and tree), the tree listing, a blob, and the three
writes of a commit (a tree with the new contents inline, the commit, the ref update).

Errors: 404, 409 and 422 are returned to the caller as `GithubException` (they mean
something); rate limits (403/429) wait out `Retry-After` / `x-ratelimit-reset` when
short enough, 5xx and network errors back off, every wait announced; anything else is a
one-line `RemoteError` with the token scrubbed.
"""

from __future__ import annotations

import base64
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from memvault.backends.github_settings import GithubSettings, error_message, rate_limit_wait
from memvault.errors import RemoteError

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Head:
    """A branch's head: its commit and that commit's tree (None for an empty branch)."""

    commit: str | None
    tree: str | None


@dataclass(frozen=True, slots=True)
class Listing:
    files: dict[str, str]  # repository path -> blob sha
    truncated: bool
    sizes: dict[str, int] = field(default_factory=dict)  # repository path -> bytes


class GithubApi:
    def __init__(self, settings: GithubSettings, token: str,
                 notify: Callable[[str], None] | None = None) -> None:
        self.settings = settings
        self._token = token
        self._notify = notify or (lambda msg: sys.stderr.write(msg + "\n"))
        self._client: Any = None
        self.requests = 0
        self.retried = False

    # -- the client and error handling -------------------------------------------------

    @property
    def client(self) -> Any:
        if self._client is None:
            from github import Auth, Github

            kwargs: dict[str, Any] = {"base_url": self.settings.api,
                                      "auth": Auth.Token(self._token),
                                      "timeout": int(max(1, self.settings.timeout)),
                                      "retry": None}
            if not self.settings.throttle:
                kwargs.update(seconds_between_requests=None, seconds_between_writes=None)
            self._client = Github(**kwargs)
        return self._client

    def notify(self, message: str) -> None:
        """Say something on stderr (a wait, a fallback): never the token."""
        self._notify(self.scrub(message))

    @property
    def url(self) -> str:
        return f"{self.settings.api}/repos/{self.settings.repo}"

    def scrub(self, text: str) -> str:
        return text.replace(self._token, "***") if self._token else text

    def remote_error(self, what: str, detail: str) -> RemoteError:
        line = " ".join(self.scrub(f"GitHub {self.settings.repo}: {what}: {detail}").split())
        return RemoteError(line)

    def request(self, what: str, verb: str, path: str, body: dict[str, Any] | None = None,
                params: dict[str, Any] | None = None,
                parse: Callable[[dict[str, Any]], T] = lambda data: data) -> T:  # type: ignore[assignment,return-value]
        """One REST call (`path` below the repository's URL), retried as the module says;
        `parse` reads the answer (an answer it cannot read is an unexpected answer)."""
        requester = self.client.requester
        url = self.url + path

        def once() -> T:
            self.requests += 1
            _, data = requester.requestJsonAndCheck(verb, url, parameters=params, input=body)
            if not isinstance(data, dict):
                raise TypeError(f"expected an object, got {type(data).__name__}")
            return parse(data)

        return self.call(what, once)

    def call(self, what: str, fn: Callable[[], T]) -> T:
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
                    raise self.remote_error(what, "the token was rejected (401 Bad "
                                            "credentials); check MEMVAULT_GITHUB_TOKEN or "
                                            "GITHUB_TOKEN") from None
                wait = rate_limit_wait(exc, delay) if status in (403, 429) else None
                if status in (403, 429) and wait is None:
                    raise self.remote_error(what, f"access refused ({status}: {message})") \
                        from None
                if wait is None and status < 500:
                    raise self.remote_error(what, f"{status}: {message}") from None
                if wait is None:
                    wait = delay
                reason = (f"rate limited ({status})" if status in (403, 429)
                          else f"server error {status}")
                if last or wait > s.max_wait:
                    raise self.remote_error(what, f"{reason}; gave up after {attempt + 1} "
                                            f"attempt(s) (asked to wait {wait:.0f} s)") \
                        from None
            except (AssertionError, ValueError, KeyError, TypeError) as exc:
                # PyGithub could not make sense of an answer (e.g. a proxy's HTML page).
                raise self.remote_error(what, f"unexpected answer from {s.api} "
                                        f"({type(exc).__name__}: {exc})") from None
            except requests.exceptions.RequestException as exc:
                kind = "timed out" if isinstance(exc, requests.exceptions.Timeout) else \
                    "cannot connect"
                if last:
                    raise self.remote_error(what, f"{kind} to {s.api} after {attempt + 1} "
                                            "attempt(s)") from None
                reason, wait = f"{kind} to {s.api}", delay
            self._notify(f"memvault: GitHub {reason}; waiting {wait:.1f} s before retrying "
                         f"({attempt + 1}/{s.retries})")
            time.sleep(wait)
            delay = min(delay * 2, s.max_wait)
        raise self.remote_error(what, "no attempts left")  # pragma: no cover

    # -- the calls ------------------------------------------------------------------------

    def default_branch(self) -> str:
        return self.request("open repository", "GET", "",
                            parse=lambda data: str(data["default_branch"]))

    def head(self, branch: str) -> Head:
        """`GET /branches/{branch}`: the head commit and its tree, in one request."""
        from github import GithubException

        def parse(data: dict[str, Any]) -> Head:
            commit = data["commit"]
            return Head(str(commit["sha"]), str(commit["commit"]["tree"]["sha"]))

        try:
            return self.request(f"read branch {branch}", "GET", f"/branches/{branch}",
                                parse=parse)
        except GithubException as exc:
            if exc.status == 404:
                return Head(None, None)  # no such branch yet (an empty repository)
            raise self.remote_error(f"read branch {branch}",
                                    f"{exc.status}: {error_message(exc)}") from None

    def listing(self, tree: str) -> Listing:
        """`GET /git/trees/{tree}?recursive=1`: every file path and blob sha."""
        def parse(data: dict[str, Any]) -> Listing:
            blobs = [e for e in data["tree"] if e.get("type") == "blob"]
            files = {str(e["path"]): str(e["sha"]) for e in blobs}
            sizes = {str(e["path"]): int(e["size"]) for e in blobs if "size" in e}
            return Listing(files, bool(data.get("truncated")), sizes)

        return self.request("list files", "GET", f"/git/trees/{tree}",
                            params={"recursive": "1"}, parse=parse)

    def blob(self, sha: str, path: str) -> bytes:
        def parse(data: dict[str, Any]) -> bytes:
            if data.get("encoding") == "base64":
                return base64.b64decode(data.get("content") or "", validate=False)
            return str(data["content"]).encode("utf-8")

        return self.request(f"read {path}", "GET", f"/git/blobs/{sha}", parse=parse)

    def file_at(self, path: str, commit: str) -> tuple[bytes, str] | None:
        """One file through the contents API (for a tree too large to list whole)."""
        from github import GithubException

        try:
            data: dict[str, Any] = self.request(f"read {path}", "GET", f"/contents/{path}",
                                                params={"ref": commit})
        except GithubException as exc:
            if exc.status == 404:
                return None
            raise self.remote_error(f"read {path}", f"{exc.status}: {error_message(exc)}") \
                from None
        sha = str(data["sha"])
        if data.get("encoding") == "base64" and data.get("content"):
            return base64.b64decode(data["content"], validate=False), sha
        return self.blob(sha, path), sha

    def archive(self, commit: str) -> bytes:
        """The gzipped tar of a commit's tree, in two requests: `GET /tarball/{commit}`
        answers 302 with a short-lived link (see `github_archive.py`), then the download.
        The link carries its own authorisation, so the token is not sent to it."""
        import requests

        requester = self.client.requester

        def link() -> str:
            self.requests += 1
            headers, _ = requester.requestJsonAndCheck("GET", f"{self.url}/tarball/{commit}")
            location = (headers or {}).get("location")
            if not location:
                raise ValueError("no archive link in the answer")
            return str(location)

        location = self.call("download archive", link)

        def download() -> bytes:
            self.requests += 1
            answer = requests.get(location, timeout=self.settings.timeout)
            if 400 <= answer.status_code < 500:
                raise self.remote_error("download archive", f"{answer.status_code}")
            answer.raise_for_status()  # 5xx: retried like a network error
            return answer.content

        return self.call("download archive", download)

    def create_blob(self, content: bytes) -> str:
        return self.request("create blob", "POST", "/git/blobs",
                            {"content": base64.b64encode(content).decode(),
                             "encoding": "base64"}, parse=_sha)

    def create_tree(self, base: str | None, entries: list[dict[str, Any]]) -> str:
        body: dict[str, Any] = {"tree": entries}
        if base is not None:
            body["base_tree"] = base
        return self.request("create tree", "POST", "/git/trees", body, parse=_sha)

    def create_commit(self, message: str, tree: str, parents: list[str]) -> str:
        return self.request("create commit", "POST", "/git/commits",
                            {"message": message, "tree": tree, "parents": parents},
                            parse=_sha)

    def move_branch(self, branch: str, sha: str, *, create: bool) -> None:
        """Point the branch at `sha`, never forced (GithubException 422 when it moved)."""
        if create:
            self.request("create branch", "POST", "/git/refs",
                         {"ref": f"refs/heads/{branch}", "sha": sha})
        else:
            self.request("move branch", "PATCH", f"/git/refs/heads/{branch}",
                         {"sha": sha, "force": False})


def _sha(data: dict[str, Any]) -> str:
    return str(data["sha"])
