"""Frontmatter: find it, read it, and set one property by replacing only its lines.

Reading (`parse_frontmatter(data)`, never fails):

- The block must open with `---` on the very first line (after a UTF-8 BOM) and close
  with a later `---` line. No closing delimiter, or `---` further down, means "not
  frontmatter": the file's properties are read-only with a reason, never "repaired".
- Values are read with PyYAML's *BaseLoader*: every scalar stays text (`no`, `010`,
  `1.10`, `12:30`, `2020-08-21` are not re-typed the YAML 1.1 way); callers type them.
- Duplicate keys (also the same key in another case, as Obsidian treats them as one),
  invalid YAML, JSON frontmatter and non-UTF-8 bytes make the block read-only with a
  reason naming the line. Keys are looked up case-insensitively.
- YAML is read with limits (`core.yaml_limits`: size, nesting depth, alias expansion),
  so an alias bomb is refused in milliseconds instead of expanding; `load_error` says
  why when the values could not be read at all.

Writing (`set_property(fm, key, value)` -> bytes): the key's own lines are replaced (a
scalar keeps its inline comment and its column; a list keeps its flow or block style and
item indent); a new key is added just before the closing delimiter; a file without
frontmatter gets a new block on top. Every other byte stays as it was: this module never
re-serialises a user's YAML. Written strings are quoted whenever YAML (1.1 or 1.2) could
read them as anything but that string, so `#…`, ids and hashes are never written bare.

Pure: bytes in, bytes out. PyYAML is imported on first parse.
"""

from __future__ import annotations

import datetime as _dt
import re
import unicodedata
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from memvault.core.lines import TextFile
from memvault.errors import InvalidInput, ReadOnly

FENCE = "---"

_QUOTED_KEY = re.compile(r"""(?:"((?:[^"\\]|\\.)*)"|'((?:[^']|'')*)')[ \t]*:(?=[ \t]|\Z)""")
_PLAIN_KEY = re.compile(r"([^\s#\[\]{},&*!|>'\"%@`-][^:]*?|-[^\s:][^:]*?)[ \t]*:(?=[ \t]|\Z)")
_ITEM = re.compile(r"([ \t]*)-([ \t]+|\Z)")
_SAFE_PLAIN = re.compile(r"[A-Za-z][A-Za-z0-9 _./+()@-]*\Z")
_YAML_WORDS = {"yes", "no", "y", "n", "on", "off", "true", "false", "null", "none", "~"}
_BREAKS = {"\u2028", "\u2029", "\x85"}


@dataclass(slots=True)
class Entry:
    """One top-level property's lines: `start`..`stop` (0-based, stop exclusive)."""

    key: str
    key_text: str
    start: int
    stop: int
    style: str
    item_prefix: str | None = None


@dataclass(slots=True)
class Frontmatter:
    """A file's frontmatter as found. `present` is False when there is no valid block.

    `readonly_reason` is set when the properties must not be edited (and, for broken
    YAML or duplicate keys, when `values` is incomplete); `close` is the index of the
    closing `---` line.
    """

    file: TextFile
    present: bool = False
    close: int | None = None
    values: dict[str, Any] = field(default_factory=dict)
    entries: list[Entry] = field(default_factory=list)
    readonly_reason: str | None = None
    load_error: str | None = None
    """Set when the YAML could not be read at all (invalid, or over the limits of
    `core.yaml_limits`): `values` is then empty, and callers that need a value must
    fail closed rather than take the default."""

    def entry(self, key: str) -> Entry | None:
        want = key.casefold()
        for e in self.entries:
            if e.key.casefold() == want:
                return e
        return None

    def get(self, key: str, default: Any = None) -> Any:
        want = key.casefold()
        for k, v in self.values.items():
            if str(k).casefold() == want:
                return v
        return default

    def has(self, key: str) -> bool:
        want = key.casefold()
        return any(str(k).casefold() == want for k in self.values)

    def line_of(self, key: str) -> int | None:
        """The 1-based file line of `key`, or None."""
        e = self.entry(key)
        return e.start + 1 if e else None

    @property
    def body_start(self) -> int:
        return self.close + 1 if self.present and self.close is not None else 0

    def body_text(self) -> str:
        return "".join(ln.text + ln.eol for ln in self.file.lines[self.body_start:])


