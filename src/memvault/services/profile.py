"""Profile.md: who the user is (typed frontmatter properties) plus their own prose.

Known properties: `name`, `timezone` (an IANA name such as Europe/Lisbon; trade dates
follow it, UTC when unset), `language`, `answer_style`. Any other property is kept and
shown as written. `set` changes only that property's lines (never the prose, comments
or other keys), writing a value of the type the vault gives that property in
`.obsidian/types.json` when it gives one (see `core.obsidian_settings`). This service
never touches Policy.md.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from memvault.core.obsidian_settings import (
    PROPERTY_TYPES,
    TYPES,
    parse_list_value,
    property_types,
    typed_value,
)
from memvault.errors import InvalidInput, VaultError
from memvault.services.one_commit import one_commit
from memvault.services.properties import load_properties, set_note_property

if TYPE_CHECKING:
    from memvault.services.vault import Vault

KNOWN_KEYS = {
    "name": "What the assistant calls the user.",
    "timezone": "IANA time zone (e.g. Europe/Lisbon); journal dates follow it. UTC if unset.",
    "language": "Language answers are written in (e.g. en, pt-PT).",
    "answer_style": "How the user likes answers (e.g. concise, detailed).",
}


def check_timezone(name: str) -> _dt.tzinfo:
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    if name.strip().upper() in ("UTC", "Z", "GMT", "ETC/UTC"):
        return _dt.UTC
    try:
        return ZoneInfo(name.strip())
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise InvalidInput(f"timezone {name!r} is not a known time zone "
                           "(use an IANA name such as Europe/Lisbon)") from None


@dataclass(slots=True)
class ProfileView:
    """Profile.md as callers see it: its properties with their lines, the prose, and why
    memvault may not edit it (None when it may)."""

    path: str
    exists: bool
    properties: dict[str, Any]
    lines: dict[str, int | None]
    readonly_reason: str | None
    prose: str

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "exists": self.exists, "properties": self.properties,
                "lines": self.lines, "readonly_reason": self.readonly_reason,
                "prose": self.prose}


class ProfileService:
    def __init__(self, vault: Vault) -> None:
        self.vault = vault
        self.backend = vault.backend
        self.path = vault.layout.profile

    def _template(self) -> bytes:
        from memvault.services.setup import template_text

        return template_text("Profile.md")

    def show(self) -> ProfileView:
        loaded = load_properties(self.backend, self.path)
        fm = loaded.fm
        props = {str(k): v for k, v in fm.values.items()}
        return ProfileView(self.path, loaded.exists, props, {k: fm.line_of(k) for k in props},
                           fm.readonly_reason, fm.body_text() if loaded.exists else "")

    def get(self, key: str) -> Any:
        return load_properties(self.backend, self.path).fm.get(key)

    def timezone(self) -> _dt.tzinfo:
        """The user's time zone (UTC when unset); an unknown name, or properties that
        cannot be read (invalid YAML, over the YAML limits), is an error."""
        fm = load_properties(self.backend, self.path).fm
        if fm.load_error:  # fail closed: never date a trade in a guessed time zone
            raise InvalidInput(f"cannot read the time zone: {fm.load_error}", path=self.path)
        value = fm.get("timezone")
        if not isinstance(value, str) or not value.strip():
            return _dt.UTC
        try:
            return check_timezone(value)
        except InvalidInput as exc:
            line = fm.line_of("timezone")
            raise InvalidInput(f"{exc} (line {line})", path=self.path) from None

    def vault_type(self, key: str) -> str | None:
        """The type `.obsidian/types.json` gives property `key` (None when unset)."""
        try:
            blob = self.backend.read(TYPES)
        except VaultError:  # unreadable settings: memvault's own rules apply
            return None
        return property_types(blob.data if blob else None).get(key.strip().casefold())

    @one_commit("memvault: profile set")
    def set(self, key: str, value: str) -> Any:
        """Set one property from command-line text; returns the value written."""
        key = key.strip()
        loaded = load_properties(self.backend, self.path)
        entry = loaded.fm.entry(key)
        current = loaded.fm.get(key)
        typed: Any
        kind = self.vault_type(key)
        if value.strip() == "":
            typed = None
        elif kind in PROPERTY_TYPES:
            try:
                typed = typed_value(kind, key, value)
            except InvalidInput as exc:
                raise InvalidInput(f"{exc}; nothing was changed", path=self.path) from None
        elif isinstance(current, list) or (entry is not None and entry.style in
                                           ("flow", "block")):
            typed = parse_list_value(value)
        else:
            typed = value
        if key.casefold() == "timezone" and typed:
            try:
                check_timezone(str(typed))
            except InvalidInput as exc:
                raise InvalidInput(f"{exc}; nothing was changed", path=self.path) from None
            typed = str(typed).strip()
        set_note_property(self.backend, self.path, entry.key if entry else key, typed,
                          initial=self._template(), message=f"memvault: profile {key}")
        self.vault.events.append("profile.set", key=key)
        return typed
