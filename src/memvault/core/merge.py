"""Three-way merge of memory files, fact by fact (the `memvault merge-driver` core).

`merge_bullet_files(base, ours, theirs)` merges Memory.md, Lessons.md or Inbox.md bytes
by record id, using the one bullet grammar (`memvault.core.bullets`):

- a fact changed on one side only takes that change; the same change on both is taken once,
  and two versions that differ only in `updated:` (the same edit made on two machines, a
  fact merely touched on one side) are one change: the newer timestamp is kept;
- facts added on either side are all kept, ours first, in each side's order; a fact added
  on both sides with the same text (different ids) is kept once;
- a deletion beats an unchanged line;
- the same fact changed differently on both sides keeps both versions between conflict
  markers that name the fact, this clone's version first (`local_is_theirs` says that
  this clone's side is `theirs`, as in a rebase); so does a fact deleted on one side
  and edited on the other, unless the edited text is tombstoned (forgotten) — then the
  forget wins: a forgotten fact never comes back from a machine that still had it;
- the prose around the facts (headings, notes) merges like git would: a change on one
  side wins, overlapping changes go through `merge_text` (the driver passes
  `git merge-file`) or become git-style conflict markers.

`merge_json_lines` merges events.jsonl / tombstones.jsonl as a union of lines that keeps
deletions (a `forget --permanent` purge stays purged) and a line one side holds twice.

Pure: bytes in, bytes out. Never raises on odd input; never drops a line of text it was
not told to drop.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from memvault.core.bullets import BulletDocument, BulletItem, parse_bullets
from memvault.core.lines import Line, TextFile
from memvault.core.records import match_key

CONFLICT_OPEN = "<<<<<<< memvault conflict:"
CONFLICT_SPLIT = "======="
CONFLICT_CLOSE = ">>>>>>> memvault conflict end"
CHANGED_ON_BOTH = "was changed on both sides"
EDITED_HERE = "edited on this clone and deleted on the other side"
DELETED_HERE = "deleted on this clone and edited on the other side"

TextMerger = Callable[[bytes, bytes, bytes], tuple[bytes, bool]]
"""merge_text(base, ours, theirs) -> (merged bytes, conflicted)."""


@dataclass(slots=True)
class MergeResult:
    data: bytes
    conflicts: list[str] = field(default_factory=list)
    """One human line per conflict (fact id and reason, or a prose region)."""
    dropped_forgotten: list[str] = field(default_factory=list)
    """Ids of facts removed because their text is tombstoned."""

    @property
    def clean(self) -> bool:
        return not self.conflicts


# -- the simple text merge used when git is not at hand -------------------------------------


def simple_text_merge(base: bytes, ours: bytes, theirs: bytes) -> tuple[bytes, bool]:
    """Take the side that changed; when both changed differently, keep both in markers."""
    if ours == theirs or theirs == base:
        return ours, False
    if ours == base:
        return theirs, False
    nl = b"" if ours.endswith(b"\n") or not ours else b"\n"
    nt = b"" if theirs.endswith(b"\n") or not theirs else b"\n"
    out = (b"<<<<<<< ours\n" + ours + nl + b"=======\n" + theirs + nt + b">>>>>>> theirs\n")
    return out, True


# -- JSON lines ---------------------------------------------------------------------------


def merge_json_lines(base: bytes, ours: bytes, theirs: bytes) -> bytes:
    """Union of lines: ours in order, then theirs' new lines; a line deleted on either
    side (and present in base) stays deleted. A torn last line is kept as a line.

    A line is known by its bytes and its copy number (`core.journal_lines.occurrences`):
    a line one side holds twice on purpose (forget, restore, forget within one second
    write one tombstone line twice) is kept twice, the n-th copy on one side being the
    n-th on the other."""
    from memvault.core.journal_lines import occurrences

    def lines(data: bytes) -> list[tuple[bytes, int]]:
        return occurrences(ln.rstrip(b"\r") for ln in data.split(b"\n") if ln.strip())

    b, o, t = lines(base), lines(ours), lines(theirs)
    base_set, ours_set, theirs_set = set(b), set(o), set(t)
    deleted = {ln for ln in base_set if ln not in ours_set or ln not in theirs_set}
    out: list[bytes] = []
    seen: set[tuple[bytes, int]] = set()
    for ln in o + t:
        if ln in seen or ln in deleted:
            continue
        seen.add(ln)
        out.append(ln[0])
    return b"".join(ln + b"\n" for ln in without_erased_lines(out))


def without_erased_lines(lines: list[bytes]) -> list[bytes]:
    """Journal lines minus the events of records a `forget --permanent` erased: a side
    that had not heard of the erasure yet (an edit made meanwhile) cannot bring the
    words back. The content-free `fact.forgotten` events themselves stay."""
    import json

    erased: set[str] = set()
    parsed: list[dict[str, object] | None] = []
    for ln in lines:
        obj = None
        if b'"record"' in ln:
            try:
                loaded = json.loads(ln)
                obj = loaded if isinstance(loaded, dict) else None
            except ValueError:
                obj = None
        parsed.append(obj)
        if obj and obj.get("type") == "fact.forgotten" and obj.get("permanent"):
            erased.add(str(obj.get("record")))
    if not erased:
        return lines
    return [ln for ln, obj in zip(lines, parsed, strict=True)
            if obj is None or obj.get("record") not in erased
            or obj.get("type") == "fact.forgotten"]


# -- bullet files -------------------------------------------------------------------------


@dataclass(slots=True)
class _Side:
    doc: BulletDocument
    items: dict[str, BulletItem]
    units: list[tuple[str, str]]  # ("p", text) | ("i", id)
    prose: list[Line]  # parallel to units: the Line for "p" units

    def content(self, item_id: str) -> list[Line]:
        it = self.items[item_id]
        return self.doc.file.lines[it.start:it.end]

    def texts(self, item_id: str) -> tuple[str, ...]:
        return tuple(ln.text for ln in self.content(item_id))

    def essence(self, item_id: str) -> tuple[str, ...]:
        """The item's lines without its `updated:` stamp (what the user would see change)."""
        return tuple(strip_updated(ln.text) for ln in self.content(item_id))

    def updated(self, item_id: str) -> int:
        value = self.items[item_id].meta.get("updated", "")
        return int(value) if value.isdigit() else 0


