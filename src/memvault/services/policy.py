"""Policy.md: the user's hard limits, read and validated; `set` is its one writer.

- `load()` returns the validated `Policy` or raises InvalidInput naming the file, key,
  value, reason and line (commands that need the policy fail closed on it).
- `check()` lists every problem of a hand edit; `show()` the values and their lines.
- `set(key, text)` validates the value *and the resulting file* before writing; an
  invalid value is refused and the file is left byte for byte as it was.
- `limits_for_context()` is what the context builder shows as authoritative limits.

The hard line: nothing else in memvault writes Policy.md. Memory, proposals, lessons,
inference, import, MCP and trade recording have no code path to it (a test runs every
write command and compares the file's bytes). pydantic is imported lazily.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from memvault.errors import InvalidInput, ReadOnly
from memvault.services.one_commit import one_commit
from memvault.services.properties import load_properties

if TYPE_CHECKING:
    from memvault.core.policy import Policy, PolicyIssue
    from memvault.services.properties import LoadedNote
    from memvault.services.vault import Vault


@dataclass(slots=True)
class PolicyState:
    """What Policy.md says right now: the model when valid, else the issues."""

    path: str
    exists: bool
    policy: Policy | None
    issues: list[PolicyIssue] = field(default_factory=list)
    lines: dict[str, int | None] = field(default_factory=dict)

    @property
    def valid(self) -> bool:
        return self.policy is not None and not self.issues

    def error(self) -> InvalidInput:
        return InvalidInput("; ".join(str(i) for i in self.issues), path=self.path)

    def limits(self) -> dict[str, Any]:
        if self.policy is None:
            return {}
        return {k: _jsonable(v) for k, v in self.policy.model_dump().items() if v is not None}


@dataclass(slots=True)
class PolicyView:
    """Policy.md as callers see it: `valid`, `exists`, the vault-relative `path`, the
    `limits` in effect (empty unless valid), the line of each, and the `reason` it is
    invalid (None when valid)."""

    valid: bool
    exists: bool
    path: str
    limits: dict[str, Any]
    lines: dict[str, int | None]
    reason: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"valid": self.valid, "exists": self.exists, "path": self.path,
                "limits": self.limits, "lines": self.lines, "reason": self.reason}


def _jsonable(value: Any) -> Any:
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    return value


class PolicyService:
    def __init__(self, vault: Vault) -> None:
        self.vault = vault
        self.backend = vault.backend
        self.path = vault.layout.policy

    # -- reading -----------------------------------------------------------------------

    def state(self) -> PolicyState:
        loaded = load_properties(self.backend, self.path)
        if not loaded.exists:
            from memvault.core.policy import Policy

            return PolicyState(self.path, False, Policy())
        return self._validated(loaded)

    def _validated(self, loaded: LoadedNote) -> PolicyState:
        from memvault.core.policy import PolicyIssue, validate_policy

        fm = loaded.fm
        if loaded.linked_to is not None:
            # The limits must live in this file itself: through a link, whatever memvault
            # or an agent writes to the target would change them.
            return PolicyState(self.path, True, None, [PolicyIssue(
                None, None, f"is a symlink (it leads to {loaded.linked_to}); the policy must "
                "be a regular file in its own place", None)])
        lines = {str(k): fm.line_of(str(k)) for k in fm.values}
        if fm.readonly_reason:
            return PolicyState(self.path, True, None,
                               [PolicyIssue(None, None, fm.readonly_reason, None)], lines)
        policy, issues = validate_policy(fm.values, lines)
        return PolicyState(self.path, True, policy, issues, lines)

    def load(self) -> Policy | None:
        """The validated policy; None when there is no Policy.md; invalid -> InvalidInput
        (`Pilot/Policy.md: max_trade_usd must be ≥ 0, got '-5' (line 3)`)."""
        st = self.state()
        if not st.valid:
            raise st.error()
        return st.policy if st.exists else None

    def check(self) -> PolicyState:
        return self.state()

    def limits_for_context(self) -> PolicyView:
        """The limits in effect, for the context block, MCP and Python callers.

        When invalid, `limits` is empty and `reason` says why: the caller must show the
        policy as unavailable (fail closed), never guess limits.
        """
        loaded = load_properties(self.backend, self.path)
        if not loaded.exists:  # no limits recorded: nothing to validate (no pydantic import)
            return PolicyView(True, False, self.path, {}, {}, None)
        st = self._validated(loaded)
        return PolicyView(st.valid, st.exists, self.path,
                          st.limits() if st.valid else {},
                          dict(st.lines) if st.valid else {},
                          None if st.valid else str(st.error()))

    # -- the one writer ----------------------------------------------------------------

    @one_commit("memvault: policy set")
    def set(self, key: str, text: str) -> Policy:
        """Set one limit from command-line text; refused (file unchanged) when invalid."""
        from memvault.core.frontmatter import parse_frontmatter, set_property
        from memvault.core.policy import FIELD_KINDS, parse_policy_value, shown, validate_policy

        name = key.strip().casefold()
        if name not in FIELD_KINDS:
            import difflib

            near = difflib.get_close_matches(name, list(FIELD_KINDS), n=1)
            hint = f" (did you mean {near[0]}?)" if near else ""
            raise InvalidInput(f"{key!r} is not a policy key{hint}; keys: "
                               + ", ".join(FIELD_KINDS), path=self.path)
        try:
            value = parse_policy_value(name, text)
        except ValueError as exc:
            raise InvalidInput(f"{name} {exc}, got {shown(text)}; nothing was changed",
                               path=self.path) from None
        from memvault.backends.base import MISSING, Expected, policy_writer

        with self.backend.lock():
            from memvault.services.settle import read_settled_file

            blob = read_settled_file(self.backend, self.path)  # not a save in progress
            if blob is None:
                from memvault.services.setup import template_text

                expected: Expected = MISSING
                data = template_text("Policy.md")
            else:
                data, expected = blob.data, blob.version
            fm = parse_frontmatter(data)
            if fm.readonly_reason:
                raise ReadOnly(f"cannot edit: {fm.readonly_reason}; fix the file by hand "
                               "(`memvault policy check`)", path=self.path)
            entry = fm.entry(name)
            new = set_property(fm, entry.key if entry else name, value)
            after = parse_frontmatter(new)
            lines = {str(k): after.line_of(str(k)) for k in after.values}
            policy, issues = validate_policy(after.values, lines)
            if after.readonly_reason or policy is None:
                why = after.readonly_reason or "; ".join(str(i) for i in issues)
                raise InvalidInput(f"refused: {why}; nothing was changed", path=self.path)
            with policy_writer():  # the one writer of Policy.md, on the user's command
                self.backend.write(self.path, new, expected=expected,
                                   message=f"memvault: policy set {name}")
        self.vault.events.append("policy.set", key=name)
        return policy


def notes_doctor_findings(vault: Vault) -> list[Any]:
    """Doctor findings for Policy.md (invalid: error) and Profile.md (read-only
    properties: warning; unknown time zone: error). Reads only."""
    from memvault.services.doctor import Finding

    out: list[Any] = []
    st = vault.policy.state()
    for issue in st.issues:
        out.append(Finding("error", st.path, f"{issue}; commands that need the policy fail "
                           "closed until it is fixed (`memvault policy check`)"))
    loaded = load_properties(vault.backend, vault.layout.profile)
    if loaded.exists and loaded.fm.load_error:
        out.append(Finding("error", vault.layout.profile,
                           f"properties cannot be read: {loaded.fm.load_error}; trade "
                           "recording and journal dates refuse until it is fixed"))
    elif loaded.exists and loaded.fm.readonly_reason:
        out.append(Finding("warning", vault.layout.profile,
                           f"properties are read-only: {loaded.fm.readonly_reason}"))
    else:
        try:
            vault.profile.timezone()
        except InvalidInput as exc:
            out.append(Finding("error", vault.layout.profile,
                               str(exc).removeprefix(f"{vault.layout.profile}: ")))
    return out
