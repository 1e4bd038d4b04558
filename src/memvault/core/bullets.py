"""The one bullet grammar shared by Memory.md, Lessons.md and Inbox.md.

A memory file is Markdown in which each *top-level* list item is a record::

    - I prefer concise answers [preference] <!-- id:k3v9qa updated:1784594521 -->
    - [ ] Proposed text [communication] <!-- id:p7f3a1 kind:fact -->

`parse_bullets(data)` finds those items without changing anything: headings, prose,
blank lines, nested bullets, code fences, `%%` comments, callouts and frontmatter are
recognised and left alone. `BulletDocument` then edits *items*, never the whole file:
`replace_item`, `insert_item`, `delete_item` touch only the lines of one item, so every
other byte of a hand-edited file survives.

What an item line may hold, left to right: indent-free marker (`-`, `*`, `+`), any
spacing, an optional task box (`[ ]`, `[x]`, any one character), the text, an optional
`[category]`, an optional `<!-- key:value ... -->` comment, an optional `^block-id`, and
trailing whitespace. An item may continue over several lines; its category and comment
are read from its last text line. Anything ambiguous makes the item read-only with a
reason, never a guess.

This module is pure: bytes in, bytes out.
"""

from __future__ import annotations

import gc
import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import wraps
from typing import TypeVar

from memvault.core.lines import Line, TextFile

_MARKER = re.compile(r"([-*+])([ \t]+)(.*)\Z", re.S)
_EMPTY_MARKER = re.compile(r"[-*+][ \t]*\Z")
_INDENTED_MARKER = re.compile(r"[ \t]+(?:[-*+]|\d{1,9}[.)])(?:[ \t]|\Z)")
_HR = re.compile(r" {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*\Z")
_FENCE = re.compile(r"[ \t]*(`{3,}|~{3,})(.*)\Z")
_HEADING = re.compile(r" {0,3}#{1,6}(?:[ \t]|\Z)")
_TASK = re.compile(r"\[(.)\](?:([ \t]+)|\Z)")
_BLOCK_ID = re.compile(r"[ \t]+\^[A-Za-z0-9-]+\Z")
_CATEGORY = re.compile(r"(?:(?<=[ \t])|\A)\[([A-Za-z][A-Za-z0-9_-]*)\]\Z")
_META_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*:\S*\Z")
# A comment body made only of _META_TOKENs separated by whitespace (one regex, not one per token).
_META_BODY = re.compile(r"\s*[A-Za-z_][A-Za-z0-9_.-]*:\S*(?:\s+[A-Za-z_][A-Za-z0-9_.-]*:\S*)*\s*")
_CATEGORY_AT = re.compile(r"\[([A-Za-z][A-Za-z0-9_-]*)\]\Z")
# The one-line form memvault writes (`text [category] <!-- key:value ... -->`, single
# spaces, no task box, block id or bracket in the text): read with one match. Anything
# else takes the general path, which gives the same result for these lines.
_WRITTEN = re.compile(r"([^<\[\]^\s](?:[^<\[\]^\t]*[^<\[\]^\s])?)"
                      r"(?: \[([A-Za-z][A-Za-z0-9_-]*)\])?"
                      r" <!-- ([A-Za-z_][A-Za-z0-9_.-]*:[^\s<>^]*"
                      r"(?: [A-Za-z_][A-Za-z0-9_.-]*:[^\s<>^]*)*) -->")

_ID_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz"
_MERGE_MARKERS = ("<<<<<<<", "=======", "|||||||", ">>>>>>>")
CONFLICT_REASON = "inside a merge conflict block (run `memvault resolve`)"
"""Why an item between conflict markers is read-only: only resolving the block may touch it."""