_UPDATED = re.compile(r"(?<=[ \t])updated:\S*(?=[ \t]+(?:[A-Za-z_][\w.-]*:\S*[ \t]+)*-->)")


def strip_updated(line: str) -> str:
    """A line without the `updated:` stamp of its metadata comment (for comparing)."""
    return _UPDATED.sub("", line) if "updated:" in line else line


def _side(doc: BulletDocument) -> _Side:
    items: dict[str, BulletItem] = {}
    starts: dict[int, BulletItem] = {}
    for it in doc.items:
        if it.id not in items:  # a duplicate id: the later copy is treated as prose
            items[it.id] = it
            starts[it.start] = it
    units: list[tuple[str, str]] = []
    prose: list[Line] = []
    lines = doc.file.lines
    i = 0
    while i < len(lines):
        started = starts.get(i)
        if started is not None:
            units.append(("i", started.id))
            prose.append(Line("", ""))
            i = started.end
        else:
            units.append(("p", lines[i].text))
            prose.append(lines[i])
            i += 1
    return _Side(doc, items, units, prose)


def _keys(side: _Side, base: _Side) -> list[str]:
    """Sequence keys for the diff: prose by text, items by id plus a change flag."""
    out = []
    for kind, value in side.units:
        if kind == "p":
            out.append("p\x00" + value)
        elif value not in base.items:
            out.append("i\x00" + value + "\x00new")
        elif side is not base and side.texts(value) != base.texts(value):
            out.append("i\x00" + value + "\x00changed")
        else:
            out.append("i\x00" + value)
    return out


def _sync_regions(base: list[str], a: list[str], b: list[str]) -> list[tuple[int, ...]]:
    """Regions where base, a and b agree (the diff3 algorithm of bzr's merge3)."""
    am = difflib.SequenceMatcher(None, base, a, autojunk=False).get_matching_blocks()
    bm = difflib.SequenceMatcher(None, base, b, autojunk=False).get_matching_blocks()
    ia = ib = 0
    out: list[tuple[int, ...]] = []
    while ia < len(am) and ib < len(bm):
        abase, amatch, alen = am[ia]
        bbase, bmatch, blen = bm[ib]
        lo, hi = max(abase, bbase), min(abase + alen, bbase + blen)
        if lo < hi:
            asub = amatch + (lo - abase)
            bsub = bmatch + (lo - bbase)
            out.append((lo, hi, asub, asub + hi - lo, bsub, bsub + hi - lo))
        if abase + alen < bbase + blen:
            ia += 1
        else:
            ib += 1
    out.append((len(base), len(base), len(a), len(a), len(b), len(b)))
    return out


