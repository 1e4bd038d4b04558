"""Tidying what a line-based merge can leave in a memory file (pure: bytes in, bytes out).

A clone synced by plain git or Obsidian Git merges Memory.md, Lessons.md and Inbox.md
with git's `union` (or, for an old vault, its text merge). That never loses a line, but it
can leave what memvault's own driver never would. `tidy` settles it, deterministically, so
every clone that tidies the same merged file writes the same bytes:

- **A forgotten record back**: an item whose id has an active tombstone (it was forgotten
  or rejected on some machine) is removed. Forget wins, as with the driver.
- **One id on several lines**. Copies that differ only in `updated:` are one change: the
  newest stamp is kept. Copies with different content, each a version memvault wrote
  (the journal knows the text for that id) and stamped differently, are one fact edited
  on two machines: the newest is kept and each older version is returned in `dropped`
  (the caller records it in the journal, so `memory show` still has it); on equal
  stamps the text that sorts last wins, the same on every clone. Any other copy (a
  copied line, a hand edit on one or two machines) is nobody's older version: both are
  kept, and the later copy in the file gets a new id derived from its id and text.
- **A hand-written bullet beside the fact it became**. A bullet typed without an id gets
  one when memvault first writes it (`doctor --fix` stamps it, `memory edit` keeps the id
  it was shown under); when that happens on one side of a merge and the lines next to it
  change on the other, the union keeps the old id-less line too. An id-less bullet is
  such a leftover, and is removed (once, saying which fact it copied), when a fact with
  an id in the same file has its words (match key) and category, or its words and the id
  memvault gives those words. Its words are then still in the file, so nothing is lost.
  An id-less line with a fact's *earlier* words (the fact was edited since) stays: a
  union's leftover and the same words typed again after the edit look alike, and a
  duplicate the user can delete beats words lost. A leftover of a forgotten
  fact goes with it (and the report never repeats the words). The same hand-written
  line twice (same words, category, task box and block id; a union keeps both sides'
  copy when lines around it moved) is kept once, the first. A bullet with nested lines
  under it is never taken for a copy.
- **Conflict blocks** (git's `<<<<<<<`/`=======`/`>>>>>>>`, optionally with a `|||||||`
  base section, or memvault's own): settled fact by fact when that is decidable — both
  sections hold only items, and every id on both sides is the same change (or one side
  equals the base) — keeping this clone's items first, then the incoming ones. A block
  about a forgotten id is dropped. Anything else is left for `memvault resolve`.

Only editable items outside conflict blocks are touched; headings, prose and every other
line keep their bytes.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from memvault.core.bullets import (
    CONFLICT_REASON,
    BulletDocument,
    BulletItem,
    encode_id,
    normalise_text,
    parse_bullets,
    provisional_id,
    render_updated_item,
)
from memvault.core.lines import Line, TextFile
from memvault.core.merge import CONFLICT_CLOSE, CONFLICT_OPEN, DELETED_HERE, strip_updated
from memvault.core.records import match_key
from memvault.core.tidy_check import Tidied, might_need_tidy

__all__ = ["ConflictBlock", "DroppedVersion", "Leftover", "Tidied", "might_need_tidy", "tidy"]

LOCAL_LABELS = ("this clone",)
"""Labels of a git-style block whose first section is this clone's (memvault writes them)."""

_FACT_IN_REASON = re.compile(r"\bfact ([0-9A-Za-z_-]+)\b")


