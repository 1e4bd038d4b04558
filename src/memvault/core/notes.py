"""Reading any Obsidian note for search: title, frontmatter, tags, aliases, wikilinks.

`parse_note(path, text)` is tolerant: broken YAML, odd types or an unclosed
frontmatter block never raise; what cannot be understood is kept as plain text so it
stays searchable. Tags come from the frontmatter (`tags`, `tag`) and from `#inline`
tags outside code; nested tags (`#a/b`) are kept whole. Aliases come from `aliases` /
`alias`; wikilinks from `[[target|label]]` and `![[embed]]`.

This module is pure (text in, values out) and never writes a note.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

_FENCED = re.compile(r"(?ms)^[ \t]*(`{3,}|~{3,}).*?(?:^[ \t]*\1[`~]*[ \t]*$|\Z)")
_INLINE_CODE = re.compile(r"`[^`\n]*`")
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


def split_frontmatter(text: str) -> tuple[str | None, str]:
    """(frontmatter text or None, body). An unclosed block is treated as body."""
    if not text.startswith("---"):
        return None, text
    first_nl = text.find("\n")
    if first_nl < 0 or text[:first_nl].strip() != "---":
        return None, text
    pos = first_nl + 1
    while pos <= len(text):
        nl = text.find("\n", pos)
        line = text[pos:] if nl < 0 else text[pos:nl]
        if line.rstrip() in ("---", "..."):
            return text[first_nl + 1:pos], ("" if nl < 0 else text[nl + 1:])
        if nl < 0:
            break
        pos = nl + 1
    return None, text


def _load_yaml(raw: str) -> tuple[dict[str, Any], str | None]:
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        data = yaml.load(raw, Loader=loader)  # noqa: S506 - a safe loader
    except yaml.YAMLError:
        return {}, "frontmatter is not valid YAML"
    except (ValueError, TypeError, RecursionError):
        return {}, "frontmatter could not be read"
    if data is None:
        return {}, None
    if not isinstance(data, dict):
        return {}, "frontmatter is not key: value pairs"
    return data, None


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
    raw_fm, body = split_frontmatter(text)
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
    searchable = _INLINE_CODE.sub(" ", _FENCED.sub(" ", body)) if "`" in body or "~~~" in body \
        else body
    if "#" in searchable:
        tags.extend(m.group(1) for m in _INLINE_TAG.finditer(searchable))
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


def tag_words(tags: list[str]) -> str:
    """Text for the tag column: each tag whole and split at '/' (so `a/b` finds `b`)."""
    parts: list[str] = []
    for tag in tags:
        parts.append(tag)
        if "/" in tag:
            parts.extend(p for p in tag.split("/") if p)
    return " ".join(parts)
