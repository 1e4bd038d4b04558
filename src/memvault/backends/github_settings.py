"""Settings of the GitHub backend, and how to read GitHub's error answers.

Kept apart from `memvault.backends.github` so that module holds only the storage logic.
Pure: no network, no PyGithub import. Never sees the token.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Any

from memvault.core.paths import clean_vault_path
from memvault.errors import InvalidInput
from memvault.state_paths import CONFIG

DEFAULT_API = "https://api.github.com"


@dataclass(frozen=True, slots=True)
class GithubSettings:
    repo: str
    branch: str | None = None
    folder: str = ""
    api: str = DEFAULT_API
    retries: int = 4
    max_wait: float = 60.0
    backoff: float = 1.0
    timeout: float = 15.0
    throttle: bool = True

    @classmethod
    def resolve(cls, table: dict[str, Any], env: dict[str, str] | os._Environ[str]
                ) -> GithubSettings:
        def pick(key: str, default: Any = None) -> Any:
            return env.get(f"MEMVAULT_GITHUB_{key.upper()}") or table.get(key) or default

        repo = str(pick("repo", "")).strip().strip("/")
        if repo.count("/") != 1 or not all(repo.split("/")):
            raise InvalidInput("the github backend needs repo = \"owner/name\" in [github] "
                               "(or MEMVAULT_GITHUB_REPO)", path=CONFIG)
        folder = str(pick("folder", "")).strip("/")
        if folder:
            folder = clean_vault_path(folder)
        try:
            return cls(repo=repo, branch=pick("branch") or None, folder=folder,
                       api=str(pick("api", DEFAULT_API)).rstrip("/"),
                       retries=int(pick("retries", 4)), max_wait=float(pick("max_wait", 60)),
                       backoff=float(pick("backoff", 1.0)),
                       timeout=float(pick("timeout", 15)),
                       throttle=str(pick("throttle", "1")).lower() not in ("0", "false", "no"))
        except ValueError as exc:
            raise InvalidInput(f"bad [github] setting: {exc}",
                               path=CONFIG) from None


def error_message(exc: Any) -> str:
    data = getattr(exc, "data", None)
    if isinstance(data, dict) and data.get("message"):
        return str(data["message"]).splitlines()[0]
    return str(getattr(exc, "message", "") or "error")


def rate_limit_wait(exc: Any, fallback: float) -> float | None:
    """Seconds to wait for a rate-limit answer, or None when it is not a rate limit."""
    headers = {str(k).lower(): v for k, v in (getattr(exc, "headers", None) or {}).items()}
    if "retry-after" in headers:
        try:
            return max(0.0, float(headers["retry-after"]))
        except ValueError:
            return fallback
    if headers.get("x-ratelimit-remaining") == "0" and "x-ratelimit-reset" in headers:
        try:
            return max(0.0, float(headers["x-ratelimit-reset"]) - time.time())
        except ValueError:
            return fallback
    text = error_message(exc).lower()
    if "rate limit" in text or exc.status == 429:
        return fallback
    return None
