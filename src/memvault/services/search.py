"""`vault.search`: full-text search over every note in the vault, and over memory.

The index (`memvault.index`) is refreshed incrementally before each search, rebuilt
when damaged, and reads notes from a folder: the vault's own folder when the backend has
one on this machine (`capabilities.local_root`), else a copy of the store's notes kept in
the backend's cache folder (`capabilities.cache_dir`, `services/search_mirror.py`),
brought in step before each refresh and copied again only where a file's version
changed. Notices about rebuilding are collected in `notices` for the CLI to show.

This service never writes a note; the only files it writes are the index (and the copy).
"""

from __future__ import annotations

import sqlite3

from memvault.errors import InvalidInput, UsageError, VaultError
from memvault.state_paths import INDEX

TYPE_CHECKING = False  # this module is on the cold path of `memvault search --json`
if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path
    from typing import Any

    from memvault.index.query import Hit, MemoryHit
    from memvault.index.store import IndexStore, RefreshResult
    from memvault.services.doctor import Finding
    from memvault.services.search_mirror import NoteMirror
    from memvault.services.vault import Vault

if TYPE_CHECKING:
    Progress = Callable[[int, int], None]
MAX_LIMIT = 1000


class SearchService:
    def __init__(self, vault: Vault) -> None:
        self.vault = vault
        self._store: IndexStore | None = None
        self._mirror: NoteMirror | None = None
        self.last_refresh: RefreshResult | None = None
        import threading

        self._lock = threading.RLock()

    @property
    def notices(self) -> list[str]:
        return self._store.notices if self._store else []

    def _folder(self) -> Path | None:
        """The folder the index reads notes from (None: the backend offers none)."""
        caps = self.vault.backend.capabilities
        if caps.local_root is not None:
            return caps.local_root
        return caps.cache_dir / "mirror" if caps.cache_dir is not None else None

    def available(self) -> bool:
        """Whether this vault can be searched on this machine."""
        return self._folder() is not None

    def index_path(self) -> Path | None:
        """Where the index file is (or would be), without creating anything."""
        folder = self._folder()
        return folder / INDEX if folder is not None else None

    def store(self) -> IndexStore:
        if self._store is None:
            caps = self.vault.backend.capabilities
            root = self._folder()
            if root is None:
                raise InvalidInput(
                    "search needs the notes on this machine, and this vault's store "
                    f"({self.vault.backend.describe()}) keeps no copy of them here (its "
                    "cache is turned off); clone the repository and search the clone "
                    "with --vault PATH")
            from memvault.index.fresh import index_writable
            from memvault.index.store import IndexStore

            if caps.local_root is None and caps.cache_dir is not None:
                from memvault.services.search_mirror import NoteMirror

                self._mirror = NoteMirror(self.vault.backend, caps.cache_dir)
            if self._mirror is None and not index_writable(root):
                from memvault.index.read_only import ReadOnlyIndexStore

                self._store = ReadOnlyIndexStore(root, self.vault.config.home)
            else:
                self._store = IndexStore(root, self.vault.config.home)
        return self._store

    def _bring_copy(self, only: tuple[str, ...] | None = None) -> None:
        """Bring the copy of a remote store's notes in step (nothing on a local vault)."""
        self.store()
        if self._mirror is not None:
            self._mirror.sync(only)

    def discard(self, reason: str) -> None:
        """Delete the index (and a remote store's copy of the notes): a cache, rebuilt by
        the next search."""
        with self._lock:
            store = self.store()
            store.discard(reason)
            if self._mirror is not None:
                store.close()
                self._store = None
                self._mirror.clear()
                self._mirror = None

    def _guarded(self, action: Callable[[], Any]) -> Any:
        """Run `action`; if the index turns out to be damaged, rebuild it once and retry."""
        from memvault.index.store import IndexUnavailable, _is_transient

        store = self.store()
        for attempt in range(2):
            try:
                with self._lock:  # one connection: one thread at a time (MCP + watcher)
                    return action()
            except IndexUnavailable as exc:
                raise VaultError(str(exc), path=INDEX) from None
            except sqlite3.DatabaseError as exc:
                if _is_transient(exc) or attempt == 1:
                    raise VaultError(f"search index error: {exc}",
                                     path=INDEX) from None
                store.discard(f"it is damaged ({exc})")
        raise AssertionError("unreachable")

    def refresh(self, progress: Progress | None = None) -> RefreshResult:
        self._bring_copy()
        result: RefreshResult = self._guarded(lambda: self.store().refresh(progress))
        self.last_refresh = self._own(result)
        return result

    def refresh_paths(self, paths: set[str]) -> RefreshResult:
        """Bring only these vault-relative paths in step (a watcher reported them)."""
        self._bring_copy(tuple(paths))
        result: RefreshResult = self._guarded(lambda: self.store().refresh_paths(paths))
        self.last_refresh = result
        return result

    def rebuild(self, progress: Progress | None = None) -> RefreshResult:
        self._bring_copy()
        result: RefreshResult = self._guarded(lambda: self.store().rebuild(progress))
        self.last_refresh = self._own(result)
        return result

    def _own(self, result: RefreshResult) -> RefreshResult:
        """The result with only the unreadable files this principal may see."""
        can_see = self.vault.layout.can_see
        result.skipped = [(path, why) for path, why in result.skipped if can_see(path)]
        return result

    def status(self) -> dict[str, Any]:
        """What the index holds; unreadable files are listed only if this principal may
        see them."""
        info: dict[str, Any] = self._guarded(lambda: self.store().status())
        can_see = self.vault.layout.can_see
        info["skipped"] = [item for item in info.get("skipped", []) if can_see(item["path"])]
        return info

    def search(self, query: str, *, limit: int = 10, path_glob: str | None = None,
               tag: str | None = None, progress: Progress | None = None,
               refresh: bool = True) -> list[Hit]:
        """Notes matching `query` (refreshing the index first, unless the caller knows
        nothing changed since its last refresh: `refresh=False`)."""
        from memvault.index.query import search_notes

        check_note_search(query, limit, path_glob, tag)
        if refresh:
            self._bring_copy()

        def run() -> list[Hit]:
            store = self.store()
            if refresh:
                self.last_refresh = store.refresh(progress)
            return search_notes(store.connection(), query, limit=limit, path_glob=path_glob,
                                tag=tag, visible=self.vault.layout.can_see)

        hits: list[Hit] = self._guarded(run)
        return hits

    def notes_holding(self, texts: list[str]) -> list[str]:
        """The notes this principal can see that hold any of `texts` as a phrase (after
        bringing the index in step), sorted by path; memory files are not notes."""
        from memvault.index.query import notes_with_phrases

        self._bring_copy()

        def run() -> list[str]:
            store = self.store()
            self.last_refresh = store.refresh()
            return sorted(notes_with_phrases(store.connection(), texts,
                                             visible=self.vault.layout.can_see))

        paths: list[str] = self._guarded(run)
        return paths

    def search_memory(self, query: str, *, limit: int = 10,
                      progress: Progress | None = None, refresh: bool = True,
                      semantic: bool = True) -> list[MemoryHit]:
        """This principal's facts, lessons and proposals matching `query` (by words or id,
        ranked with meaning too), then those close in meaning (`match`: "meaning")."""
        from memvault.index.query import search_memory

        _check_limit(limit)
        _check_text(query, "the query")
        if not query.strip():
            raise UsageError("give something to search for")

        embedder = self.embedder() if semantic else None

        if refresh:
            self._bring_copy()

        def run() -> list[MemoryHit]:
            store = self.store()
            if refresh:
                self.last_refresh = store.refresh(progress)
            conn, scope = store.connection(), self.vault.layout.scope_name
            hits = search_memory(conn, query, scope, limit=max(limit, 50))
            if embedder is None or _looks_like_ids(query, hits):
                return hits[:limit]
            from memvault.embeddings.endpoint import EndpointFailed
            from memvault.index.recall import hybrid_memory_hits, memory_kinds
            from memvault.index.vectors import cosine_scores

            try:
                cosine = cosine_scores(store, embedder, query, scope, memory_kinds(conn, scope))
            except EndpointFailed as exc:
                store.notices.append(f"semantic recall skipped: {exc}")
                return hits[:limit]
            return hybrid_memory_hits(conn, hits, cosine, scope, limit)

        hits: list[MemoryHit] = self._guarded(run)
        return hits

    def memory_scores(self, request: str, *, kinds: tuple[str, ...] = ("fact", "lesson"),
                      semantic: bool = True) -> tuple[dict[str, float], Any]:
        """(lexical scores 0..1, cosine similarities) of this principal's records of
        `kinds` for `request`, after bringing only the memory files in step. The cosines
        are empty when semantic recall is off or its model is not installed."""
        from memvault.index.recall import lexical_scores

        embedder = self.embedder() if semantic else None
        self._bring_copy(tuple(self.vault.layout.memory_files))

        def run() -> tuple[dict[str, float], Any]:
            store = self.store()
            store.refresh_memory(self.vault.layout.memory_files)
            scope = self.vault.layout.scope_name
            lexical = lexical_scores(store.connection(), request, scope, kinds)
            if embedder is None:
                return lexical, {}
            from memvault.embeddings.endpoint import EndpointFailed
            from memvault.index.vectors import cosine_scores

            try:
                return lexical, cosine_scores(store, embedder, request, scope, kinds)
            except EndpointFailed as exc:  # recall stays lexical; say why
                store.notices.append(f"semantic recall skipped: {exc}")
                return lexical, {}

        scores: tuple[dict[str, float], Any] = self._guarded(run)
        return scores

    def prefetch_query(self, request: str) -> None:
        """Start embedding a request that is about to be ranked, when the model is already
        loaded in this process (a long-running server) and can work in the background;
        a cold command loads nothing early."""
        import sys

        if "numpy" not in sys.modules or not self.available():
            return
        try:
            embedder = self.embedder()
        except VaultError:
            return
        prefetch = getattr(embedder, "prefetch", None)
        if prefetch is not None:
            prefetch(request)

    def embed_memory(self) -> dict[str, Any]:
        """Embed every memory record that has no vector yet for the configured model, all
        at once (a ranking otherwise spreads a large memory's first embedding over its
        calls, `index.vectors.EMBED_BUDGET` seconds each). Returns {"model", "embedded",
        "texts", "seconds"}; model None when semantic recall is off."""
        import time

        embedder = self.embedder()
        if embedder is None:
            return {"model": None, "embedded": 0, "texts": 0, "seconds": 0.0}
        self._bring_copy(tuple(self.vault.layout.memory_files))
        started = time.perf_counter()

        def run() -> tuple[int, int]:
            from memvault.embeddings.endpoint import EndpointFailed
            from memvault.index.recall import memory_kinds
            from memvault.index.vectors import embed_all

            store = self.store()
            store.refresh_memory(self.vault.layout.memory_files)
            scope = self.vault.layout.scope_name
            try:
                return embed_all(store, embedder, scope, memory_kinds(store.connection(), scope))
            except EndpointFailed as exc:
                raise VaultError(f"the embeddings endpoint failed: {exc}") from None

        embedded, texts = self._guarded(run)
        return {"model": embedder.model_id, "embedded": embedded, "texts": texts,
                "seconds": round(time.perf_counter() - started, 2)}

    def embedder(self) -> Any:
        """The configured embedder (`[embeddings]`), or None: recall stays lexical (a
        notice says why when the built-in model could not be loaded)."""
        from memvault.embeddings.settings import embedder_for, missing_notice

        table = self.vault.config.section("embeddings")
        embedder = embedder_for(table)
        notice = missing_notice(table.get("kind", "builtin")) if embedder is None else None
        if notice:
            store = self.store()
            if notice not in store.notices:
                store.notices.append(notice)
        return embedder

    def close(self) -> None:
        with self._lock:
            if self._store is not None:
                self._store.close()