@dataclass(slots=True)
class ConflictBlock:
    """One conflict block: lines[start:end] of the file, from open marker to close."""

    start: int
    end: int
    kind: str  # "memvault" or "git"
    reason: str
    local: list[Line]
    incoming: list[Line] | None  # None: memvault's "deleted on one side" block
    base: list[Line] | None = None
    local_deleted: bool = False
    """A memvault block about a fact this clone deleted (its only section is incoming)."""

    @property
    def line_no(self) -> int:
        return self.start + 1

    def fact_ids(self) -> list[str]:
        found = _FACT_IN_REASON.search(self.reason) if self.kind == "memvault" else None
        if found:
            return [found.group(1)]
        ids: list[str] = []
        for section in (self.local, self.incoming or []):
            for it in _items(section):
                if it.id not in ids and not it.provisional:
                    ids.append(it.id)
        return ids

    def versions(self) -> tuple[list[str], list[str]]:
        """(this clone's lines, the incoming lines), as the user should compare them."""
        if self.kind == "memvault" and self.incoming is None:
            lines = [ln.text for ln in self.local]
            return ([], lines) if self.local_deleted else (lines, [])
        return [ln.text for ln in self.local], [ln.text for ln in self.incoming or []]

    def to_dict(self) -> dict[str, Any]:
        mine, theirs = self.versions()
        return {"line": self.line_no, "kind": self.kind, "facts": self.fact_ids(),
                "reason": self.reason, "this_clone": mine, "incoming": theirs}


@dataclass(slots=True)
class DroppedVersion:
    """An older version of a fact edited on two machines (its text goes to the journal)."""

    record: str
    kept_text: str
    dropped_text: str
    category: str | None


@dataclass(slots=True)
class Leftover:
    """An id-less bullet a merge left as a copy: beside the fact with an id that it became
    (`record`), or beside the same hand-written line (`copy_of_line`)."""

    line_no: int
    record: str
    copy_of_line: int = 0


# -- finding blocks -----------------------------------------------------------------------------


def find_blocks(lines: list[Line], *, local_first: bool = True) -> list[ConflictBlock]:
    """Every balanced conflict block. `local_first`: in a git-style block without
    memvault's labels, the first section is this clone's (false during a rebase)."""
    blocks: list[ConflictBlock] = []
    i, n = 0, len(lines)
    while i < n:
        text = lines[i].text
        if not text.startswith("<<<<<<<"):
            i += 1
            continue
        mine = text.startswith(CONFLICT_OPEN)
        split = base_at = close = None
        for k in range(i + 1, n):
            t = lines[k].text
            if t.startswith("<<<<<<<"):
                break  # another block opens before this one closed: not balanced
            if t.startswith("|||||||") and split is None and not mine:
                base_at = k
            elif t == "=======" and split is None:
                split = k
            elif (t == CONFLICT_CLOSE) if mine else t.startswith(">>>>>>>"):
                close = k
                break
        if close is None or (not mine and split is None):
            i += 1
            continue
        if mine:
            first = lines[i + 1:split if split is not None else close]
            second = lines[split + 1:close] if split is not None else None
            reason = text[len(CONFLICT_OPEN):].strip()
            blocks.append(ConflictBlock(i, close + 1, "memvault", reason, first, second,
                                        local_deleted=DELETED_HERE in reason))
        else:
            assert split is not None
            first = lines[i + 1:base_at if base_at is not None else split]
            second = lines[split + 1:close]
            base = lines[base_at + 1:split] if base_at is not None else None
            label = text[7:].strip()
            local_is_first = local_first or label in LOCAL_LABELS
            local, incoming = (first, second) if local_is_first else (second, first)
            blocks.append(ConflictBlock(i, close + 1, "git", label or "text changed on both "
                                        "sides", local, incoming, base))
        i = close + 1
    return blocks


# -- tidying ------------------------------------------------------------------------------------


def _items(lines: list[Line]) -> list[BulletItem]:
    return parse_bullets(TextFile(lines=[Line(ln.text, "\n") for ln in lines]).to_bytes()).items


def _section(lines: list[Line]) -> tuple[BulletDocument, bool]:
    """The section parsed, and whether it holds nothing but items and blank lines."""
    doc = parse_bullets(TextFile(lines=[Line(ln.text, "\n") for ln in lines]).to_bytes())
    covered: set[int] = set()
    for it in doc.items:
        covered.update(range(it.start, it.end))
    only_items = all(k in covered or not ln.text.strip() for k, ln in enumerate(lines))
    return doc, only_items


