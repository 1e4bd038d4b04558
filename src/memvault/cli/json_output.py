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
    bytes with Python's surrogateescape)."""
    indent = 2 if sys.stdout.isatty() else None
    text = json.dumps(data, ensure_ascii=False, indent=indent, default=str) + "\n"
    try:
        encoded = text.encode("utf-8")  # no undecodable bytes (the usual case): one pass
    except UnicodeEncodeError:
        import re

        text = re.sub("[\udc80-\udcff]", lambda m: f"\\u{ord(m.group()):04x}", text)
        encoded = b""
    out = getattr(sys.stdout, "buffer", None)
    if encoded and out is not None and (sys.stdout.encoding or "").lower().replace(
            "-", "") == "utf8":
        sys.stdout.flush()
        out.write(encoded)
    else:
        sys.stdout.write(text)


def search_document(query: str, hits: list[Any], notices: list[str]) -> dict[str, Any]:
    """What `memvault search --json` prints: the query, the hits, the notices."""
    return {"query": query, "results": [h.to_dict() for h in hits], "notices": notices}