# -- reading ------------------------------------------------------------------------------

def parse_frontmatter(data: bytes) -> Frontmatter:
    tf = TextFile.parse(data)
    fm = Frontmatter(file=tf, readonly_reason=tf.readonly_reason)
    if tf.readonly_reason and data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return fm
    lines = tf.lines
    if not lines or lines[0].text.rstrip(" \t") != FENCE:
        first = next((i for i, ln in enumerate(lines) if ln.text.strip()), None)
        if first is not None and first > 0 and lines[first].text.rstrip(" \t") == FENCE:
            fm.readonly_reason = (f"'---' on line {first + 1} is not on line 1, so it is not "
                                  "frontmatter; move it to the very top of the file")
        return fm
    close = next((i for i in range(1, len(lines)) if lines[i].text.rstrip(" \t") == FENCE),
                 None)
    if close is None:
        fm.readonly_reason = "frontmatter opened on line 1 has no closing '---' line"
        return fm
    fm.present, fm.close = True, close
    inner = lines[1:close]
    if not all(ln.clean for ln in inner):
        bad = next(i for i, ln in enumerate(inner) if not ln.clean) + 2
        fm.readonly_reason = f"frontmatter has bytes that are not UTF-8 (line {bad})"
        fm.load_error = fm.readonly_reason
        return fm
    first_text = next((ln.text.lstrip() for ln in inner
                       if ln.text.strip() and not ln.text.lstrip().startswith("#")), "")
    if first_text[:1] in ("{", "["):
        fm.readonly_reason = "JSON frontmatter is read-only (convert it to YAML to edit it)"
    fm.values, error = _load_yaml("\n".join(ln.text for ln in inner))
    if error:
        fm.readonly_reason = fm.readonly_reason or error
        fm.load_error = error
        return fm
    fm.entries, layout_error = _scan_entries(lines, close)
    if fm.readonly_reason is None:
        fm.readonly_reason = layout_error
    if fm.readonly_reason is None:
        scanned = {e.key for e in fm.entries}
        if scanned != {str(k) for k in fm.values}:
            fm.readonly_reason = "frontmatter layout not understood (keys on unusual lines)"
    return fm


def _loader_class() -> Any:
    import yaml

    base = getattr(yaml, "CBaseLoader", yaml.BaseLoader)

    class _Loader(base):  # type: ignore[misc, valid-type]
        def construct_mapping(self, node: Any, deep: bool = False) -> dict[Any, Any]:
            seen: dict[Any, int] = {}
            out: dict[Any, Any] = {}
            for key_node, value_node in node.value:
                key = self.construct_object(key_node, deep=True)
                try:
                    hash(key)
                except TypeError:
                    raise yaml.constructor.ConstructorError(
                        None, None, "found a key that is not text (an unquoted {{…}}?)",
                        key_node.start_mark) from None
                if key in seen:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"duplicate key {key!r} (first on line {seen[key] + 2})",
                        key_node.start_mark)
                seen[key] = key_node.start_mark.line
                out[key] = self.construct_object(value_node, deep=True)
            return out

    _Loader.add_constructor("tag:yaml.org,2002:map", _Loader.construct_mapping)
    return _Loader


_LOADER: Any = None


