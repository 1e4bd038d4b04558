"""One MCP server's view of the vault: fresh state on every call, errors as tool errors.

Every tool call goes through `VaultSession.call()`, which

- re-reads the config and hands out a new `Vault` (services read files from disk on each
  call, so a hand edit made in Obsidian while the server runs is seen by the next call;
  nothing is cached across calls);
- applies edits the user made in Inbox.md (a ticked box accepts, a deleted line rejects);
- serialises calls inside this process (the backend lock covers other processes);
- keeps exactly one thing across calls: the search service, whose index is a disposable
  cache refreshed for exactly what changed (mcp/freshness.py; the changes come from the
  vault watcher's observer, the one observer of the process);
- turns a `VaultError` into a `ToolError`, which the client receives as a result with
  `is_error=True` and the one-line message, instead of a crash.

It must never write to stdout (the protocol channel) or hold vault state (files, config,
records) between calls.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_args

from memvault.errors import VaultError

if TYPE_CHECKING:
    from memvault.backends.base import Backend
    from memvault.mcp.freshness import ChangeFlag
    from memvault.services.vault import Vault

log = logging.getLogger("memvault.mcp")

AccessLevel = Literal["read", "propose", "write"]
ACCESS_LEVELS: tuple[AccessLevel, ...] = get_args(AccessLevel)
"""read: only reading tools; propose (default): reading + proposals into Inbox.md;
write: also remember / edit / forget / accept / reject / trade record."""


class VaultSession:
    def __init__(self, root: Path, backend: Backend, scope: str | None, access: str) -> None:
        if access not in ACCESS_LEVELS:
            from memvault.errors import UsageError

            raise UsageError(f"--access must be one of {', '.join(ACCESS_LEVELS)}, "
                             f"not {access!r}")
        self.root = root
        self.backend = backend
        self.scope = scope
        self.access: AccessLevel = access  # narrowed to the levels by the check above
        self._lock = threading.RLock()
        self._search: Any = None
        self._search_home: str | None = None
        self._changes: ChangeFlag | None = None
        self._memory_stamp: tuple[Any, ...] | None = None

    @classmethod
    def open(cls, path: str | Path | None, *, scope: str | None = None,
             access: str = "propose") -> VaultSession:
        from memvault.services.vault import Vault

        vault = Vault.open(path, scope=scope)
        return cls(vault.root, vault.backend, scope, access)

    def vault(self) -> Vault:
        """A fresh Vault (config re-read) over the same backend."""
        from memvault.services.vault import Vault

        return Vault.open(self.root, scope=self.scope, backend=self.backend)

    @contextmanager
    def call(self, *, apply_inbox: bool = True) -> Iterator[Vault]:
        from mcp.server.mcpserver.exceptions import ToolError

        with self._lock:
            try:
                vault = self.vault()
                if apply_inbox:
                    edits = vault.apply_inbox_edits()
                    if edits.problem:
                        log.warning("inbox edits not applied: %s", edits.problem)
                    for held in edits.to_report:
                        log.warning("%s", held)
                    for action, record in edits.applied:
                        log.info("inbox: %s %s", action, record.id)
                yield vault
            except VaultError as exc:
                raise ToolError(str(exc)) from None

    def kept_search(self, vault: Vault) -> Any:
        """The search service kept for the server's lifetime (its index is a cache)."""
        if self._search is None or self._search_home != vault.config.home:
            if self._search is not None:
                self._search.close()
            self._search, self._search_home = vault.search, vault.config.home
            self._changes_from_disk()
        return self._search

    def follow_watcher(self, watcher: Any) -> None:
        """Take index freshness from the vault watcher's observer (one per process)."""
        from memvault.mcp.freshness import ChangeFlag

        if self._changes is not None:
            self._changes.stop()
        flag = ChangeFlag(self.root)
        flag.follow(lambda: watcher.observing)
        watcher.on_event = flag.event
        self._changes = flag

    def _changes_from_disk(self) -> None:
        if self._changes is None and self.backend.capabilities.local_root is not None:
            from memvault.mcp.freshness import ChangeFlag

            flag = ChangeFlag(self.root)
            self._changes = flag if flag.start() else None

    def refresh_search(self, vault: Vault) -> Any:
        """The kept search service, brought in step with what changed since the last
        call: the paths the observer reported (or the whole vault when that is unknown),
        and this principal's memory files when their stamps changed (a write by this
        server is seen even before its file event arrives). One refresh per change."""
        from memvault.mcp.freshness import FULL

        search = self.kept_search(vault)
        plan = self._changes.take() if self._changes is not None else FULL
        stamp = self._stamp(vault)
        memory_changed = stamp != self._memory_stamp
        self._memory_stamp = stamp
        if plan == FULL:
            search.refresh()
        else:
            paths = set(plan or ())
            if memory_changed:
                paths |= set(vault.layout.memory_files)
            if paths:
                search.refresh_paths(paths)
        return search

    def _stamp(self, vault: Vault) -> tuple[Any, ...]:
        out: list[Any] = []
        for rel in vault.layout.memory_files:
            try:
                st = (self.root / rel).stat()
                out.append((st.st_mtime_ns, st.st_ctime_ns, st.st_size))
            except OSError:
                out.append(None)
        return tuple(out)

    def close(self) -> None:
        with self._lock:
            if self._changes is not None:
                self._changes.stop()
                self._changes = None
            if self._search is not None:
                self._search.close()
                self._search = None

    def read_file(self, path: str) -> str:
        """A memory file's text for a resource (empty when the file does not exist)."""
        with self._lock:
            blob = self.backend.read(path)
        return blob.data.decode("utf-8", errors="replace") if blob else ""
