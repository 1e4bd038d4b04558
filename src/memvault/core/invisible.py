"""Invisible characters: the ones that change what a reader or a model takes from a
text without being seen. One list, used to neutralise text for display
(`core.quoting`) and to compare texts (`core.records.match_key`). Pure and cheap to
import (one regular expression)."""

from __future__ import annotations

import re

# Characters that are invisible yet can change what a reader or a model takes from a
# text: bidi embeddings, overrides and isolates (U+202A-202E, U+2066-2069), the Arabic
# letter mark (U+061C), the left/right-to-left marks (U+200E/F), zero-width spaces and
# joiners, the word joiner and invisible operators, the byte order mark, interlinear
# annotation controls, Unicode tag characters (U+E0000-E007F, which spell hidden ASCII),
# variation selectors 17-256 (which can carry hidden bytes), the soft hyphen, the
# Mongolian vowel separator, the combining grapheme joiner, the Hangul fillers that
# render as blanks, and the invisible musical formatting controls.
INVISIBLE_CHARS = (
    "\u00ad\u034f\u061c\u115f\u1160\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064"
    "\u2066-\u206f\u3164\ufeff\uffa0\ufff9-\ufffb\U0001d173-\U0001d17a"
    "\U000e0000-\U000e007f\U000e0100-\U000e01ef")
INVISIBLE = re.compile(f"[{INVISIBLE_CHARS}]")
# More than one variation selector in a row never changes how a character looks; a run of
# them can smuggle bytes. One is kept (it picks text or emoji style).
SELECTOR_RUN = re.compile(r"([\ufe00-\ufe0f])[\ufe00-\ufe0f]+")


def strip_invisible(text: str) -> str:
    """`text` without the invisible characters above (and runs of variation selectors
    cut to one). Used for display and for comparing texts."""
    if text.isascii():
        return text
    return SELECTOR_RUN.sub(r"\1", INVISIBLE.sub("", text))


def has_invisible(text: str) -> bool:
    return not text.isascii() and bool(INVISIBLE.search(text) or SELECTOR_RUN.search(text))