@dataclass(slots=True)
class BulletItem:
    """One top-level list item, as found in the file.

    `start`..`text_end` are the item's own text lines; `text_end`..`end` its nested
    children (kept untouched). Line numbers are 0-based indexes into the file's lines.
    """

    start: int
    text_end: int
    end: int
    marker: str
    gap: str
    task: str | None
    task_gap: str
    text: str
    category_raw: str | None
    meta: dict[str, str]
    has_comment: bool
    block_suffix: str
    trailing: str
    readonly_reason: str | None = None
    provisional: bool = False
    id: str = ""

    @property
    def line_no(self) -> int:
        """1-based line number of the item's first line, for messages."""
        return self.start + 1

    @property
    def editable(self) -> bool:
        return self.readonly_reason is None


@dataclass(slots=True)
class BulletDocument:
    """A parsed memory file: its lines, its items, and why it may be read-only."""

    file: TextFile
    items: list[BulletItem]
    readonly_reason: str | None = None
    duplicate_ids: dict[str, list[BulletItem]] = field(default_factory=dict)

    # -- lookups -----------------------------------------------------------------------

    def find(self, item_id: str) -> list[BulletItem]:
        return [it for it in self.items if it.id == item_id]

    # -- edits (each changes only the lines of one item) ---------------------------------

    def _check_writable(self) -> None:
        if self.readonly_reason:
            from memvault.errors import ReadOnly

            raise ReadOnly(self.readonly_reason)

    def replace_item(self, item: BulletItem, new_line: str) -> None:
        """Replace the item's text lines with one new line; nested children stay."""
        self._check_writable()
        index, item = self._current(item)
        saved = self._snapshot()
        self.file.replace(item.start, item.text_end, [new_line])
        self._reparse()
        after = [_identity(it) for it in self.items]
        if len(after) != len(saved[1]) or after[:index] + after[index + 1:] != \
                saved[1][:index] + saved[1][index + 1:]:
            self._restore(saved, item)

    def delete_item(self, item: BulletItem) -> None:
        """Remove the item and its nested children."""
        self.delete_items([item])

    def delete_items(self, items: list[BulletItem]) -> None:
        """Remove several items (each with its nested children), parsing the file once."""
        if not items:
            return
        self._check_writable()
        positions = {id(it): i for i, it in enumerate(self.items)}
        found = [self._current(item, positions) for item in items]
        gone = {index for index, _ in found}
        saved = self._snapshot()
        opened_with_dashes = self._starts_with_dashes()
        lines = self.file.lines
        drop: set[int] = set()
        for _, item in found:
            drop.update(range(item.start, item.end))
        kept = [ln for i, ln in enumerate(lines) if i not in drop]
        if kept and lines[-1].eol == "" and len(lines) - 1 in drop:
            kept[-1].eol = ""  # the file still ends without a final newline
        self.file.lines = kept
        self._keep_body_out_of_frontmatter(opened_with_dashes)
        self._reparse()
        expected = [ident for i, ident in enumerate(saved[1]) if i not in gone]
        if [_identity(it) for it in self.items] != expected:
            self._restore(saved, found[0][1])

    # -- finding the item to edit, and the check every removing or replacing edit ends with
    #
    # Callers often hold items from before an earlier edit of the same document (they
    # edit bottom-up, or in file order). An item is found again in the current parse:
    # the same object, else the item at the same lines with the same id and words, else
    # the one item with its id and words wherever it now is. And whatever the item's
    # line numbers came from (this parse or the parse cache), an edit must leave every
    # other item as it was; if it did not, the numbers were not this file's and the
    # edit is undone.

    def _current(self, item: BulletItem,
                 positions: dict[int, int] | None = None) -> tuple[int, BulletItem]:
        if positions is not None:
            at = positions.get(id(item))
            if at is not None:
                return at, item
        else:
            for i, it in enumerate(self.items):
                if it is item:
                    return i, it
        same = _identity(item)
        at_lines = [(i, it) for i, it in enumerate(self.items)
                    if (it.start, it.text_end, it.end) == (item.start, item.text_end, item.end)
                    and _identity(it) == same]
        if at_lines:
            return at_lines[0]
        moved = [(i, it) for i, it in enumerate(self.items)
                 if it.id == item.id and _identity(it) == same]
        if len(moved) == 1:
            return moved[0]
        from memvault.errors import ReadOnly

        raise ReadOnly(f"line {item.line_no}: this item is no longer where it was read; "
                       "nothing was changed")

    def _snapshot(self) -> tuple[list[Line], list[tuple[object, ...]]]:
        return ([Line(ln.text, ln.eol) for ln in self.file.lines],
                [_identity(it) for it in self.items])

    def _restore(self, saved: tuple[list[Line], list[tuple[object, ...]]],
                 item: BulletItem) -> None:
        from memvault.errors import ReadOnly

        self.file.lines = saved[0]
        self._reparse()
        raise ReadOnly(f"line {item.line_no}: the edit would have changed other items "
                       "(the file's lines and their parse disagree); nothing was changed")

    def _starts_with_dashes(self) -> bool:
        lines = self.file.lines
        return bool(lines) and lines[0].text.rstrip() == "---"

    def _keep_body_out_of_frontmatter(self, opened_with_dashes: bool) -> None:
        """After removing lines from the top of a file that did not start with `---`, the
        file may now start with one: with a later `---` (now, or after the next hand edit)
        every reader (this parser and Obsidian) would take the lines between them for
        frontmatter, and the facts there would vanish. A blank first line keeps them in
        the body."""
        if opened_with_dashes or not self._starts_with_dashes():
            return
        self.file.lines.insert(0, Line("", self.file.dominant_eol))

    def insert_item(self, new_line: str, children: tuple[str, ...] = ()) -> None:
        """Add a new item (and its nested `children` lines, verbatim) after the last
        top-level item, or at the end of the file.

        A blank line is put first when the text before would swallow the new bullet
        (a callout or block quote as the last line).
        """
        self.insert_items([new_line, *children])

    def insert_items(self, new_lines: list[str]) -> None:
        """Add lines, in order, where `insert_item` adds one item: several new items (or
        one with its children); the file is parsed again once, not once per line (an
        import of thousands stays linear)."""
        if not new_lines:
            return
        self._check_writable()
        kept = self.items
        if self._append_unsplit(new_lines):
            return
        after = self._insertion_point()
        for offset, line in enumerate(new_lines):
            self.file.insert_after(after + offset, line)
        if kept and kept[-1].readonly_reason != CONFLICT_REASON:
            # Every existing item ends at or before the insertion point, where the parser
            # is between items (outside any fence, comment or conflict block): only the
            # new lines and what follows them are read again.
            self._reparse(resume_at=after + 1, kept=kept)
        else:
            self._reparse()

    def _append_unsplit(self, new_lines: list[str]) -> bool:
        """`insert_items` for the usual case, without splitting a file read from the parse
        cache into lines: the last item ends the file, so the new lines go at its end
        (`_LazyTextFile.append`) and only they are parsed. False (nothing done) otherwise."""
        kept = self.items
        count = getattr(self.file, "unsplit_line_count", lambda: None)()
        if count is None or not kept or kept[-1].readonly_reason == CONFLICT_REASON or \
                kept[-1].end != count:
            return False
        for line in new_lines:
            self.file.append(line)  # type: ignore[attr-defined]
        texts = [""] * count + new_lines  # the parser reads only from `count` on
        added = _parse_texts(self.file, texts, None, resume_at=count, kept=[],
                             assign_ids=False).items
        given = [it.meta.get("id", "") for it in added]
        if added and all(given) and len(set(given)) == len(given) and \
                not self.ids().intersection(given) and not any(
                    it.readonly_reason for it in added):
            # Only new written ids, none taken: every other item keeps its id (a
            # hand-written bullet's is numbered among the ids before it) and the
            # duplicates are the ones the file had.
            for it, rid in zip(added, given, strict=True):
                it.id = rid
            self.items = kept + added
            return True
        fresh = _parse_texts(self.file, texts, None, resume_at=count, kept=kept)
        self.items = fresh.items
        self.duplicate_ids = fresh.duplicate_ids
        self.readonly_reason = fresh.readonly_reason
        return True

    def ids(self) -> set[str]:
        """Every item's id (written or provisional)."""
        return {it.id for it in self.items}

    def _insertion_point(self) -> int:
        """The index of the line new items go after (a separating blank line is added
        first when needed)."""
        lines = self.file.lines
        if self.items:
            after = self.items[-1].end - 1
            if self.items[-1].readonly_reason == CONFLICT_REASON:
                # Never inside a conflict block: after its closing marker.
                close = next((k for k in range(after + 1, len(lines))
                              if lines[k].text.startswith(">>>>>>>")), None)
                after = close if close is not None else after
            return after
        after = len(lines) - 1
        last_text = after
        while last_text >= 0 and not lines[last_text].text.strip():
            last_text -= 1
        if last_text >= 0 and last_text == after and \
                lines[last_text].text.lstrip().startswith(">"):
            # A bullet straight after a quote or callout would join it.
            self.file.insert_after(after, "")
            after += 1
        return after

    def to_bytes(self) -> bytes:
        return self.file.to_bytes()

    def _reparse(self, *, resume_at: int = 0, kept: list[BulletItem] | None = None) -> None:
        fresh = _parse_text_file(self.file, resume_at=resume_at, kept=kept)
        self.items = fresh.items
        self.duplicate_ids = fresh.duplicate_ids
        self.readonly_reason = fresh.readonly_reason