class _Merger:
    def __init__(self, docs: list[BulletDocument], is_forgotten: Callable[[str], bool],
                 merge_text: TextMerger, local_is_theirs: bool) -> None:
        self.b, self.o, self.t = (_side(d) for d in docs)
        self.is_forgotten = is_forgotten
        self.merge_text = merge_text
        self.local_is_theirs = local_is_theirs
        self.result = MergeResult(b"")
        self.eol = self.o.doc.file.dominant_eol
        self.out: list[Line] = []
        self.emitted: set[str] = set()
        self.ours_texts = {match_key(it.text) for it in self.o.doc.items}
        self.base_texts = {match_key(it.text) for it in self.b.doc.items}

    # -- emitting ------------------------------------------------------------------------

    def _line(self, text: str) -> None:
        self.out.append(Line(text, self.eol))

    def _emit_item(self, item_id: str) -> None:
        if item_id in self.emitted:
            return
        self.emitted.add(item_id)
        o, b, t = self.o, self.b, self.t
        in_o, in_b, in_t = item_id in o.items, item_id in b.items, item_id in t.items
        if in_o and in_t:
            ot, tt = o.texts(item_id), t.texts(item_id)
            bt = b.texts(item_id) if in_b else None
            if ot == tt or tt == bt:
                self.out.extend(o.content(item_id))
                return
            if ot == bt:
                self.out.extend(t.content(item_id))
                return
            oe, te = o.essence(item_id), t.essence(item_id)
            be = b.essence(item_id) if in_b else None
            if oe == te:  # the same change on both sides; only the time differs
                newer = t if t.updated(item_id) > o.updated(item_id) else o
                self.out.extend(newer.content(item_id))
            elif te == be:  # theirs was only touched: ours holds the change
                self.out.extend(o.content(item_id))
            elif oe == be:
                self.out.extend(t.content(item_id))
            else:
                local, incoming = (t, o) if self.local_is_theirs else (o, t)
                self._conflict(item_id, f"fact {item_id} {CHANGED_ON_BOTH} (this clone's "
                               "version first); run `memvault resolve`, or keep one line and "
                               "delete the other and these marker lines",
                               local.content(item_id), incoming.content(item_id))
            return
        side, other = (o, t) if in_o else (t, o)
        if not in_o and not in_t:
            return  # deleted on both sides
        text = side.items[item_id].text
        if match_key(text) in self.base_texts and self.is_forgotten(text):
            # It was there before the two sides split, and one side forgot it.
            self.result.dropped_forgotten.append(item_id)
            return
        if not in_b:
            if side is t and match_key(text) in self.ours_texts:
                return  # the same fact was added on both sides: keep ours only
            self.out.extend(side.content(item_id))
            return
        if side.texts(item_id) == b.texts(item_id):
            return  # a deletion beats an unchanged line
        local = t if self.local_is_theirs else o
        where = EDITED_HERE if side is local else DELETED_HERE
        self._conflict(item_id, f"fact {item_id} was {where}; run `memvault resolve`, or keep "
                       "the line to keep it or delete it to forget it, and delete these "
                       "marker lines", side.content(item_id), None)

    def _conflict(self, item_id: str, why: str, first: list[Line],
                  second: list[Line] | None) -> None:
        self.result.conflicts.append(why)
        self._line(f"{CONFLICT_OPEN} {why}")
        self._lines(first)
        if second is not None:
            self._line(CONFLICT_SPLIT)
            self._lines(second)
        self._line(CONFLICT_CLOSE)

    def _lines(self, lines: list[Line]) -> None:
        for ln in lines:
            self.out.append(Line(ln.text, ln.eol or self.eol))

    def _emit_units(self, side: _Side, lo: int, hi: int) -> None:
        for k in range(lo, hi):
            kind, value = side.units[k]
            if kind == "p":
                self.out.append(side.prose[k])
            else:
                self._emit_item(value)

    # -- merging -------------------------------------------------------------------------

    def run(self) -> MergeResult:
        o, b, t = self.o, self.b, self.t
        kb, ko, kt = _keys(b, b), _keys(o, b), _keys(t, b)
        iz = ia = ib = 0
        for zlo, zhi, alo, ahi, blo, bhi in _sync_regions(kb, ko, kt):
            if alo > ia or blo > ib:
                self._unstable(iz, zlo, ia, alo, ib, blo, kb, ko, kt)
            self._emit_units(o, alo, ahi)
            iz, ia, ib = zhi, ahi, bhi
        # Items that lost their place (a moved line on a side that was not taken).
        for side in (o, t):
            for item_id in side.items:
                self._emit_item(item_id)
        self._finish()
        return self.result

    def _unstable(self, z0: int, z1: int, a0: int, a1: int, b0: int, b1: int,
                  kb: list[str], ko: list[str], kt: list[str]) -> None:
        base_k, ours_k, theirs_k = kb[z0:z1], ko[a0:a1], kt[b0:b1]
        if ours_k == theirs_k or theirs_k == base_k:
            self._emit_units(self.o, a0, a1)
            self._mark_handled(base_k, ours_k, theirs_k)
            return
        if ours_k == base_k:
            self._emit_units(self.t, b0, b1)
            self._mark_handled(base_k, ours_k, theirs_k)
            return
        # Both sides changed this stretch. Prose: a change on one side wins, else merge text.
        prose = [[k for k in ks if k.startswith("p\x00")] for ks in (base_k, ours_k, theirs_k)]
        pb, po, pt = prose
        if pt == pb:
            self._emit_units(self.o, a0, a1)
        elif po == pb:
            self._emit_units(self.t, b0, b1)
        else:
            local, incoming = _prose_bytes(self.o, a0, a1), _prose_bytes(self.t, b0, b1)
            if self.local_is_theirs:
                local, incoming = incoming, local
            merged, conflicted = self.merge_text(_prose_bytes(self.b, z0, z1), local, incoming)
            if conflicted:
                self.result.conflicts.append("notes around the facts were changed on both "
                                             "sides (git-style markers)")
            if merged:
                self.out.extend(TextFile.parse(merged).lines)
            for k in range(a0, a1):
                if self.o.units[k][0] == "i":
                    self._emit_item(self.o.units[k][1])
        # Items of both sides in this stretch: ours' order first, then theirs' new ones.
        for side, lo, hi in ((self.o, a0, a1), (self.t, b0, b1), (self.b, z0, z1)):
            for k in range(lo, hi):
                if side.units[k][0] == "i":
                    self._emit_item(side.units[k][1])

    def _mark_handled(self, base_k: list[str], ours_k: list[str], theirs_k: list[str]) -> None:
        """Items of a stretch taken whole from one side that the other side dropped."""
        for k in (*base_k, *ours_k, *theirs_k):
            if k.startswith("i\x00"):
                item_id = k.split("\x00")[1]
                if item_id not in self.emitted:
                    self._emit_item(item_id)

    def _finish(self) -> None:
        lines = self.out
        for ln in lines[:-1]:
            if not ln.eol:
                ln.eol = self.eol
        tf = TextFile(lines=lines, bom=self.o.doc.file.bom)
        self.result.data = tf.to_bytes()


