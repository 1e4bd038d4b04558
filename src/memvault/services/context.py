"""`vault.context`: gather facts, lessons and the policy, and build the context block.

The selection itself is the pure `memvault.core.context.select_context`; this service
only reads (Memory.md, Lessons.md, Policy.md, config, tombstones, the journal) and never
writes a note. Limits come only from the policy service (`vault.policy`, which
validates Policy.md), through `read_policy_limits`.

It stays fast at any memory size:

- parsed records are kept per file *content* (the backend's version of the bytes), so a
  long-running process (`memvault serve`) re-parses Memory.md only when its bytes
  change, and a hand edit is still seen on the next call;
- relevance to the request is measured only when not every record fits the budget
  (`vault.recall`, which reads the search index's memory records);
- tombstone keys are computed once per text, feedback ranks are read incrementally
  from the journal (`LifecycleService.ranks`).
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from memvault.core.context import (
    ContextBlock,
    ContextSettings,
    PolicyLimits,
    PreparedRecords,
    Relevance,
    prepare_records,
    select_context,
)
from memvault.core.records import FACT_CATEGORIES, LESSON_CATEGORIES, Fact

if TYPE_CHECKING:
    from memvault.services.search import SearchService
    from memvault.services.vault import Vault

_CACHE_LOCK = threading.Lock()
_PARSED: OrderedDict[tuple[str, str, str], list[Fact]] = OrderedDict()
_PREPARED: OrderedDict[tuple[str, str, str, frozenset[str]], PreparedRecords] = OrderedDict()
_CACHE_MAX = 8
_TOMBSTONE_KEYS: dict[tuple[str, str], tuple[str, ...]] = {}
_TOMBSTONE_KEYS_MAX = 100_000
CONFLICT_MARK = b"<<<<<<<"
"""Every open conflict block starts with a line holding this."""
LINE_OVERHEAD = 16
"""Characters a memory line adds to its text (`> - (id, category) `), at the least."""


class ContextService:
    def __init__(self, vault: Vault) -> None:
        self.vault = vault
        self._marked: dict[str, bool] = {}
        """Per bullet file: whether the bytes last read held a conflict marker."""

    def settings(self, budget: int | None = None) -> ContextSettings:
        settings = ContextSettings.from_section(self.vault.config.section("context"))
        if budget is not None:
            from dataclasses import replace

            from memvault.errors import UsageError

            if budget < 0:
                raise UsageError("--budget must be 0 or more characters")
            settings = replace(settings, budget=budget)
        return settings

    def _records(self, path: str, known: tuple[str, ...]) -> tuple[str, list[Fact]]:
        """(content version, records) of one bullet file, parsed once per content."""
        blob = self.vault.backend.read(path)
        if blob is None:
            self._marked[path] = False
            return "", []
        self._marked[path] = CONFLICT_MARK in blob.data
        from memvault.services.tidy import read_view

        # As a merge should have left it: a forgotten record never served, an open
        # conflict block read as this clone's version only.
        data = read_view(self.vault.backend, path, blob.data)
        version = str(blob.version) if data is blob.data else \
            "view:" + hashlib.sha1(data).hexdigest()
        key = (str(self.vault.root), path, version)
        with _CACHE_LOCK:
            hit = _PARSED.get(key)
            if hit is not None:
                _PARSED.move_to_end(key)
                return key[2], hit
        from memvault.core.bullets import parse_bullets
        from memvault.core.records import fact_from_item

        records = [fact_from_item(it, known) for it in parse_bullets(data).items]
        _remember(_PARSED, key, records)
        return key[2], records

    def facts(self) -> list[Fact]:
        return self._records(self.vault.layout.memory, FACT_CATEGORIES)[1]

    def lessons(self) -> list[Fact]:
        return self._records(self.vault.layout.lessons, LESSON_CATEGORIES)[1]

    def prepared(self) -> PreparedRecords:
        """Facts and lessons classified and in standing order, kept per content."""
        fact_version, facts = self._records(self.vault.layout.memory, FACT_CATEGORIES)
        lesson_version, lessons = self._records(self.vault.layout.lessons, LESSON_CATEGORIES)
        forgotten = frozenset(self.forgotten_ids(facts + lessons))
        key = (str(self.vault.root), fact_version, lesson_version, forgotten)
        with _CACHE_LOCK:
            hit = _PREPARED.get(key)
        if hit is None:
            hit = prepare_records(facts, lessons, forgotten)
            _remember(_PREPARED, key, hit)
        return hit

    def forgotten_ids(self, records: list[Fact]) -> set[str]:
        """Records whose text is tombstoned (e.g. synced back from another machine)."""
        salt = self.vault.config.tombstone_salt
        if not salt:
            return set()  # no salt: nothing was ever tombstoned (and reading never writes)
        keys = self.vault.tombstones.active_keys()
        if not keys:
            return set()
        keys_for = self.vault.tombstones.keys_for
        out = set()
        with _CACHE_LOCK:
            if len(_TOMBSTONE_KEYS) > _TOMBSTONE_KEYS_MAX:
                _TOMBSTONE_KEYS.clear()
            for r in records:
                k = _TOMBSTONE_KEYS.get((salt, r.text))
                if k is None:
                    k = _TOMBSTONE_KEYS[(salt, r.text)] = keys_for(r.text)
                if any(key in keys for key in k):
                    out.add(r.id)
        return out

    def build(self, request: str = "", *, budget: int | None = None,
              no_personal: bool = False, manifest_offset: int = 0,
              search: SearchService | None = None) -> ContextBlock:
        """The block for this request. `search` is a long-lived search service to read
        relevance through (the MCP server keeps one); by default the vault's own."""
        settings = self.settings(budget)
        policy = read_policy_limits(self.vault)
        personal = self.vault.config.retrieval and not no_personal
        prepared = self.prepared() if personal else PreparedRecords()
        ranked = personal and bool(request.strip()) and not _all_fit(prepared, settings)
        if ranked:
            (search or self.vault.search).prefetch_query(request)
        feedback = self.feedback() if personal else {}
        relevance: dict[str, Relevance] = {}
        if ranked:
            relevance = self.vault.recall.relevance(request, search=search)
        block = select_context((), (), request=request, policy=policy, settings=settings,
                               no_personal=no_personal, retrieval=self.vault.config.retrieval,
                               feedback=feedback, relevance=relevance,
                               manifest_offset=manifest_offset, prepared=prepared,
                               trading=policy.exists or self.has_trades())
        if personal:
            block.warnings = self.conflict_warnings(just_read=True)
        return block

    def conflict_warnings(self, *, just_read: bool = False) -> list[str]:
        """One line per memory file with a merge conflict still open. `just_read`: the
        files were read a moment ago (`prepared`), so one whose bytes held no conflict
        marker is not read again."""
        from memvault.services.tidy import open_blocks

        out = []
        for path in (self.vault.layout.memory, self.vault.layout.lessons):
            if just_read and not self._marked.get(path, True):
                continue  # just read without a conflict marker: no block to report
            blocks = open_blocks(self.vault.backend, path)
            if blocks:
                facts = ", ".join(i for b in blocks for i in b.fact_ids()) or "notes"
                out.append(f"{path} has {len(blocks)} unresolved merge conflict(s) ({facts}); "
                           "this clone's version is shown: run `memvault resolve`")
        return out

    def has_trades(self) -> bool:
        """Whether this principal has recorded trades (its Trades/ folder has a note)."""
        return bool(self.vault.backend.list(self.vault.layout.trades_dir))

    def feedback(self) -> dict[str, float]:
        """The application-feedback rank signal per record id (from the journal)."""
        return self.vault.lifecycle.ranks()