# -- parsing -------------------------------------------------------------------------------


_R = TypeVar("_R")


def _cycle_gc_paused(func: Callable[..., _R]) -> Callable[..., _R]:
    """Run `func` with the cyclic garbage collector paused.

    Parsing creates tens of thousands of small objects (lines, items, metadata dicts) and
    no reference cycles; without the pause, the collector's repeated full passes over
    them made parsing 10,000 facts up to 40 % slower and its time erratic. Memory is
    still freed by reference counting; the previous collector state is restored.
    """

    @wraps(func)
    def wrapper(*args: object, **kwargs: object) -> _R:
        if not gc.isenabled():
            return func(*args, **kwargs)
        gc.disable()
        try:
            return func(*args, **kwargs)
        finally:
            gc.enable()

    return wrapper


@_cycle_gc_paused
def _identity(item: BulletItem) -> tuple[object, ...]:
    """What an edit of another item must leave as it was. Hand-written bullets carry
    ids numbered by occurrence, which shift when an identical bullet goes; their words
    and metadata identify them instead."""
    return (None if item.provisional else item.id, item.text, item.category_raw,
            item.meta, item.task)


def parse_bullets(data: bytes) -> BulletDocument:
    """Parse a memory file. Never raises; problems become read-only reasons."""
    return _parse_text_file(TextFile.parse(data))


