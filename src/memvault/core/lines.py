"""The line model: a text file as a list of lines that each keep their own ending.

`TextFile.parse(data)` never fails and `TextFile.to_bytes()` gives back exactly the bytes
it was given when nothing was changed. Editing works on whole lines: a changed line is
replaced, every other line is written back byte for byte (BOM, CRLF/LF per line, the
final-newline state, invalid UTF-8 via surrogateescape).

Lines are split on "\n" only (never `str.splitlines()`, which also splits on form feeds,
U+2028 and friends). A "\r" left at the end of a piece is that line's CRLF ending.
"""

from __future__ import annotations

from dataclasses import dataclass, field

UTF8_BOM = b"\xef\xbb\xbf"
UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


@dataclass(slots=True)
class Line:
    """One line: its text without the ending, and the ending ("\\n", "\\r\\n" or "")."""

    text: str
    eol: str

    @property
    def clean(self) -> bool:
        """True when the line decoded as valid UTF-8 (no escaped bytes)."""
        try:
            self.text.encode("utf-8")
        except UnicodeEncodeError:
            return False
        return True


@dataclass(slots=True)
class TextFile:
    """A file's lines plus the file-level facts needed to write it back unchanged.

    `readonly_reason` is set when the file must not be edited at all (NUL bytes, lone CR
    line endings); such a file can still be read.
    """

    lines: list[Line]
    bom: bool = False
    readonly_reason: str | None = None
    _dominant_eol: str = field(default="\n", repr=False)

    @classmethod
    def parse(cls, data: bytes) -> TextFile:
        if data.startswith(UTF16_BOMS):
            # A UTF-16 file: show nothing as memory and refuse to edit. One opaque "line"
            # decoded with surrogateescape so `to_bytes()` gives back the exact bytes.
            return cls(lines=[Line(data.decode("utf-8", errors="surrogateescape"), "")],
                       readonly_reason="file is UTF-16 encoded; save it as UTF-8")
        bom = data.startswith(UTF8_BOM)
        if bom:
            data = data[3:]
        text = data.decode("utf-8", errors="surrogateescape")
        readonly = None
        if "\x00" in text:
            readonly = "file contains NUL bytes (binary?)"
        pieces = text.split("\n")
        if "\r" not in text:  # the common file: every ending "\n" (one pass, at C speed)
            tail = pieces.pop()
            lines = [Line(piece, "\n") for piece in pieces]
            if tail:
                lines.append(Line(tail, ""))  # no final newline
            return cls(lines=lines, bom=bom, readonly_reason=readonly, _dominant_eol="\n")
        lines = []
        last = len(pieces) - 1
        crlf = lf = 0
        for i, piece in enumerate(pieces):
            if i == last:
                if piece:
                    # No final newline. A trailing "\r" stays text (bare-CR file: read-only).
                    lines.append(Line(piece, ""))
                break
            if piece.endswith("\r"):
                lines.append(Line(piece[:-1], "\r\n"))
                crlf += 1
            else:
                lines.append(Line(piece, "\n"))
                lf += 1
        if readonly is None and any("\r" in ln.text for ln in lines):
            readonly = "file uses bare CR line endings; convert it to LF or CRLF"
        dominant = "\r\n" if crlf > lf else "\n"
        return cls(lines=lines, bom=bom, readonly_reason=readonly, _dominant_eol=dominant)

    @classmethod
    def lazy(cls, data: bytes) -> TextFile:
        """`parse(data)`, done only when the lines are first used: a reader that needs
        only a file's parsed records (from the parse cache) never splits its lines."""
        return _LazyTextFile(data)

    @property
    def dominant_eol(self) -> str:
        return self._dominant_eol

    @property
    def ends_with_newline(self) -> bool:
        return not self.lines or self.lines[-1].eol != ""

    def to_bytes(self) -> bytes:
        body = "".join(ln.text + ln.eol for ln in self.lines)
        data = body.encode("utf-8", errors="surrogateescape")
        return (UTF8_BOM + data) if self.bom else data

    # -- editing helpers ---------------------------------------------------------------

    def eol_for_insert_after(self, index: int) -> str:
        """The ending a new line inserted after line `index` should use."""
        if 0 <= index < len(self.lines) and self.lines[index].eol:
            return self.lines[index].eol
        return self._dominant_eol

    def replace(self, start: int, stop: int, new_texts: list[str]) -> None:
        """Replace lines[start:stop] with `new_texts`, keeping the endings sensible.

        The replacement's last line takes the ending of the old range's last line (so a
        file without a final newline keeps that state); other new lines take that ending
        too, or the file's dominant ending when the old last line had none.
        """
        if start < stop:
            last_eol = self.lines[stop - 1].eol
        else:
            last_eol = self.eol_for_insert_after(start - 1)
        inner_eol = last_eol or self.eol_for_insert_after(start - 1)
        new_lines = [Line(t, inner_eol) for t in new_texts]
        if new_lines:
            new_lines[-1].eol = last_eol
        if not new_texts and start < stop and stop == len(self.lines) and start > 0:
            # Deleting the tail of a file: the new last line inherits the old final state.
            if last_eol == "":
                self.lines[start - 1].eol = ""
        self.lines[start:stop] = new_lines

    def insert_after(self, index: int, text: str) -> None:
        """Insert one new line after line `index` (-1: at the top)."""
        if index >= 0 and index == len(self.lines) - 1 and self.lines[index].eol == "":
            # Appending to a file with no final newline: end the old last line, and keep
            # the "no final newline" state on the new one.
            self.lines[index].eol = self._dominant_eol
            self.lines.append(Line(text, ""))
            return
        eol = self.eol_for_insert_after(index)
        self.lines.insert(index + 1, Line(text, eol))


