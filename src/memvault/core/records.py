"""Records: the typed view of a memory bullet, the category vocabulary, the rules for
new record text, and the keys by which two texts are "the same".

`check_record_text` is the one rule every entry point applies to text about to become a
fact, lesson or proposal (CLI, MCP, Python API, import, extraction). `match_key` is the
comparison form used to find duplicates and tombstoned texts; `tombstone_forms` every
form a forgotten text may be remembered under (hosted mode hashes these), and
`tombstone_keys` the vault's content-free keys made from them.
"""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, TypeVar

from memvault.core.bullets import BulletItem, normalise_text
from memvault.core.invisible import strip_invisible

GENERAL_CATEGORIES = ("identity", "preference", "project", "instruction", "other")
PREFERENCE_CATEGORIES = ("communication", "presentation", "workflow", "research")
FACT_CATEGORIES = GENERAL_CATEGORIES + PREFERENCE_CATEGORIES
GENERAL_LESSON_CATEGORIES = ("response-detail", "evidence-layout", "comparison-emphasis")
TRADING_LESSON_CATEGORIES = ("approval-explanations", "risk-posture")
"""Lesson categories only a vault that uses trading offers (see `Vault.uses_trading`)."""
LESSON_CATEGORIES = GENERAL_LESSON_CATEGORIES + TRADING_LESSON_CATEGORIES
INBOX_CATEGORIES = FACT_CATEGORIES + LESSON_CATEGORIES
"""A proposal may be for a fact or a lesson, so the inbox knows both vocabularies."""

Authority = Literal["explicit", "inferred"]


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
        parsed = parsed.replace(tzinfo=_dt.UTC)
    return int(parsed.timestamp())


@dataclass(slots=True)
class Record:
    """One record of a bullet file: the fields every kind shares.

    `category` is the lower-cased category, `other` when missing; an unknown category
    keeps its spelling in `category_raw` and is flagged by `known_category`. The kind of
    record (see `memvault.core.kinds`) is the subclass: `Fact`, `Lesson` or `Proposal`.
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

    record_kind: ClassVar[str] = "record"
    """The name of this record's kind in `memvault.core.kinds` (fact, lesson, proposal)."""

    @property
    def authority(self) -> Authority:
        return "inferred" if self.meta.get("auth") == "inferred" else "explicit"

    @property
    def status(self) -> str:
        return self.meta.get("status", "proven" if self.authority == "explicit" else "trial")

    @property
    def editable(self) -> bool:
        return self.readonly_reason is None

    def to_dict(self) -> dict[str, Any]:
        inferred = self.meta.get("auth") == "inferred"
        return {
            "id": self.id,
            "text": self.text,
            "category": self.category,
            "category_as_written": self.category_raw,
            "updated": self.updated,
            "line": self.line,
            "authority": "inferred" if inferred else "explicit",
            "status": self.meta.get("status", "trial" if inferred else "proven"),
            "provisional_id": self.provisional,
            "read_only": self.readonly_reason,
            "meta": dict(self.meta),
            # a task box (an inbox line, or one typed into any bullet file) shows what
            # accepting it would make, its evidence and whether it is ticked
            **({"kind": self.meta.get("kind", "fact"), "evidence": _evidence(self.meta),
                "ticked": self.task in ("x", "X")} if self.task is not None else {}),
        }


def _evidence(meta: dict[str, str]) -> list[str]:
    return [e for e in meta.get("evidence", "").split(",") if e]


@dataclass(slots=True)
class Fact(Record):
    """An accepted fact about the user (Memory.md)."""

    record_kind: ClassVar[str] = "fact"


@dataclass(slots=True)
class Lesson(Record):
    """An accepted lesson on how to work with the user (Lessons.md)."""

    record_kind: ClassVar[str] = "lesson"

    @property
    def evidence(self) -> list[str]:
        """The experience ids (event ids, trade hashes) the lesson rests on."""
        return _evidence(self.meta)


@dataclass(slots=True)
class Proposal(Record):
    """A proposal waiting for the user's review (Inbox.md)."""

    record_kind: ClassVar[str] = "proposal"

    @property
    def kind(self) -> str:
        """The kind of record accepting it makes: "fact" or "lesson"."""
        return self.meta.get("kind", "fact")

    @property
    def evidence(self) -> list[str]:
        """For a proposed lesson: the experience ids it rests on."""
        return _evidence(self.meta)

    @property
    def ticked(self) -> bool:
        """The task box is ticked (accepted in Obsidian)."""
        return self.task in ("x", "X")



R = TypeVar("R", bound=Record)


def record_from_item(item: BulletItem, record_type: type[R],
                     known: tuple[str, ...]) -> R:
    """The typed record for one parsed bullet (`known`: the categories of its kind)."""
    raw = item.category_raw
    lowered = raw.lower() if raw else "other"
    is_known = lowered in known
    # Positional, in field order (keywords cost noticeably at 10,000 records); the
    # fields: id, text, category, category_raw, updated, line, meta, provisional,
    # readonly_reason, task, known_category.
    return record_type(item.id, item.text, lowered if is_known else "other", raw,
                       parse_timestamp(item.meta.get("updated")), item.start + 1, item.meta,
                       item.provisional, item.readonly_reason, item.task, is_known)


def fact_from_item(item: BulletItem, known: tuple[str, ...] = FACT_CATEGORIES) -> Fact:
    return record_from_item(item, Fact, known)


def check_category(category: str, known: tuple[str, ...] = FACT_CATEGORIES) -> str:
    """Validate a category given on the command line (case-insensitive)."""
    from memvault.errors import BadInput

    lowered = category.strip().lower()
    if lowered not in known:
        raise BadInput(f"unknown category {category!r}; use one of: {', '.join(known)}")
    return lowered