def _frontmatter_end(texts: list[str]) -> int:
    """Index of the first body line (0 when there is no closed frontmatter block)."""
    if not texts or texts[0].rstrip() != "---":
        return 0
    for i in range(1, len(texts)):
        if texts[i].rstrip() in ("---", "..."):
            return i + 1
    return 0


@_cycle_gc_paused
def _parse_text_file(tf: TextFile, *, resume_at: int = 0,
                     kept: list[BulletItem] | None = None) -> BulletDocument:
    """Parse the lines of `tf`. With `kept`, the items before line `resume_at` are
    taken as they are (the caller knows those lines did not change and that the parser
    is between items there) and only the lines from `resume_at` on are read."""
    return _parse_texts(tf, [ln.text for ln in tf.lines], tf.readonly_reason,
                        resume_at=resume_at, kept=kept)


def _parse_texts(tf: TextFile, texts: list[str], doc_reason: str | None, *,
                 resume_at: int = 0, kept: list[BulletItem] | None = None,
                 assign_ids: bool = True) -> BulletDocument:
    """`_parse_text_file` given the lines' texts and the file's own read-only reason
    (`assign_ids=False`: the items' ids are left for the caller to give)."""
    n = len(texts)
    items: list[BulletItem] = list(kept) if kept is not None else []
    i = resume_at if kept is not None else _frontmatter_end(texts)
    fence: tuple[str, int] | None = None
    fence_line = 0
    in_comment = False
    comment_line = 0
    in_conflict = False
    while i < n:
        line = texts[i]
        if fence is not None:
            m = _FENCE.match(line)
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= fence[1] \
                    and not m.group(2).strip():
                fence = None
            i += 1
            continue
        if in_comment:
            if line.count("%%") % 2 == 1:
                in_comment = False
            i += 1
            continue
        m = _FENCE.match(line)
        if m and not (m.group(1)[0] == "`" and "`" in m.group(2)):
            fence = (m.group(1)[0], len(m.group(1)))
            fence_line = i
            i += 1
            continue
        if line.count("%%") % 2 == 1:
            in_comment = True
            comment_line = i
            i += 1
            continue
        first = line[:1]
        if first in ("-", "*", "+") and not _HR.match(line):
            mm = _MARKER.match(line)
            if mm:
                item, i = _read_item(texts, i, mm)
                if in_conflict:
                    item.readonly_reason = CONFLICT_REASON
                items.append(item)
                continue
        elif first in ("<", ">") and line.startswith(("<<<<<<< ", ">>>>>>> ")) or \
                line in ("<<<<<<<", ">>>>>>>"):
            in_conflict = first == "<"
        i += 1
    if fence is not None and doc_reason is None:
        doc_reason = f"code fence opened on line {fence_line + 1} is never closed"
    if in_comment and doc_reason is None:
        doc_reason = f"%% comment opened on line {comment_line + 1} is never closed"
    if doc_reason:
        for it in items:
            it.readonly_reason = it.readonly_reason or doc_reason
    dupes = _assign_ids(items) if assign_ids else {}
    return BulletDocument(file=tf, items=items, readonly_reason=doc_reason, duplicate_ids=dupes)


