"""Doctor's look at Obsidian's own settings (read through the backend, never written).

A settings file memvault reads (`core.obsidian_settings`) that is not valid JSON is
reported, since memvault then goes by its own rules. Obsidian's daily notes sharing the
folder of memvault's trade day notes is reported too: with the same name format the
day's note receives memvault's lines, with another format a day can have two notes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memvault.core.obsidian_settings import (
    DAILY_NOTES,
    TEMPLATER,
    TEMPLATES,
    TYPES,
    daily_notes_overlap,
    problems_in,
)
from memvault.errors import VaultError

if TYPE_CHECKING:
    from memvault.services.doctor import Finding
    from memvault.services.vault import Vault


def obsidian_settings_findings(vault: Vault) -> list[Finding]:
    from memvault.services.doctor import Finding

    found: list[Finding] = []
    read: dict[str, bytes | None] = {}
    for path in (TYPES, TEMPLATES, TEMPLATER, DAILY_NOTES):
        try:
            blob = vault.backend.read(path)
        except VaultError as exc:
            found.append(Finding("warning", path, f"cannot be read: {exc}"))
            blob = None
        read[path] = blob.data if blob is not None else None
        problem = problems_in(path, read[path])
        if problem:
            found.append(Finding("warning", path, problem))
    overlap = daily_notes_overlap(read[DAILY_NOTES], vault.layout.journal_dir)
    if overlap:
        found.append(Finding(overlap[0], vault.layout.journal_dir, overlap[1]))
    return found
