"""A local cache of GitHub blobs, keyed by their git object id, so a file read once is
never downloaded again while it is unchanged (a remember on a vault with a 1 MB journal
downloads nothing).

A blob's id is the SHA-1 of its content, so a cached copy is checked against its id on
every read and never served stale or corrupted. The cache lives in
`$XDG_CACHE_HOME/memvault/github/<repository key>/` (folders 0700, files 0600), is bounded
(`MAX_BYTES`, oldest dropped first), holds copies of the vault's files on this machine,
and is emptied by a permanent forget (`clear`). `MEMVAULT_GITHUB_CACHE=0` keeps blobs in
memory only, for this process.

It also remembers the repository's default branch, so a configuration without `branch`
does not cost a request per command.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

MAX_BYTES = 256 << 20


def git_blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\x00" % len(data) + data).hexdigest()


class BlobCache:
    def __init__(self, api: str, repo: str, env: os._Environ[str] | dict[str, str]) -> None:
        self._memory: dict[str, bytes] = {}
        self.folder: Path | None = None
        if str(env.get("MEMVAULT_GITHUB_CACHE", "1")).lower() in ("0", "false", "no"):
            return
        base = Path(env.get("XDG_CACHE_HOME") or Path.home() / ".cache")
        key = hashlib.sha256(f"{api}\x00{repo}".encode()).hexdigest()[:16]
        self.folder = base / "memvault" / "github" / key

    def get(self, sha: str) -> bytes | None:
        data = self._memory.get(sha)
        if data is not None:
            return data
        if self.folder is None:
            return None
        try:
            data = (self.folder / sha[:2] / sha).read_bytes()
        except OSError:
            return None
        if git_blob_id(data) != sha:
            return None  # damaged: read it again from GitHub
        self._memory[sha] = data
        return data

    def put(self, data: bytes, sha: str | None = None) -> str:
        sha = sha or git_blob_id(data)
        self._memory[sha] = data
        if self.folder is None:
            return sha
        try:
            where = self.folder / sha[:2]
            where.mkdir(parents=True, exist_ok=True, mode=0o700)
            target = where / sha
            if not target.exists():
                tmp = where / f".{sha}.{os.getpid()}.tmp"
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                with os.fdopen(fd, "wb") as out:
                    out.write(data)
                os.replace(tmp, target)
                self._bound()
        except OSError:
            pass  # a cache that cannot be written is only slower
        return sha

    def _bound(self) -> None:
        assert self.folder is not None
        files = [p for p in self.folder.glob("??/*") if p.is_file()]
        total = sum(p.stat().st_size for p in files)
        for p in sorted(files, key=lambda p: p.stat().st_mtime):
            if total <= MAX_BYTES:
                return
            total -= p.stat().st_size
            p.unlink(missing_ok=True)

    def clear(self) -> None:
        """Drop every cached copy (a permanent forget: old blobs hold forgotten words)."""
        self._memory.clear()
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)

    # -- the default branch --------------------------------------------------------------

    def default_branch(self) -> str | None:
        if self.folder is None:
            return None
        try:
            name = (self.folder / "default-branch").read_text("utf-8").strip()
        except OSError:
            return None
        return name or None

    def remember_default_branch(self, name: str) -> None:
        if self.folder is None:
            return
        try:
            self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            (self.folder / "default-branch").write_text(name + "\n", "utf-8")
        except OSError:
            pass
