"""A third backend, in memory, built from the protocol and the registry alone.

It keeps a vault's files in a dict (one per vault folder, so every open of the same
folder sees the same files) and a private cache folder beside it, so search works on it
through the copy of its notes. `tests/test_backend_contract.py` runs the contract suite
on it and checks it stays under 100 lines: adding a backend is that small.
"""

from __future__ import annotations

import hashlib
import shutil
import threading
from collections.abc import Sequence
from contextlib import AbstractContextManager
from pathlib import Path

from memvault.backends import base
from memvault.backends.base import ANY, MISSING, Blob, Capabilities, Change, Expected
from memvault.backends.registry import register
from memvault.config import Config
from memvault.core.paths import clean_vault_path
from memvault.errors import Conflict

STORES: dict[Path, dict[str, bytes]] = {}


class MemoryBackend:
    name = "memory"

    def __init__(self, files: dict[str, bytes], cache_dir: Path) -> None:
        self.files = files
        self.capabilities = Capabilities(cache_dir=cache_dir)
        self._lock = threading.RLock()

    def describe(self) -> str:
        return f"memory:{len(self.files)} files"

    def read(self, path: str) -> Blob | None:
        data = self.files.get(clean_vault_path(path))
        return None if data is None else Blob(data, hashlib.sha1(data).hexdigest())

    def read_many(self, paths: list[str]) -> dict[str, Blob]:
        return {p: b for p in paths if (b := self.read(p)) is not None}

    def versions(self, prefix: str = "") -> dict[str, str]:
        return {p: hashlib.sha1(self.files[p]).hexdigest() for p in self.list(prefix)}

    def list(self, prefix: str = "") -> list[str]:
        base = clean_vault_path(prefix) + "/" if prefix else ""
        return sorted(p for p in self.files if p.startswith(base))

    def write(self, path: str, data: bytes, *, expected: Expected = ANY,
              message: str = "") -> str:
        self.commit([Change(path, data, expected)])
        return hashlib.sha1(data).hexdigest()

    def delete(self, path: str, *, expected: Expected = ANY, message: str = "") -> None:
        if self.read(path) is not None:
            self.commit([Change(path, None, expected)])

    def append(self, path: str, data: bytes, *, message: str = "") -> None:
        with self._lock:
            old = self.files.get(clean_vault_path(path), b"")
            self.write(path, (old + b"\n" if old and not old.endswith(b"\n") else old) + data)

    def commit(self, changes: Sequence[Change], *, message: str = "") -> None:
        with self._lock:
            for ch in changes:  # check all of them before changing any
                base.check_not_policy(clean_vault_path(ch.path))
                current = self.read(ch.path)
                if ch.expected is MISSING and current is not None:
                    raise Conflict("already exists", path=ch.path)
                if isinstance(ch.expected, str) and (current is None
                                                     or current.version != ch.expected):
                    raise Conflict("changed since it was read", path=ch.path)
            for ch in changes:
                if ch.data is None:
                    self.files.pop(clean_vault_path(ch.path), None)
                else:
                    self.files[clean_vault_path(ch.path)] = bytes(ch.data)

    def lock(self) -> AbstractContextManager[None]:
        return self._lock  # type: ignore[return-value]

    def drop_caches(self) -> None:
        assert self.capabilities.cache_dir is not None
        shutil.rmtree(self.capabilities.cache_dir, ignore_errors=True)


def open_memory_backend(root: Path, config: Config) -> MemoryBackend:
    return MemoryBackend(STORES.setdefault(root, {}), root.with_name(root.name + ".cache"))


register("memory", open_memory_backend, about="files in memory (a test backend)")
