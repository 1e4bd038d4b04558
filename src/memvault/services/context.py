"""`vault.context`: gather facts, lessons and the policy, and build the context block.

The selection itself is the pure `memvault.core.context.select_context`; this service
only reads (Memory.md, Lessons.md, Policy.md, config, tombstones) and never writes a
file. Limits come only from the policy service (`vault.policy`, which validates
Policy.md), through `read_policy_limits`; lessons from the lessons service.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memvault.core.context import ContextBlock, ContextSettings, PolicyLimits, select_context
from memvault.core.records import Fact

if TYPE_CHECKING:
    from memvault.services.vault import Vault


class ContextService:
    def __init__(self, vault: Vault) -> None:
        self.vault = vault

    def settings(self, budget: int | None = None) -> ContextSettings:
        settings = ContextSettings.from_section(self.vault.config.section("context"))
        if budget is not None:
            from dataclasses import replace

            from memvault.errors import UsageError

            if budget < 0:
                raise UsageError("--budget must be 0 or more characters")
            settings = replace(settings, budget=budget)
        return settings

    def facts(self) -> list[Fact]:
        return self.vault.memory.all()

    def lessons(self) -> list[Fact]:
        """Lessons.md's records, read by the lessons service."""
        return list(self.vault.lessons.list())

    def forgotten_ids(self, records: list[Fact]) -> set[str]:
        """Records whose text is tombstoned (e.g. synced back from another machine)."""
        if not self.vault.config.tombstone_salt:
            return set()  # no salt: nothing was ever tombstoned (and reading never writes)
        keys = self.vault.tombstones.active_keys()
        if not keys:
            return set()
        return {r.id for r in records if self.vault.tombstones.key_for(r.text) in keys}

    def build(self, request: str = "", *, budget: int | None = None,
              no_personal: bool = False) -> ContextBlock:
        settings = self.settings(budget)
        policy = read_policy_limits(self.vault)
        personal = self.vault.config.retrieval and not no_personal
        facts = self.facts() if personal else []
        lessons = self.lessons() if personal else []
        forgotten = self.forgotten_ids(facts + lessons) if personal else set()
        feedback = self.feedback() if personal else {}
        return select_context(facts, lessons, request=request, policy=policy,
                              settings=settings, no_personal=no_personal,
                              retrieval=self.vault.config.retrieval,
                              forgotten_ids=forgotten, feedback=feedback,
                              trading=policy.exists or self.has_trades())

    def has_trades(self) -> bool:
        """Whether this principal has recorded trades (its Trades/ folder has a note)."""
        return bool(self.vault.backend.list(self.vault.layout.trades_dir))

    def feedback(self) -> dict[str, float]:
        """The application-feedback rank signal per record id (from the journal)."""
        return self.vault.lifecycle.ranks()


def read_policy_limits(vault: Vault) -> PolicyLimits:
    """The policy limits, or why there are none, from the policy service (which
    validates Policy.md). Reads only; an invalid policy is reported, never guessed."""
    from memvault.errors import VaultError

    path = vault.layout.policy
    try:
        data = vault.policy.limits_for_context()
    except VaultError as exc:
        return PolicyLimits(path, True, None, str(exc).removeprefix(path + ": "))
    if not data.get("exists", True):
        return PolicyLimits(path, False)
    if not data.get("valid"):
        reason = str(data.get("reason") or "invalid").removeprefix(path + ": ")
        return PolicyLimits(path, True, None, reason)
    return PolicyLimits(path, True, dict(data.get("limits") or {}))