def _essence(doc: BulletDocument, it: BulletItem) -> tuple[str, ...]:
    return tuple(strip_updated(ln.text) for ln in doc.file.lines[it.start:it.end])


def _stamp(it: BulletItem) -> int:
    value = it.meta.get("updated", "")
    return int(value) if value.isdigit() else 0


def _decide(block: ConflictBlock, dead: set[str]) -> list[Line] | None:
    """The lines that settle the block, or None when the user must choose."""
    if block.kind == "memvault":
        ids = block.fact_ids()
        if ids and ids[0] in dead:
            return []  # about a forgotten fact: forget wins
        if block.incoming is None:
            return None
        (ldoc, _), (idoc, _) = _section(block.local), _section(block.incoming)
        if len(ldoc.items) == 1 == len(idoc.items) and \
                _essence(ldoc, ldoc.items[0]) == _essence(idoc, idoc.items[0]):
            winner = block.incoming if _stamp(idoc.items[0]) > _stamp(ldoc.items[0]) \
                else block.local
            return list(winner)
        return None
    assert block.incoming is not None
    (ldoc, lonly), (idoc, ionly) = _section(block.local), _section(block.incoming)
    if not (lonly and ionly):
        return None  # prose changed on both sides: the user decides
    bdoc = _section(block.base)[0] if block.base is not None else None
    out: list[Line] = []
    local_ids = {it.id for it in ldoc.items}
    local_texts = {normalise_text(it.text) for it in ldoc.items}
    by_id = {it.id: it for it in idoc.items}
    for it in ldoc.items:
        if it.id in dead:
            continue
        lines = block.local[it.start:it.end]
        other = by_id.get(it.id)
        if other is not None:
            mine, theirs = _essence(ldoc, it), _essence(idoc, other)
            base = next((b for b in (bdoc.items if bdoc else []) if b.id == it.id), None)
            base_e = _essence(bdoc, base) if bdoc is not None and base is not None else None
            if mine == theirs:
                if _stamp(other) > _stamp(it):
                    lines = block.incoming[other.start:other.end]
            elif mine == base_e:
                lines = block.incoming[other.start:other.end]
            elif theirs != base_e:
                return None  # changed differently on both sides
        out.extend(lines)
    for it in idoc.items:
        if it.id in local_ids or it.id in dead or normalise_text(it.text) in local_texts:
            continue
        out.extend(block.incoming[it.start:it.end])
    ends_blank = any(sec and not sec[-1].text.strip() for sec in (block.local, block.incoming))
    if ends_blank:
        out.append(Line("", ""))
    return out


def derived_id(record: str, text: str, taken: set[str]) -> str:
    """A new id for a copy, the same on every clone that tidies the same file."""
    n = 0
    while True:
        digest = hashlib.sha256(f"{record}\x00{normalise_text(text)}\x00{n}".encode(
            "utf-8", "surrogateescape")).digest()
        candidate = encode_id(int.from_bytes(digest[:8], "big"))
        if candidate not in taken:
            return candidate
        n += 1


def derived_from_any(record: str, text: str, originals: Iterable[str]) -> bool:
    """Whether `record` is the id `derived_id` gives a copy with `text` of one of
    `originals` (its first choice: a taken first choice is vanishingly rare). The text is
    normalised once, so checking an id against a whole file's ids stays cheap."""
    norm = normalise_text(text)
    for original in originals:
        digest = hashlib.sha256(f"{original}\x00{norm}\x000".encode(
            "utf-8", "surrogateescape")).digest()
        if encode_id(int.from_bytes(digest[:8], "big")) == record:
            return True
    return False