def _ends_item(line: str) -> bool:
    """True for a line that ends the current top-level item (and is not part of it)."""
    if not line.strip():
        return True
    first = line[:1]
    if first in ("-", "*", "+"):
        return bool(_MARKER.match(line) or _EMPTY_MARKER.match(line) or _HR.match(line))
    if first in (" ", "\t"):
        # An indented `%%` that opens a comment ends the item: the comment is not its text.
        return "%%" in line and line.count("%%") % 2 == 1
    if first in ("#", ">") or _HEADING.match(line):
        return True
    if line.startswith(_MERGE_MARKERS):
        return True  # a git/memvault conflict marker never joins the item above it
    if _FENCE.match(line) or "%%" in line:
        return True
    if line[:1].isdigit() and re.match(r"\d{1,9}[.)](?:[ \t]|\Z)", line):
        return True
    return False


def _read_item(texts: list[str], start: int, mm: re.Match[str]) -> tuple[BulletItem, int]:
    marker, gap, rest = mm.group(1), mm.group(2), mm.group(3)
    n = len(texts)
    j = start + 1
    continuation: list[str] = []
    text_end = start + 1
    child_seen = False
    while j < n:
        nxt = texts[j]
        if _ends_item(nxt):
            break
        fm = _FENCE.match(nxt) if "`" in nxt or "~" in nxt else None
        if fm and not (fm.group(1)[0] == "`" and "`" in fm.group(2)):
            # A code block nested in the item: kept untouched with the children (blank
            # lines included), so editing the item's text never cuts through it.
            child_seen = True
            j = _skip_nested_fence(texts, j + 1, fm.group(1))
            continue
        if not child_seen and _INDENTED_MARKER.match(nxt):
            child_seen = True
        if not child_seen:
            continuation.append(nxt)
            text_end = j + 1
        j += 1
    item = _parse_item_text(start, text_end, j, marker, gap, rest, continuation)
    return item, j