def _load_yaml(text: str) -> tuple[dict[str, Any], str | None]:
    global _LOADER
    import yaml

    from memvault.core.yaml_limits import YamlLimitError, load_limited

    if _LOADER is None:
        _LOADER = _loader_class()
    try:
        data = load_limited(text, _LOADER)
    except YamlLimitError as exc:
        return {}, f"frontmatter is over memvault's limits: {_shift_line(str(exc))}"
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f" (line {mark.line + 2})" if mark is not None else ""
        what = exc.problem or exc.context or "invalid YAML"
        return {}, f"frontmatter is not valid YAML{where}: {what}"
    except yaml.YAMLError as exc:
        return {}, f"frontmatter is not valid YAML: {exc}"
    if data is None or data == "":
        return {}, None
    if not isinstance(data, dict):
        return {}, "frontmatter is not a set of properties (line 2)"
    return data, None


def _shift_line(message: str) -> str:
    """`(line N)` of the YAML text as the file's line (the block starts on line 2)."""
    return re.sub(r"\(line (\d+)\)\Z", lambda m: f"(line {int(m.group(1)) + 1})", message)


def _scan_entries(lines: list[Any], close: int) -> tuple[list[Entry], str | None]:
    """Find each top-level key's lines; report case-insensitive duplicates."""
    entries: list[Entry] = []
    current: Entry | None = None
    for i in range(1, close):
        text = lines[i].text
        stripped = text.strip()
        key = _key_at(text)
        if key is not None:
            if current is not None:
                entries.append(current)
            current = Entry(key=key[0], key_text=key[1], start=i, stop=i + 1, style="")
            continue
        if current is None:
            continue
        if not stripped:
            continue  # a blank line joins the entry only if more of it follows
        continuation = text[0] in " \t" or (_ITEM.match(text) is not None)
        if not continuation:  # a column-0 comment ends the entry
            entries.append(current)
            current = None
            continue
        current.stop = i + 1
    if current is not None:
        entries.append(current)
    seen: dict[str, Entry] = {}
    for e in entries:
        _classify(e, lines)
        fold = e.key.casefold()
        if fold in seen:
            return entries, (f"duplicate property {e.key!r} (lines {seen[fold].start + 1} and "
                             f"{e.start + 1}); Obsidian treats keys case-insensitively")
        seen[fold] = e
    return entries, None


def _key_at(text: str) -> tuple[str, str] | None:
    """(key, key as written) when `text` starts a top-level property."""
    if not text or text[0] in " \t#":
        return None
    m = _QUOTED_KEY.match(text)
    if m:
        if m.group(1) is not None:
            return m.group(1).replace('\\"', '"').replace("\\\\", "\\"), text[:m.end() - 1]
        return m.group(2).replace("''", "'"), text[:m.end() - 1]
    if _ITEM.match(text):
        return None
    m = _PLAIN_KEY.match(text)
    if m:
        return m.group(1), m.group(1)
    return None


def _classify(e: Entry, lines: list[Any]) -> None:
    value, _gap, _comment = split_comment(lines[e.start].text[len(e.key_text) + 1:])
    value = value.strip()
    items = [lines[j].text for j in range(e.start + 1, e.stop)
             if lines[j].text.strip() and not lines[j].text.lstrip().startswith("#")]
    if value.startswith("["):
        e.style = "flow"
    elif not value and items and _ITEM.match(items[0]):
        e.style = "block"
        m = _ITEM.match(items[0])
        assert m is not None
        e.item_prefix = m.group(1) + "-" + (m.group(2) or " ")
    elif not value and not items:
        e.style = "empty"
    else:
        e.style = "scalar"


def split_comment(rest: str) -> tuple[str, str, str]:
    """Split a value's text into (value, whitespace before the comment, `# comment`)."""
    quote: str | None = None
    prev = " "
    i = 0
    while i < len(rest):
        ch = rest[i]
        if quote:
            if quote == '"' and ch == "\\":
                i += 2
                continue
            if ch == quote:
                if quote == "'" and rest[i + 1:i + 2] == "'":
                    i += 2
                    continue
                quote = None
        elif ch in "\"'" and prev in " \t[,{:":
            quote = ch
        elif ch == "#" and prev in " \t":
            value = rest[:i].rstrip(" \t")
            return value, rest[len(value):i], rest[i:]
        prev = ch
        i += 1
    return rest, "", ""


