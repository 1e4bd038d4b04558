"""Records: the typed view of a memory bullet, and the category vocabulary."""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from typing import Any

from memvault.core.bullets import BulletItem

GENERAL_CATEGORIES = ("identity", "preference", "project", "instruction", "other")
PREFERENCE_CATEGORIES = ("communication", "presentation", "workflow", "research")
FACT_CATEGORIES = GENERAL_CATEGORIES + PREFERENCE_CATEGORIES
GENERAL_LESSON_CATEGORIES = ("response-detail", "evidence-layout", "comparison-emphasis")
TRADING_LESSON_CATEGORIES = ("approval-explanations", "risk-posture")
"""Lesson categories only a vault that uses trading offers (see `Vault.uses_trading`)."""
LESSON_CATEGORIES = GENERAL_LESSON_CATEGORIES + TRADING_LESSON_CATEGORIES


def parse_timestamp(raw: str | None) -> int | None:
    """Read an `updated:` value: Unix seconds, milliseconds, or an ISO date. Else None."""
    if not raw:
        return None
    if raw.isdigit():
        value = int(raw)
        return value // 1000 if value > 100_000_000_000 else value
    try:
        parsed = _dt.datetime.fromisoformat(raw)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=_dt.timezone.utc)
    return int(parsed.timestamp())


@dataclass(slots=True)
class Fact:
    """One accepted fact from Memory.md (or a lesson / proposal: same grammar).

    `category` is the lower-cased category, `other` when missing; an unknown category
    keeps its spelling in `category_raw` and is flagged by `known_category`.
    """

    id: str
    text: str
    category: str
    category_raw: str | None
    updated: int | None
    line: int
    meta: dict[str, str] = field(default_factory=dict)
    provisional: bool = False
    readonly_reason: str | None = None
    task: str | None = None
    known_category: bool = True

    @property
    def authority(self) -> str:
        return "inferred" if self.meta.get("auth") == "inferred" else "explicit"

    @property
    def status(self) -> str:
        return self.meta.get("status", "proven" if self.authority == "explicit" else "trial")

    @property
    def editable(self) -> bool:
        return self.readonly_reason is None

    @property
    def kind(self) -> str:
        """For Inbox.md proposals: "fact" or "lesson"."""
        return self.meta.get("kind", "fact")

    @property
    def evidence(self) -> list[str]:
        """For lessons: the experience ids (event ids, trade hashes) it rests on."""
        raw = self.meta.get("evidence", "")
        return [e for e in raw.split(",") if e]

    @property
    def ticked(self) -> bool:
        """For Inbox.md proposals: the task box is ticked (accepted in Obsidian)."""
        return self.task in ("x", "X")

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "text": self.text,
            "category": self.category,
            "category_as_written": self.category_raw,
            "updated": self.updated,
            "line": self.line,
            "authority": self.authority,
            "status": self.status,
            "provisional_id": self.provisional,
            "read_only": self.readonly_reason,
            "meta": dict(self.meta),
            **({"kind": self.kind, "evidence": self.evidence, "ticked": self.ticked}
               if self.task is not None else {}),
        }


def fact_from_item(item: BulletItem, known: tuple[str, ...] = FACT_CATEGORIES) -> Fact:
    raw = item.category_raw
    lowered = raw.lower() if raw else "other"
    is_known = lowered in known
    return Fact(
        id=item.id,
        text=item.text,
        category=lowered if is_known else "other",
        category_raw=raw,
        updated=parse_timestamp(item.meta.get("updated")),
        line=item.line_no,
        meta=item.meta,
        provisional=item.provisional,
        readonly_reason=item.readonly_reason,
        task=item.task,
        known_category=is_known,
    )


def check_category(category: str, known: tuple[str, ...] = FACT_CATEGORIES) -> str:
    """Validate a category given on the command line (case-insensitive)."""
    from memvault.errors import InvalidInput

    lowered = category.strip().lower()
    if lowered not in known:
        raise InvalidInput(f"unknown category {category!r}; use one of: {', '.join(known)}")
    return lowered


def check_record_text(text: str) -> str:
    """Validate text about to be written as a bullet; returns it with edges trimmed."""
    from memvault.errors import InvalidInput

    cleaned = text.strip()
    if not cleaned:
        raise InvalidInput("the text is empty")
    if "\n" in cleaned or "\r" in cleaned:
        raise InvalidInput("a fact is one line: the text contains a line break")
    if "<!--" in cleaned or "-->" in cleaned:
        raise InvalidInput("the text may not contain an HTML comment marker (<!-- or -->)")
    if "%%" in cleaned:
        raise InvalidInput("the text may not contain '%%' (an Obsidian comment marker)")
    if "\x00" in cleaned:
        raise InvalidInput("the text contains a NUL byte")
    try:
        cleaned.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidInput("the text is not valid UTF-8") from exc
    if len(cleaned) >= 3 and cleaned[0] == "[" and cleaned[2] == "]" and (
            len(cleaned) == 3 or cleaned[3] in " \t"):
        raise InvalidInput("the text may not start with a task box like '[x] '")
    return cleaned
