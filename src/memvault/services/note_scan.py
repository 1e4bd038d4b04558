"""Naming the notes that hold some wording without a search index: a read of the notes.

A permanent forget names the notes that still hold the forgotten words. With an index on
this machine the index answers (`index.query.notes_with_phrases`); without one, building
a whole index only to ask one question costs far more than reading the notes once (and
the forget deletes the index right after). This reads the notes the index would list
(`index.walk.walk_notes`: no hidden folders such as .obsidian, .memvault or .git, a
symlink judged by where it leads, never another principal's part of the home) and
matches each wording as a phrase of words: case, accents and punctuation aside, but, unlike
the index, not other word endings.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

_WORD = re.compile(r"\w+")


def _words(text: str) -> str:
    """The text's words, lower case without accents, one space between them."""
    folded = unicodedata.normalize("NFKD", text.casefold())
    plain = "".join(ch for ch in folded if not unicodedata.combining(ch))
    return " ".join(_WORD.findall(plain))


def notes_with_wording(root: Path, home_root: str, texts: list[str],
                       visible: Callable[[str], bool]) -> list[str]:
    """Vault-relative paths of the notes (memory files aside) `visible` allows that hold
    any of `texts` as a phrase, sorted."""
    from memvault.index.scan import read_file, scan_vault

    phrases = [p for p in (_words(t) for t in texts) if p]
    if not phrases:
        return []
    # a quick first look: a note without the longest word of a phrase (as bytes, any
    # case) cannot hold it, unless accents or case folding beyond ASCII are in play
    keys = [max(p.split(), key=len).encode() if p.isascii() else None for p in phrases]
    found: list[str] = []
    for path, entry in scan_vault(root, home_root).items():
        if entry.memory_kind is not None or not visible(path):
            continue
        data = read_file(root, entry, home_root)
        if not isinstance(data, bytes):
            continue
        lowered = data.lower()
        ascii_note = lowered.isascii()
        wanted = [p for p, k in zip(phrases, keys, strict=True)
                  if k is None or not ascii_note or k in lowered]
        if not wanted:
            continue
        words = f" {_words(data.decode('utf-8', 'replace'))} "
        if any(f" {p} " in words for p in wanted):
            found.append(path)
    return sorted(found)