def tidy(data: bytes, *, dead: Iterable[str] = (), local_first: bool = True,
         path: str = "", known: Callable[[str, str], bool] = lambda _id, _text: False,
         renumber_copies: bool = True, quick_check: bool = True,
         parsed: BulletDocument | None = None) -> Tidied:
    """Settle what a merge left in a bullet file (see the module doc). `known(id, text)`
    says whether the journal holds that text for that record (a memvault version).
    `renumber_copies=False` leaves a copied line's duplicate id as it is (ambiguous).
    `quick_check=False`: the caller already ran `might_need_tidy` on these bytes.
    `parsed`: `parse_bullets(data)` when the caller has it (a new object it may lose to
    the edits made here; used only when `data` holds no conflict marker)."""
    dead = set(dead)
    if quick_check and not might_need_tidy(data, dead):
        return Tidied(data)
    out = Tidied(data)
    where = f"{path}: " if path else ""
    if b"<<<<<<<" in data:
        tf = TextFile.parse(data)
        if tf.readonly_reason:
            return out
        _settle_blocks(tf, dead, local_first, out, where)
        doc = parse_bullets(tf.to_bytes())
    else:
        doc = parsed if parsed is not None else parse_bullets(data)
        if doc.file.readonly_reason:
            return out
    # Copies first: a copy that became a fact of its own is not the forgotten one.
    _settle_duplicates(doc, out, where, known, renumber_copies)
    out.notes += drop_leftovers(doc, known, where, out.leftovers)
    if dead:
        _drop_dead(doc, dead, out, where)
    if out.all_notes:  # every change says so; no note, the same bytes
        out.data = doc.to_bytes()
    if b"<<<<<<<" in out.data:
        out.blocks = find_blocks(doc.file.lines, local_first=local_first)
    out.doc = doc
    return out


def _settle_blocks(tf: TextFile, dead: set[str], local_first: bool, out: Tidied,
                   where: str) -> None:
    """Replace each decidable conflict block of `tf` by the lines that settle it."""
    eol = tf.dominant_eol
    for block in reversed(find_blocks(tf.lines, local_first=local_first)):
        settled = _decide(block, dead)
        if settled is None:
            continue
        last_eol = tf.lines[block.end - 1].eol
        new = [Line(ln.text, ln.eol or eol) for ln in settled]
        if new and block.end == len(tf.lines):
            new[-1].eol = last_eol
        tf.lines[block.start:block.end] = new
        facts = ", ".join(block.fact_ids()) or "notes"
        out.notes.append(f"{where}settled a merge conflict block at line {block.line_no} "
                         f"({facts}) fact by fact")


def _drop_dead(doc: BulletDocument, dead: set[str], out: Tidied, where: str) -> None:
    for it in sorted((it for it in doc.items if it.id in dead and it.editable
                      and not it.provisional), key=lambda it: it.start, reverse=True):
        doc.delete_item(it)
        out.notes.append(f"{where}removed {it.id}: it was forgotten (a merge, or an "
                         "unfinished forget, had left its line)")