def _looks_like_ids(query: str, hits: list[MemoryHit]) -> bool:
    """The query is record ids (a lookup, not a question): meaning has nothing to add."""
    words = query.split()
    return bool(words) and all(any(h.id == w for h in hits) for w in words)


def check_note_search(query: str, limit: int, path_glob: str | None, tag: str | None) -> None:
    """Refuse a note search that asks for nothing, for too few or too many results, or
    for text that is not UTF-8."""
    _check_limit(limit)
    for value, what in ((query, "the query"), (path_glob, "--path"), (tag, "--tag")):
        if value is not None:
            _check_text(value, what)
    if not query.strip() and not (path_glob or tag):
        raise UsageError("give something to search for (or --tag / --path)")


def _check_text(value: str, what: str) -> None:
    """Refuse text holding bytes that were not UTF-8 (a terminal or script in another
    encoding, e.g. Latin-1: Python keeps such bytes as lone surrogates, which no index
    can store). The message names where, never the bytes themselves."""
    if value.isascii():
        return
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise UsageError(f"{what} is not valid UTF-8 text (an undecodable byte at character "
                         f"{exc.start + 1}); check the terminal's or script's encoding"
                         ) from None


def _check_limit(limit: int) -> None:
    if limit < 1 or limit > MAX_LIMIT:
        raise UsageError(f"--limit must be between 1 and {MAX_LIMIT}")


def unreadable_notes_check(vault: Vault) -> list[Finding]:
    """Doctor: Markdown files the index could not read (binary, not UTF-8, no access)."""
    from memvault.services.doctor import Finding

    if vault.backend.capabilities.local_root is None:
        return []  # a remote store's notes are not all downloaded just to check them
    try:
        vault.search.refresh()
        status = vault.search.status()
    except VaultError as exc:
        return [Finding("warning", INDEX, f"search index: {exc}")]
    return [Finding("warning", item["path"], f"not searchable: {item['problem']}")
            for item in status["skipped"]]