class _LazyTextFile(TextFile):
    """A `TextFile` whose fields are filled from `TextFile.parse(data)` on first access.

    The fields are slots; reading one that is not filled yet raises `AttributeError`,
    which lands in `__getattr__`, which fills them all. Compares equal to the eager
    `TextFile` of the same bytes.

    Lines added after the last one (`append`) before the fields are filled are kept
    aside: `to_bytes` adds their bytes to the file's, and filling the fields inserts them
    with `insert_after`, so either way the result is what the eager file gives."""

    __slots__ = ("_data", "_tail", "_fix")

    def __init__(self, data: bytes) -> None:  # noqa: D107 - the fields stay unfilled
        self._data = data
        self._tail: list[Line] = []
        self._fix = ""  # the ending the file's own last line gains (it had none)

    def __getattr__(self, name: str) -> object:
        if name not in ("lines", "bom", "readonly_reason", "_dominant_eol"):
            raise AttributeError(name)
        parsed = TextFile.parse(self._data)
        self.lines, self.bom = parsed.lines, parsed.bom
        self.readonly_reason, self._dominant_eol = parsed.readonly_reason, parsed._dominant_eol
        tail, self._tail = self._tail, []
        for line in tail:
            TextFile.insert_after(self, len(self.lines) - 1, line.text)
        return getattr(self, name)

    def _filled(self) -> bool:
        try:
            _LINES_SLOT.__get__(self, TextFile)
        except AttributeError:
            return False
        return True

    def unsplit_line_count(self) -> int | None:
        """How many lines the file has, when its lines are not split yet (else None)."""
        if self._filled():
            return None
        data = self._data
        return data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1) + \
            len(self._tail)

    def append(self, text: str) -> None:
        """`insert_after(last line, text)` without splitting the file's lines (when they
        are split already, it is exactly that)."""
        if self._filled():
            TextFile.insert_after(self, len(self.lines) - 1, text)
            return
        data = self._data
        if self._tail:
            last_eol = self._tail[-1].eol
        else:
            last_eol = "\r\n" if data.endswith(b"\r\n") else "\n" if data.endswith(b"\n") \
                else ""
        if last_eol:
            self._tail.append(Line(text, last_eol))
            return
        # no final newline: the old last line ends with the file's dominant ending
        if b"\r" in data:
            crlf = data.count(b"\r\n")
            dominant = "\r\n" if crlf > data.count(b"\n") - crlf else "\n"
        else:
            dominant = "\n"
        if self._tail:
            self._tail[-1].eol = dominant
        else:
            self._fix = dominant
        self._tail.append(Line(text, ""))

    def to_bytes(self) -> bytes:
        if self._filled():
            return TextFile.to_bytes(self)
        if not self._tail:
            return self._data
        added = self._fix + "".join(ln.text + ln.eol for ln in self._tail)
        return self._data + added.encode("utf-8", errors="surrogateescape")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TextFile):
            return NotImplemented
        return (self.lines, self.bom, self.readonly_reason, self._dominant_eol) == (
            other.lines, other.bom, other.readonly_reason, other._dominant_eol)

    __hash__ = None  # type: ignore[assignment]  # like the dataclass: mutable, unhashable


_LINES_SLOT = TextFile.__dict__["lines"]