MAX_TEXT_CHARS = 2000
"""The longest fact, lesson or proposal text, in characters (a paragraph; longer text
belongs in a note)."""

# Markdown that would turn the bullet memvault writes (`- TEXT [category] <!-- … -->`)
# into something else: a nested list, a task, a heading, a quote or callout, a code
# block, a rule, or a link definition that hides the text.
_STRUCTURE = (
    (re.compile(r"\[.\](?:[ \t]|\Z)"), "a task box like '[ ] ' or '[x] '"),
    (re.compile(r"[-*+](?:[ \t]|\Z)"), "a list marker like '- '"),
    (re.compile(r"\d{1,9}[.)](?:[ \t]|\Z)"), "a numbered list marker like '1. '"),
    (re.compile(r"#{1,6}(?:[ \t]|\Z)"), "a heading marker like '# '"),
    (re.compile(r">"), "a quote or callout marker '>'"),
    (re.compile(r"(?:`{3,}|~{3,})"), "a code fence"),
    (re.compile(r"([-*_])(?:[ \t]*\1){2,}[ \t]*\Z"), "a horizontal rule"),
    (re.compile(r"\[[^\]]+\]:(?:[ \t]|\Z)"), "a link or footnote definition like '[x]: '"),
)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_SELECTORS = re.compile(r"[\ufe00-\ufe0f]")


def markdown_structure(text: str) -> str | None:
    """What Markdown structure `text` starts with, or None (see `_STRUCTURE`)."""
    for pattern, what in _STRUCTURE:
        if pattern.match(text):
            return what
    return None


def check_record_text(text: str) -> str:
    """Validate text about to be written as a bullet; returns it with edges trimmed.

    The one rule for every entry point: one line of at most `MAX_TEXT_CHARS`
    characters, valid UTF-8, no control characters, no comment markers (`<!--`, `-->`,
    `%%`) and no Markdown structure at its start (a list marker, task box, heading,
    quote, code fence, rule or link definition), so the line memvault writes is always
    exactly one fact.
    """
    from memvault.errors import BadInput

    if len(text) > 4 * MAX_TEXT_CHARS:  # decided before any scan of a huge input
        raise BadInput(f"the text is {len(text):,} characters; a fact or proposal is at "
                       f"most {MAX_TEXT_CHARS:,} (keep longer text in a note)")
    cleaned = text.strip()
    if not cleaned:
        raise BadInput("the text is empty")
    if len(cleaned) > MAX_TEXT_CHARS:
        raise BadInput(f"the text is {len(cleaned):,} characters; a fact or proposal is "
                       f"at most {MAX_TEXT_CHARS:,} (keep longer text in a note)")
    if "\n" in cleaned or "\r" in cleaned:
        raise BadInput("a fact is one line: the text contains a line break")
    if "<!--" in cleaned or "-->" in cleaned:
        raise BadInput("the text may not contain an HTML comment marker (<!-- or -->)")
    if "%%" in cleaned:
        raise BadInput("the text may not contain '%%' (an Obsidian comment marker)")
    if "\x00" in cleaned:
        raise BadInput("the text contains a NUL byte")
    control = _CONTROL.search(cleaned)
    if control:
        raise BadInput(f"the text contains a control character "
                       f"(U+{ord(control.group()):04X})")
    try:
        cleaned.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise BadInput("the text is not valid UTF-8") from exc
    structure = markdown_structure(cleaned)
    if structure:
        raise BadInput(f"the text may not start with {structure}: it would be written "
                       "as Markdown structure, not as a fact (reword it)")
    return cleaned


def match_key(text: str) -> str:
    """The comparison form of a text: two texts with the same key are the same fact.

    Unicode compatibility normalisation (NFKC: composed and decomposed accents, full-width
    letters and ligatures compare equal), case folding, invisible characters (zero-width,
    bidi controls, tag characters, variation selectors) removed, whitespace folded. Never
    written anywhere; only compared, or hashed into a tombstone key.
    """
    if text.isascii():
        return " ".join(text.lower().split())
    import unicodedata

    plain = _SELECTORS.sub("", strip_invisible(text))
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", plain).casefold())
    return " ".join(folded.split())


def tombstone_forms(text: str) -> tuple[str, ...]:
    """Every comparison form `text` may have been tombstoned under; the first, its
    `match_key`, is the one new tombstones are written with.

    Before match keys, tombstones were keyed by a plainer normalisation (case and
    whitespace only: the vault's 0.1.0 tombstones, and hosted mode's until it moved to
    match keys). Those forms are looked up too, for the text as given and for its
    composed (NFC) and compatibility (NFKC) forms without invisible characters, so a text
    forgotten before the change stays forgotten, also when it comes back decomposed or
    with a zero-width character.
    """
    forms = [match_key(text), normalise_text(text)]
    if not text.isascii():
        import unicodedata

        plain = strip_invisible(text)
        forms += [normalise_text(unicodedata.normalize(form, plain)) for form in ("NFC", "NFKC")]
    return tuple(dict.fromkeys(forms))


def tombstone_keys(salt: str, text: str) -> tuple[str, ...]:
    """Every key `text` may be tombstoned under in a vault, for the vault's salt
    (`tombstone_forms`, each HMAC-SHA256 cut to 32 hex characters); the first is the one
    new tombstones are written with."""
    return tuple(dict.fromkeys(_hmac_key(salt, form) for form in tombstone_forms(text)))


def _hmac_key(salt: str, message: str) -> str:
    import hashlib
    import hmac

    raw = message.encode("utf-8", "surrogateescape")
    return hmac.new(salt.encode(), raw, hashlib.sha256).hexdigest()[:32]