# -- writing ------------------------------------------------------------------------------

class Quoted(str):
    """Text always written double-quoted (ids, hashes, amounts), whatever it looks like."""


def render_scalar(value: Any) -> str:
    """A YAML scalar that reads back as exactly `value` (strings quoted when needed)."""
    if isinstance(value, Quoted):
        return quote(value)
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, Decimal)):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, _dt.datetime):
        return value.replace(tzinfo=None).isoformat(timespec="seconds")
    if isinstance(value, _dt.date):
        return value.isoformat()
    if not isinstance(value, str):
        raise InvalidInput(f"cannot write a {type(value).__name__} as a property")
    if _SAFE_PLAIN.match(value) and value.casefold() not in _YAML_WORDS and \
            not value.endswith(" ") and "  " not in value:
        return value
    return quote(value)


def quote(text: str) -> str:
    """A YAML double-quoted string (valid for YAML 1.1 and 1.2 readers)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput("value is not valid text (undecodable bytes)") from None
    out = ['"']
    for ch in text:
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch in _BREAKS or unicodedata.category(ch) in ("Cc", "Cs"):
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def render_property(key: str, value: Any, *, list_prefix: str = "  - ") -> list[str]:
    """Lines for a new property (a list becomes a block list)."""
    if isinstance(value, (list, tuple)):
        if not value:
            return [f"{key}: []"]
        return [f"{key}:"] + [f"{list_prefix}{render_scalar(v)}" for v in value]
    text = render_scalar(value)
    return [f"{key}: {text}" if text else f"{key}:"]


def render_frontmatter(pairs: list[tuple[str, Any]]) -> str:
    """A whole new frontmatter block (for files memvault creates), LF endings."""
    lines = [FENCE]
    for key, value in pairs:
        lines.extend(render_property(key, value))
    lines.append(FENCE)
    return "\n".join(lines) + "\n"


def set_property(fm: Frontmatter, key: str, value: Any) -> bytes:
    """The file's bytes with `key` set to `value`; only that key's lines change."""
    if fm.readonly_reason:
        raise ReadOnly(fm.readonly_reason)
    if not key or _key_at(f"{key}: x") is None or key != key.strip() or "\n" in key:
        raise InvalidInput(f"{key!r} is not a valid property name")
    tf = TextFile(lines=list(_copy_lines(fm.file)), bom=fm.file.bom,
                  _dominant_eol=fm.file.dominant_eol)
    if not fm.present:
        tf.replace(0, 0, [FENCE, *render_property(key, value), FENCE])
        return tf.to_bytes()
    assert fm.close is not None
    e = fm.entry(key)
    if e is None:
        tf.replace(fm.close, fm.close, render_property(key, value))
        return tf.to_bytes()
    tf.replace(e.start, e.stop, _replacement(e, tf.lines[e.start].text, value))
    return tf.to_bytes()


def _copy_lines(tf: TextFile) -> list[Any]:
    from memvault.core.lines import Line

    return [Line(ln.text, ln.eol) for ln in tf.lines]


def _replacement(e: Entry, line: str, value: Any) -> list[str]:
    head = e.key_text
    old_value, gap, comment = split_comment(line[len(head) + 1:])
    tail_col = len(head) + 1 + len(old_value) + len(gap)

    def with_comment(first: str) -> str:
        if not comment:
            return first
        pad = max(1, tail_col - len(first)) if len(gap) > 1 else len(gap)
        return first + " " * pad + comment

    if isinstance(value, (list, tuple)):
        if e.style == "flow" or not value:
            body = "[" + ", ".join(render_scalar(v) for v in value) + "]"
            return [with_comment(f"{head}: {body}")]
        prefix = e.item_prefix or "  - "
        return [with_comment(f"{head}:")] + [f"{prefix}{render_scalar(v)}" for v in value]
    text = render_scalar(value)
    return [with_comment(f"{head}: {text}" if text else f"{head}:")]