def _prose_bytes(side: _Side, lo: int, hi: int) -> bytes:
    tf = TextFile(lines=[Line(side.prose[k].text, side.prose[k].eol or "\n")
                         for k in range(lo, hi) if side.units[k][0] == "p"])
    return tf.to_bytes()


def merge_bullet_files(base: bytes, ours: bytes, theirs: bytes, *,
                       is_forgotten: Callable[[str], bool] = lambda _text: False,
                       merge_text: TextMerger = simple_text_merge,
                       local_is_theirs: bool = False) -> MergeResult:
    """Merge three versions of a bullet file by record id (see the module doc).

    `merge_text(base, local, incoming)` merges prose; its markers show this clone first.
    """
    if ours == theirs or theirs == base:
        return MergeResult(ours)
    if ours == base:
        return MergeResult(theirs)
    docs = [parse_bullets(d) for d in (base, ours, theirs)]
    if any(d.readonly_reason for d in docs):
        local, incoming = (theirs, ours) if local_is_theirs else (ours, theirs)
        merged, conflicted = merge_text(base, local, incoming)
        return MergeResult(merged, ["the file is not in memvault's bullet format "
                                    "(merged as text)"] if conflicted else [])
    return _Merger(docs, is_forgotten, merge_text, local_is_theirs).run()