def _skip_nested_fence(texts: list[str], j: int, opener: str) -> int:
    """Index just past a fenced block nested in an item (opened by `opener`)."""
    while j < len(texts):
        line = texts[j]
        m = _FENCE.match(line)
        if m and m.group(1)[0] == opener[0] and len(m.group(1)) >= len(opener) \
                and not m.group(2).strip():
            return j + 1
        if line.strip() and line[:1] not in (" ", "\t"):
            return j  # a line at the margin ends the list item, and the block inside it
        j += 1
    return j


def _parse_item_text(start: int, text_end: int, end: int, marker: str, gap: str, rest: str,
                     continuation: list[str]) -> BulletItem:
    written = None if continuation else _WRITTEN.fullmatch(rest)
    if written:
        meta: dict[str, str] = {}
        for token in written.group(3).split(" "):
            k, _, v = token.partition(":")
            meta.setdefault(k, v)
        item = BulletItem(start, text_end, end, marker, gap, None, "", written.group(1),
                          written.group(2), meta, True, "", "", None)
        try:
            rest.encode("utf-8")
        except UnicodeEncodeError:
            item.readonly_reason = "line is not valid UTF-8"
        return item
    reason: str | None = None
    task: str | None = None
    task_gap = ""
    tm = _TASK.match(rest) if rest[:1] == "[" else None
    if tm:
        task = tm.group(1)
        task_gap = tm.group(2) or ""
        rest = rest[tm.end():]
    if continuation:
        for piece in [rest, *continuation[:-1]]:
            if "<!--" in piece or "-->" in piece:
                reason = "metadata comment is not on the item's last line"
        logical = " ".join([rest.strip(), *(c.strip() for c in continuation)])
        trailing_src = continuation[-1]
        trailing = trailing_src[len(trailing_src.rstrip(" \t")):]
    else:
        stripped = rest.rstrip(" \t")
        trailing = rest[len(stripped):]
        logical = stripped
    s = logical.rstrip(" \t")
    block_suffix = ""
    bm = _BLOCK_ID.search(s) if "^" in s else None  # pre-check: search scans every offset
    if bm:
        block_suffix = s[bm.start():]
        s = s[:bm.start()]
    meta = {}
    has_comment = False
    if s.endswith("-->"):
        open_at = s.rfind("<!--")
        if open_at >= 0:
            body = s[open_at + 4:-3]
            tokens = body.split()
            if tokens and _META_BODY.fullmatch(body) and "<!--" not in body:
                has_comment = True
                for t in tokens:
                    k, _, v = t.partition(":")
                    meta.setdefault(k, v)
                s = s[:open_at].rstrip(" \t")
    if "<!--" in s:
        tail = s[s.rfind("<!--"):]
        if "-->" not in tail:
            reason = reason or "metadata comment is never closed (<!-- without -->)"
        elif has_comment and "id:" in tail:
            reason = reason or "two metadata comments on one line"
        elif not has_comment and "id:" in tail:
            reason = reason or "text after the metadata comment"
    category: str | None = None
    if s.endswith("]"):
        # Same rule as _CATEGORY.search(s), without scanning every offset: a category
        # has no "[" inside, so it can only start at the last "[".
        at = s.rfind("[")
        cm = _CATEGORY_AT.match(s, at) if at > 0 and s[at - 1] in " \t" else None
        if cm and s[:at].strip():
            category = cm.group(1)
            s = s[:at].rstrip(" \t")
    text = s
    # Positional, in field order: keyword arguments made this call ~2x slower, and it runs
    # once per fact (see docs/performance.md).
    item = BulletItem(start, text_end, end, marker, gap, task, task_gap, text, category,
                      meta, has_comment, block_suffix, trailing, reason)
    if reason is None:
        try:
            logical.encode("utf-8")
        except UnicodeEncodeError:
            item.readonly_reason = "line is not valid UTF-8"
    return item


