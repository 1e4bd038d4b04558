"""Text preparation for the FTS5 `unicode61` tokenizer.

`unicode61` splits words at spaces and punctuation, which fails for scripts written
without spaces between words (Chinese, Japanese, Korean particles, Thai, Lao, Khmer,
Myanmar): a whole sentence would become one token. `segment` puts an invisible
separator (U+2063, which the tokenizer treats as a separator) between the letters of
such runs, so every letter is a token and a query for any run of letters becomes a
phrase match (substring search). `unsegment` removes the separators again for display.
Combining marks stay attached to their letter. Pure functions.
"""

from __future__ import annotations

import re
import unicodedata

SEP = "\u2063"

_RANGES = [
    (0x0E00, 0x0E7F),  # Thai
    (0x0E80, 0x0EFF),  # Lao
    (0x1000, 0x109F),  # Myanmar
    (0x1100, 0x11FF),  # Hangul Jamo
    (0x1780, 0x17FF),  # Khmer
    (0x3040, 0x30FF),  # Hiragana, Katakana
    (0x3130, 0x318F),  # Hangul compatibility Jamo
    (0x3400, 0x4DBF),  # CJK extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xAC00, 0xD7AF),  # Hangul syllables
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0xFF66, 0xFF9F),  # half-width Katakana
    (0x20000, 0x2A6DF),  # CJK extension B
]
_CLASS = "".join(f"{chr(a)}-{chr(b)}" for a, b in _RANGES)
_RUN: re.Pattern[str] | None = None  # compiled on first non-ASCII text
_MARKS = frozenset(chr(c) for a, b in _RANGES[:5] for c in range(a, b + 1)
                   if unicodedata.category(chr(c)) in ("Mn", "Mc", "Me"))


def _split_run(match: re.Match[str]) -> str:
    run = match.group(0)
    out = [run[0]]
    for ch in run[1:]:
        if ch not in _MARKS:
            out.append(SEP)
        out.append(ch)
    return "".join(out)


def segment(text: str) -> str:
    """Text with a separator between the letters of space-less scripts."""
    global _RUN
    if text.isascii():
        return text
    if _RUN is None:
        _RUN = re.compile(f"[{_CLASS}]{{2,}}")
    return _RUN.sub(_split_run, text)


def unsegment(text: str) -> str:
    return text.replace(SEP, "") if SEP in text else text