def merge_leftovers(doc: BulletDocument, known: Callable[[str, str], bool]
                    ) -> list[tuple[BulletItem, Leftover]]:
    """Each id-less bullet a merge left as a copy (see the module doc), in file order,
    with what it copies. Items inside a conflict block are neither copy nor original
    (they are read-only until `memvault resolve`)."""
    # Never one with nested lines under it: those would go with it.
    hand = [it for it in doc.items if it.provisional and it.editable and it.text_end == it.end]
    if not hand:
        return []
    by_id: dict[str, BulletItem] = {}
    by_words: dict[tuple[str, str], BulletItem] = {}
    # Only facts that may share words with a hand bullet get their match key computed:
    # an ASCII text's key starts with its first letter, lower-cased.
    firsts = {match_key(it.text)[:1] for it in hand}
    for it in doc.items:
        if it.editable and not it.provisional:
            by_id.setdefault(it.id, it)
            head = it.text[:1]
            if not head.isascii() or head.lower() in firsts or head.isspace():
                by_words.setdefault((match_key(it.text), _category(it)), it)
    found: list[tuple[BulletItem, Leftover]] = []
    copies: dict[str, list[BulletItem]] = {}
    for it in hand:
        copies.setdefault(normalise_text(it.text), []).append(it)
    for same in copies.values() if by_id else ():
        rest = []
        for it in same:
            fact = by_words.get((match_key(it.text), _category(it)))
            if fact is not None and _anchor(it) in ("", _anchor(fact)):
                found.append((it, Leftover(it.line_no, fact.id)))
            else:
                rest.append(it)
        if not rest:
            continue
        words = match_key(rest[0].text)
        # Only a fact that still has these words: a line with a fact's *earlier* words
        # may be the user's own, typed again after an edit, and must never be removed.
        born = [fact for fact in _born_from(rest[0].text, len(same), by_id)
                if match_key(fact.text) == words]
        # at most one copy per fact those words became (the shorter list decides)
        found += [(it, Leftover(it.line_no, fact.id))
                  for it, fact in zip(rest, born, strict=False)
                  if _anchor(it) in ("", _anchor(fact))]
    taken = {id(it) for it, _ in found}
    first: dict[tuple[str, str, str | None, str], BulletItem] = {}
    for it in hand:  # the same hand-written line twice (a union keeps both sides' copy)
        if id(it) in taken:
            continue
        key = (match_key(it.text), _category(it), it.task, _anchor(it))
        if key in first:
            found.append((it, Leftover(it.line_no, "", first[key].line_no)))
        else:
            first[key] = it
    return sorted(found, key=lambda pair: pair[0].start)


def _born_from(text: str, copies: int, by_id: dict[str, BulletItem]) -> list[BulletItem]:
    """Facts whose id is one memvault gives a hand-written bullet with these words (the
    nth such bullet gets the nth id not already written; see `core.bullets`)."""
    out: list[BulletItem] = []
    nth = 0
    while nth < copies + len(out) + 1:
        fact = by_id.get(provisional_id(text, nth))
        if fact is not None:
            out.append(fact)
        nth += 1
    return out


def _category(it: BulletItem) -> str:
    return (it.category_raw or "").lower()


def _anchor(it: BulletItem) -> str:
    """The item's block id (`^name`, which other notes may link to), or ""."""
    return it.block_suffix.strip()


def drop_leftovers(doc: BulletDocument, known: Callable[[str, str], bool], where: str = "",
                   removed: list[Leftover] | None = None) -> list[str]:
    """Remove the copies `merge_leftovers` finds (one parse of the file for all of them);
    one note per original, naming the file, the lines and what they copied (never the
    words: they may be forgotten ones)."""
    found = merge_leftovers(doc, known)
    if not found:
        return []
    if removed is not None:
        removed.extend(left for _, left in found)
    by_original: dict[tuple[str, int], list[int]] = {}
    for _, left in found:
        by_original.setdefault((left.record, left.copy_of_line), []).append(left.line_no)
    doc.delete_items([it for it, _ in found])
    notes = []
    for (record, line), copies in by_original.items():
        shown = ", ".join(str(n) for n in copies[:5])
        if len(copies) > 5:
            shown += f" and {len(copies) - 5} more"
        one = "an id-less copy" if record else "a copy"
        which = f"line {shown}: {one}" if len(copies) == 1 else \
            f"lines {shown}: {len(copies)} {'id-less ' if record else ''}copies"
        if record:
            notes.append(f"{where}removed {which} of {record} that a merge left beside it "
                         "(the words it had before memvault gave it an id)")
        else:
            notes.append(f"{where}removed {which} of the hand-written bullet on line {line} "
                         "(a merge kept both sides' copy)")
    return notes