def _assign_ids(items: list[BulletItem]) -> dict[str, list[BulletItem]]:
    """Give every item its id (written, or provisional for a hand-written bullet);
    returns the ids more than one item has, with those items in file order."""
    occurrences: dict[str, int] = {}
    written: set[str] | None = None
    for it in items:
        given = it.meta.get("id", "")
        if given:
            it.id = given
        else:
            if written is None:
                written = {i.meta["id"] for i in items if i.meta.get("id")}
            key = normalise_text(it.text)
            nth = occurrences.get(key, 0)
            candidate = provisional_id(it.text, nth)
            while candidate in written:
                # A bullet typed again with the words of one memvault stamped earlier
                # (its provisional id became a written id): never collide with it.
                nth += 1
                candidate = provisional_id(it.text, nth)
            occurrences[key] = nth + 1
            it.id = candidate
            it.provisional = True
    ids = [it.id for it in items]
    if len(set(ids)) == len(ids):  # the usual file: no id twice (checked at C speed)
        return {}
    seen: dict[str, list[BulletItem]] = {}
    for it in items:
        seen.setdefault(it.id, []).append(it)
    return {k: v for k, v in seen.items() if len(v) > 1}


# -- rendering -----------------------------------------------------------------------------


def normalise_text(text: str) -> str:
    """The comparison form of a text: case-folded, whitespace folded. Never written."""
    return " ".join(text.casefold().split())


def provisional_id(text: str, occurrence: int = 0) -> str:
    """A deterministic id for a hand-written item that has none yet."""
    key = f"{normalise_text(text)}\x00{occurrence}".encode("utf-8", "surrogateescape")
    digest = hashlib.sha256(key).digest()
    return encode_id(int.from_bytes(digest[:8], "big"))


def encode_id(number: int, length: int = 6) -> str:
    chars = []
    for _ in range(length):
        number, rem = divmod(number, 36)
        chars.append(_ID_ALPHABET[rem])
    return "".join(chars)


def format_comment(meta: dict[str, str]) -> str:
    return "<!-- " + " ".join(f"{k}:{v}" for k, v in meta.items()) + " -->"


def render_new_item(text: str, category: str | None, meta: dict[str, str],
                    task: str | None = None) -> str:
    """The line memvault writes for a new record: `- text [category] <!-- meta -->`."""
    parts = ["- "]
    if task is not None:
        parts.append(f"[{task}] ")
    parts.append(text)
    if category:
        parts.append(f" [{category}]")
    if meta:
        parts.append(" " + format_comment(meta))
    return "".join(parts)


def render_updated_item(item: BulletItem, *, text: str | None = None,
                        category: str | None = None, meta: dict[str, str] | None = None,
                        task: str | None = None) -> str:
    """The item's line with some fields changed and everything else kept as written.

    Kept: the marker and its spacing, the task box, an unchanged category's spelling,
    unknown metadata keys in their order, a `^block-id` and trailing whitespace.
    """
    new_text = item.text if text is None else text
    new_task = item.task if task is None else task
    cat = item.category_raw if category is None else category
    if cat is None and _CATEGORY.search(new_text):
        cat = "other"  # otherwise the text's own trailing [word] would read as the category
    parts = [item.marker, item.gap]
    if new_task is not None:
        parts.append(f"[{new_task}]{item.task_gap or ' '}")
    parts.append(new_text)
    if cat:
        parts.append(f" [{cat}]")
    new_meta = item.meta if meta is None else meta
    if new_meta:
        parts.append(" " + format_comment(new_meta))
    parts.append(item.block_suffix)
    parts.append(item.trailing)
    return "".join(parts)
