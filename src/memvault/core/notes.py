"""Reading any Obsidian note for search: title, frontmatter, tags, aliases, wikilinks.

`parse_note(path, text)` is tolerant: broken YAML, odd types or an unclosed
frontmatter block never raise; what cannot be understood is kept as plain text so it
stays searchable. The frontmatter is read with python-frontmatter (its safe YAML
loader) after memvault's YAML limits (`core.yaml_limits`), so an alias bomb in a note is
indexed as plain text instead of being expanded; memvault's own lossless editor
(`core/frontmatter.py`) is for writing.

Tags come from the frontmatter (`tags`, `tag`) and from `#inline` tags in the text,
never from code (fenced, indented or inline), HTML comments, `%% comments %%` or math
(`$…$`, `$$…$$`). A note that contains any of those markers and a `#` is split into
blocks by markdown-it-py (only its block rules run: fences, indented code, HTML
blocks, inside lists and quotes too); the few inline constructs are removed with
regular expressions. Other notes need no parser. Nested tags (`#a/b`) are kept whole.
Aliases come from `aliases` / `alias`; wikilinks from `[[target|label]]` and
`![[embed]]`.

This module is pure (text in, values out) and never writes a note.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

_INLINE_TAG = re.compile(r"(?<![\w&#/\\\]\)])#([^\s#!\"$%&'()*+,.:;<=>?@\[\\\]^`{|}~]+)")
_WIKILINK = re.compile(r"!?\[\[([^\]\[|#^\n]*)(?:[#^][^\]\[|\n]*)?(?:\|[^\]\[\n]*)?\]\]")
_SPLIT_LIST = re.compile(r"[,\s]+")


@dataclass(slots=True)
class Note:
    path: str
    title: str
    aliases: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    links: list[str] = field(default_factory=list)
    properties: str = ""
    body: str = ""
    frontmatter_error: str | None = None


def _load_yaml(raw: str) -> tuple[dict[str, Any], str | None]:
    import yaml

    from memvault.core.yaml_limits import YamlLimitError, check_limits

    try:
        check_limits(raw)
        data = _yaml_handler().load(raw)
    except YamlLimitError as exc:
        return {}, f"frontmatter is over memvault's limits: {exc}"
    except yaml.YAMLError:
        return {}, "frontmatter is not valid YAML"
    except (ValueError, TypeError, RecursionError):
        return {}, "frontmatter could not be read"
    if data is None:
        return {}, None
    if not isinstance(data, dict):
        return {}, "frontmatter is not key: value pairs"
    return data, None


@lru_cache(maxsize=1)
def _yaml_handler() -> Any:
    from frontmatter.default_handlers import YAMLHandler

    return YAMLHandler()


def read_frontmatter(text: str) -> tuple[str | None, str]:
    """(frontmatter text or None, body), split by python-frontmatter's YAML handler. A
    note whose first line is not `---`, or whose block is never closed, is all body."""
    handler = _yaml_handler()
    if not text.startswith("---") or not handler.detect(text):
        return None, text
    try:
        raw, body = handler.split(text)
    except ValueError:
        return None, text
    return raw, body.removeprefix("\r").removeprefix("\n")


def _as_strings(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple, set)):
        out: list[str] = []
        for v in value:
            out.extend(_as_strings(v))
        return out
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return [str(value)]
    return []


def clean_tag(raw: str) -> str:
    """`#Project/Alpha` -> `project/alpha` (no '#', lower-case, no edge slashes)."""
    return raw.strip().lstrip("#").strip("/").lower()


def _flatten(value: Any, out: list[str], depth: int = 0) -> None:
    if depth > 5:
        return
    if isinstance(value, dict):
        for k, v in value.items():
            out.append(str(k))
            _flatten(v, out, depth + 1)
    elif isinstance(value, (list, tuple, set)):
        for v in value:
            _flatten(v, out, depth + 1)
    elif value is not None:
        out.append(str(value))


def parse_note(path: str, text: str) -> Note:
    """Everything search needs from one note (see the module doc)."""
    name = path.rsplit("/", 1)[-1]
    stem = name[:-3] if name.lower().endswith(".md") else name
    raw_fm, body = read_frontmatter(text)
    note = Note(path=path, title=stem, body=body)
    tags: list[str] = []
    if raw_fm is not None:
        data, error = _load_yaml(raw_fm)
        note.frontmatter_error = error
        if error:
            note.properties = raw_fm
        else:
            for key in ("tags", "tag"):
                for t in _as_strings(data.get(key)):
                    tags.extend(p for p in _SPLIT_LIST.split(t) if p)
            for key in ("aliases", "alias"):
                note.aliases.extend(a.strip() for a in _as_strings(data.get(key)) if a.strip())
            title = data.get("title")
            if isinstance(title, str) and title.strip() and title.strip() != stem:
                note.aliases.insert(0, title.strip())
            rest: list[str] = []
            for k, v in data.items():
                if k in ("tags", "tag", "aliases", "alias"):
                    continue
                rest.append(str(k))
                _flatten(v, rest)
            note.properties = " ".join(rest)
    if "#" in body and _INLINE_TAG.search(body):
        tags.extend(m.group(1) for m in _INLINE_TAG.finditer(prose(body)))
    seen: set[str] = set()
    for t in tags:
        tag = clean_tag(t)
        if tag and not tag.isdigit() and tag not in seen:
            seen.add(tag)
            note.tags.append(tag)
    if "[[" in body:
        links = {m.group(1).strip() for m in _WIKILINK.finditer(body)}
        note.links = sorted(link for link in links if link)
    return note


def prose(body: str) -> str:
    """The body without code, HTML comments, `%%` comments and math (see the module doc),
    each removed span replaced by a space so nothing joins across it."""
    if not any(marker in body for marker in _INLINE_MARKERS):
        return body
    if any(marker in body for marker in _BLOCK_MARKERS) and _blocks_may_matter(body):
        lines = body.split("\n")
        for start, end in _code_and_html_blocks(body):
            for n in range(start, min(end, len(lines))):
                lines[n] = ""
        body = "\n".join(lines)
    return _INLINE_SPANS.sub(" ", body)


def _blocks_may_matter(body: str) -> bool:
    """False when no `#` candidate could sit inside a code or HTML block: none is on a
    line inside (or of) a fence, on an indented line, or in a paragraph that starts with
    `<`. Then the block parser would change nothing and is skipped."""
    tag_lines = {body.count("\n", 0, m.start()) for m in _INLINE_TAG.finditer(body)}
    if not tag_lines:
        return False
    fence = ""
    html = False
    for n, line in enumerate(body.split("\n")):
        bare = line.lstrip(" \t>")
        marker = bare[:3]
        if marker in ("```", "~~~"):
            run = len(bare) - len(bare.lstrip(marker[0]))
            if not fence:
                fence = marker[0] * run
            elif bare.startswith(fence):
                fence = ""
            if n in tag_lines:
                return True
            continue
        html = bare.startswith("<") or (html and bool(bare.strip()))
        if n in tag_lines and (fence or html or
                               line.lstrip(">").startswith(("    ", "\t", " \t"))):
            return True
    return False


_BLOCK_MARKERS = ("```", "~~~", "%%", "<!--", "$")
"""A note with one of these is split into blocks by markdown-it-py first."""
_INLINE_MARKERS = (*_BLOCK_MARKERS, "`")
_INLINE_SPANS = re.compile(
    r"(`+)(?!`)[\s\S]{0,2000}?(?<!`)\1(?!`)"        # inline code, any backtick run
    r"|<!--[\s\S]*?(?:-->|\Z)"                     # HTML comment (to the end if open)
    r"|%%[\s\S]*?(?:%%|\Z)"                        # Obsidian comment
    r"|\$\$[\s\S]*?(?:\$\$|\Z)"                   # display math
    r"|(?<![\\$\w])\$(?=\S)[^$\n]*?(?<=\S)\$(?![\w$])")  # inline math
"""Inline constructs that hide tags, in one pass: the leftmost one wins, as in a parser."""


def _code_and_html_blocks(body: str) -> list[tuple[int, int]]:
    """Line ranges [start, end) of fenced and indented code and HTML blocks."""
    return [(tok.map[0], tok.map[1]) for tok in _block_parser().parse(body)
            if tok.map and tok.type in ("fence", "code_block", "html_block")]


@lru_cache(maxsize=1)
def _block_parser() -> Any:
    """markdown-it-py with only its block rules (fast enough to run on the notes that need
    it; inline structure is handled by `_INLINE_SPANS`)."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").disable("inline")


def tag_words(tags: list[str]) -> str:
    """Text for the tag column: each tag whole and split at '/' (so `a/b` finds `b`)."""
    parts: list[str] = []
    for tag in tags:
        parts.append(tag)
        if "/" in tag:
            parts.extend(p for p in tag.split("/") if p)
    return " ".join(parts)