def _settle_duplicates(doc: BulletDocument, out: Tidied, where: str,
                       known: Callable[[str, str], bool], renumber_copies: bool) -> None:
    left: set[str] = set()  # copies left for `doctor --fix` (renumber_copies=False)
    while doc.duplicate_ids:  # (the parser lists every id it read twice)
        groups: dict[str, list[BulletItem]] = {}
        for it in doc.items:
            if it.editable and not it.provisional and it.id not in left:
                groups.setdefault(it.id, []).append(it)
        dup = next((items for items in groups.values() if len(items) > 1), None)
        if dup is None:
            return
        first, other = dup[0], dup[1]
        lines = f"lines {first.line_no}, {other.line_no}"
        if _essence(doc, other) == _essence(doc, first):
            keep = max((first, other), key=lambda it: (_stamp(it), -it.start))
            doc.delete_item(other if keep is first else first)
            out.notes.append(f"{where}duplicate id {keep.id} on {lines}: the same change made "
                             "on two machines; kept the newer stamp")
        elif known(first.id, first.text) and known(other.id, other.text):
            # Two versions memvault wrote: one fact edited on two machines. The newer
            # stamp wins (on a tie, the text that sorts last: the same on every clone).
            keep, drop = sorted((first, other), key=lambda it: (_stamp(it), _essence(doc, it)),
                                reverse=True)
            out.dropped.append(DroppedVersion(keep.id, keep.text, drop.text,
                                              keep.category_raw))
            doc.delete_item(drop)
            out.notes.append(f"{where}duplicate id {keep.id} on {lines}: the fact was edited "
                             "on two machines; kept the newer version, the other is in its "
                             f"history (`memvault memory show {keep.id}`)")
        elif not renumber_copies:
            left.add(first.id)  # ambiguous until the user (or `doctor --fix`) decides
        else:
            new_id = _renumber(doc, other)
            out.renumbered.append(f"{where}duplicate id {first.id} on {lines} with different "
                                  f"text (a copied line, or hand edits on two machines): the "
                                  f"later copy is now {new_id}")


# -- reading past a conflict and resolving it ---------------------------------------------------


def local_view(data: bytes, *, local_first: bool = True) -> bytes:
    """The file as this clone sees it: each open block replaced by this clone's version."""
    if b"<<<<<<<" not in data:
        return data
    tf = TextFile.parse(data)
    for block in reversed(find_blocks(tf.lines, local_first=local_first)):
        mine = [] if block.local_deleted else block.local
        eol = tf.dominant_eol
        tf.lines[block.start:block.end] = [Line(ln.text, ln.eol or eol) for ln in mine]
    return tf.to_bytes()


CHOICES = ("ours", "theirs", "both")


def resolve_block(data: bytes, block: ConflictBlock, choice: str) -> bytes:
    """Replace one block by this clone's version ("ours"), the incoming one ("theirs"),
    or both ("both"; a second copy of the same fact gets a derived id)."""
    if choice not in CHOICES:
        raise ValueError(choice)
    tf = TextFile.parse(data)
    mine, theirs = block.versions()
    texts = {"ours": mine, "theirs": theirs, "both": mine + theirs}[choice]
    eol = tf.dominant_eol
    last_eol = tf.lines[block.end - 1].eol
    new = [Line(t, eol) for t in texts]
    if new and block.end == len(tf.lines):
        new[-1].eol = last_eol
    tf.lines[block.start:block.end] = new
    merged = tf.to_bytes()
    if choice != "both":
        return merged
    doc = parse_bullets(merged)
    while True:  # the second copy of one fact becomes a fact of its own
        seen: set[str] = set()
        copy = None
        for it in doc.items:
            if it.provisional or not it.editable:
                continue
            if it.id in seen:
                copy = it
                break
            seen.add(it.id)
        if copy is None:
            return doc.to_bytes()
        _renumber(doc, copy)


def _renumber(doc: BulletDocument, item: BulletItem) -> str:
    new_id = derived_id(item.id, item.text, {i.id for i in doc.items})
    meta = dict(item.meta)
    meta["id"] = new_id
    doc.replace_item(item, render_updated_item(item, meta=meta))
    return new_id


__all__ = ["CHOICES", "CONFLICT_REASON", "ConflictBlock", "DroppedVersion", "Leftover", "Tidied",
           "derived_from_any", "derived_id", "drop_leftovers", "find_blocks", "local_view",
           "merge_leftovers", "might_need_tidy", "resolve_block", "tidy"]
