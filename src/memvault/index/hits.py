"""What a search returns: a note (`Hit`) or a fact, lesson or proposal (`MemoryHit`).

Snippets carry their matches between `HL_OPEN` and `HL_CLOSE`; `to_dict` (the JSON
form) shows them as `**bold**`, the terminal in colour. Both are `Value`s, not
dataclasses: they are built on the cold path of `memvault search --json`.
"""

from __future__ import annotations

from memvault.core.values import Value

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

HL_OPEN, HL_CLOSE = "\x02", "\x03"


class Hit(Value):
    """A note found by a search (a `Value`: no dataclass on the cold search path)."""

    __slots__ = ("path", "title", "snippet", "score", "match", "tags", "aliases")

    def __init__(self, path: str, title: str, snippet: str, score: float, match: str,
                 tags: list[str], aliases: list[str]) -> None:
        self.path = path
        self.title = title
        self.snippet = snippet  # highlights between HL_OPEN and HL_CLOSE
        self.score = score
        self.match = match  # "full text", "any word", "fuzzy title", "fuzzy alias", ...
        self.tags = tags
        self.aliases = aliases

    def to_dict(self, marker: str = "**") -> dict[str, Any]:
        return {"path": self.path, "title": self.title, "score": float(f"{self.score:.4g}"),
                "match": self.match,
                "snippet": self.snippet.replace(HL_OPEN, marker).replace(HL_CLOSE, marker),
                "tags": self.tags, "aliases": self.aliases}


class MemoryHit(Value):
    """A fact, lesson or proposal found by a search."""

    __slots__ = ("id", "kind", "category", "status", "text", "path", "line", "snippet",
                 "score", "match")

    def __init__(self, id: str, kind: str, category: str | None, status: str | None,
                 text: str, path: str, line: int | None, snippet: str, score: float,
                 match: str = "words") -> None:
        self.id = id
        self.kind = kind
        self.category = category
        self.status = status
        self.text = text
        self.path = path
        self.line = line
        self.snippet = snippet
        self.score = score
        self.match = match  # words (the query's words or id) | meaning (semantic only)

    def to_dict(self, marker: str = "**") -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind, "category": self.category,
                "status": self.status, "text": self.text, "path": self.path,
                "line": self.line, "score": float(f"{self.score:.4g}"), "match": self.match,
                "snippet": self.snippet.replace(HL_OPEN, marker).replace(HL_CLOSE, marker)}