def _all_fit(prepared: PreparedRecords, settings: ContextSettings) -> bool:
    """True when every record would be shown whatever the request, so relevance cannot
    change the selection."""
    if len(prepared.preferences) > settings.max_preferences or \
            len(prepared.lessons) > min(settings.lesson_pool, settings.max_lessons):
        return False
    total = 0
    for r in (*prepared.general, *prepared.preferences, *prepared.lessons):
        total += len(r.text) + len(r.id) + len(r.category_raw or r.category) + LINE_OVERHEAD
        if total > settings.budget:
            return False
    return True


def _remember(cache: OrderedDict[Any, Any], key: Any, value: Any) -> None:
    with _CACHE_LOCK:
        cache[key] = value
        cache.move_to_end(key)
        while len(cache) > _CACHE_MAX:
            cache.popitem(last=False)


def read_policy_limits(vault: Vault) -> PolicyLimits:
    """The policy limits, or why there are none, from the policy service (which
    validates Policy.md). Reads only; an invalid policy is reported, never guessed."""
    from memvault.errors import VaultError

    path = vault.layout.policy
    try:
        view = vault.policy.limits_for_context()
    except VaultError as exc:
        return PolicyLimits(path, True, None, str(exc).removeprefix(path + ": "))
    if not view.exists:
        return PolicyLimits(path, False)
    if not view.valid:
        reason = (view.reason or "invalid").removeprefix(path + ": ")
        return PolicyLimits(path, True, None, reason)
    return PolicyLimits(path, True, dict(view.limits))
