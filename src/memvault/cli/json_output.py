"""JSON on stdout, as every command prints it (`--json`).

Kept apart from the rest of the CLI helpers (`cli.state`) because the quick search path
(`cli.quick`) prints through it without importing click: one function, so the two paths
cannot print a document differently.
"""

from __future__ import annotations

import json
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def print_json(data: Any) -> None:
    """Stable JSON on stdout: indented on a terminal, one line otherwise (that form uses
    the C encoder: 10,000 facts print in a twentieth of the time).
    Undecodable bytes become \\udcNN escapes (valid JSON that round-trips to the same
    bytes with Python's surrogateescape). On a stdout whose encoding is not UTF-8 every
    non-ASCII character is escaped (`json_text`)."""
    out = sys.stdout
    indent = 2 if out.isatty() else None
    buffer = getattr(out, "buffer", None)
    if buffer is None or not _utf8(out):
        out.write(json_text(data, indent))
        return
    text = json.dumps(data, ensure_ascii=False, indent=indent, default=str) + "\n"
    try:
        encoded = text.encode("utf-8")  # no undecodable bytes (the usual case): one pass
    except UnicodeEncodeError:
        encoded = _escape_undecodable(text).encode("utf-8")
    out.flush()
    buffer.write(encoded)


def _utf8(stream: Any) -> bool:
    return str(getattr(stream, "encoding", None) or "").lower().replace("-", "").replace(
        "_", "") == "utf8"


def json_text(data: Any, indent: int | None) -> str:
    """`data` as one JSON document (and a newline) that stdout can carry as it is: text
    as it is for a UTF-8 (or text-only) stream; for any other encoding (ASCII, Latin-1,
    a Windows code page) every non-ASCII character escaped, so the bytes are valid JSON
    in that encoding and in UTF-8 alike. Undecodable bytes are always escaped."""
    encoding = getattr(sys.stdout, "encoding", None)
    if encoding and not _utf8(sys.stdout):
        return json.dumps(data, ensure_ascii=True, indent=indent, default=str) + "\n"
    text = json.dumps(data, ensure_ascii=False, indent=indent, default=str) + "\n"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = _escape_undecodable(text)
    return text


def _escape_undecodable(text: str) -> str:
    import re

    return re.sub("[\udc80-\udcff]", lambda m: f"\\u{ord(m.group()):04x}", text)


def search_document(query: str, hits: list[Any], notices: list[str]) -> dict[str, Any]:
    """What `memvault search --json` prints: the query, the hits, the notices."""
    return {"query": query, "results": [h.to_dict() for h in hits], "notices": notices}
