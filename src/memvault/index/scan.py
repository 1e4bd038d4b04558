"""Finding the vault's notes on disk and reading one for the index.

`scan_vault` lists every indexable Markdown file with its size, modification time and
change time (which files: `walk.walk_notes`) and marks the memory files among them.
`read_indexable` reads one file: a note, a memory file (the bullet file of a record kind
of a principal, `memvault.core.kinds`, read per record with the shared bullet grammar),
or the reason it cannot be indexed (binary, not UTF-8, unreadable).
A file whose name is not valid UTF-8 (a Latin-1 `Caf\\xe9.md` from an old archive or a
Windows share) is not read at all: the index cannot store such a name, so the file is
listed under its escaped name (`stored_path`) as one that cannot be indexed, and
`memvault doctor` names it like any other unreadable note.
Nothing here writes a file.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Union

from memvault.core.paths import SCOPES_FOLDER
from memvault.index.walk import Entry, template_folders, walk_notes

if TYPE_CHECKING:
    from memvault.core.notes import Note



@dataclass(slots=True)
class ScannedFile:
    path: str
    size: int
    mtime_ns: int
    ctime_ns: int  # the change time: moves on every write, even one that restores mtime
    scope: str | None = None  # set for memory files: the principal they belong to
    memory_kind: str | None = None  # the record kind's name (`memvault.core.kinds`)
    problem: str | None = None  # set when the file cannot be read at all (its name)


@dataclass(slots=True)
class MemoryRecord:
    rid: str
    kind: str
    category: str | None
    status: str
    line: int
    text: str


@dataclass(slots=True)
class MemoryFileInfo:
    records: list[MemoryRecord] = field(default_factory=list)


Indexable = Union["Note", "MemoryFileInfo", str]  # a str: why it cannot be indexed


BAD_NAME = "the file name is not valid UTF-8 (rename the file to make it searchable)"


def stored_path(rel: str) -> tuple[str, str | None]:
    """(the path as the index stores and reports it, why the file cannot be indexed or
    None). A name that is not valid UTF-8 reaches Python with its odd bytes as lone
    surrogates, which SQLite cannot store: it is kept with each such byte written `\\xNN`
    instead, and the file is not read."""
    if rel.isascii():
        return rel, None
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        escaped = rel.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        return escaped, BAD_NAME
    return rel, None


def memory_role(rel: str, home_root: str) -> tuple[str | None, str | None]:
    """(principal, record kind) when `rel` is a memory file of a principal, else Nones."""
    from memvault.core.kinds import kind_of_file

    folder, _, name = rel.rpartition("/")
    record_kind = kind_of_file(name)
    if record_kind is None:
        return None, None
    kind = record_kind.name
    if folder == home_root:
        return "default", kind
    prefix = f"{home_root}/{SCOPES_FOLDER}/"
    if folder.startswith(prefix) and "/" not in folder[len(prefix):]:
        return folder[len(prefix):], kind
    return None, None


def scan_vault(root: Path, home_root: str) -> dict[str, ScannedFile]:
    """Every indexable file under `root`, by vault-relative path."""
    return scanned_files(walk_notes(root, home_root), home_root)


def scanned_files(entries: list[Entry], home_root: str) -> dict[str, ScannedFile]:
    """The files of a listing (`walk_notes`) by path, memory files marked with their
    principal and record kind."""
    from memvault.core.kinds import file_names

    bullet_files = frozenset(file_names())
    scanned = ScannedFile  # names looked up once: this loop runs once per file
    out: dict[str, ScannedFile] = {}
    odd_names: list[Entry] = []
    for rel, size, mtime_ns, ctime_ns in entries:
        if not rel.isascii() and stored_path(rel)[1] is not None:
            odd_names.append((rel, size, mtime_ns, ctime_ns))
        elif rel[rel.rfind("/") + 1:] in bullet_files:
            scope, kind = memory_role(rel, home_root)
            out[rel] = scanned(rel, size, mtime_ns, ctime_ns, scope, kind)
        else:
            out[rel] = scanned(rel, size, mtime_ns, ctime_ns)
    for rel, size, mtime_ns, ctime_ns in odd_names:  # a real file of the escaped name first
        key, problem = stored_path(rel)
        out.setdefault(key, scanned(key, size, mtime_ns, ctime_ns, problem=problem))
    return out


def scan_paths(root: Path, home_root: str, rels: set[str]) -> dict[str, ScannedFile]:
    """The indexable files among these vault-relative paths (as `scan_vault` would list
    them); a path that is gone, hidden, not Markdown or not a regular file is left out."""
    from memvault.core.obsidian_settings import in_folders

    out: dict[str, ScannedFile] = {}
    real_root = os.path.realpath(root)
    templates = template_folders(root, home_root)
    for rel in rels:
        parts = rel.split("/")
        if not rel.lower().endswith(".md") or any(p.startswith(".") or not p for p in parts):
            continue
        if templates and in_folders(rel, templates):
            continue
        full = os.path.join(root, rel)
        try:
            if os.path.islink(full):
                target = os.path.realpath(full)
                if not target.startswith(real_root + os.sep):
                    continue
            st = os.stat(full)
        except OSError:
            continue
        if not stat.S_ISREG(st.st_mode):
            continue
        key, problem = stored_path(rel)
        if problem is not None:
            out.setdefault(key, ScannedFile(key, st.st_size, st.st_mtime_ns, st.st_ctime_ns,
                                            problem=problem))
            continue
        scope, kind = memory_role(rel, home_root)
        out[rel] = ScannedFile(rel, st.st_size, st.st_mtime_ns, st.st_ctime_ns, scope, kind)
    return out


PRIVATE_LINK = ("a symlink into memvault's memory home or a hidden folder "
                "(never indexed: it would show a principal's memory to others)")


def read_file(root: Path, entry: ScannedFile, home_root: str | None = None) -> bytes | str:
    """The file's bytes, or why they cannot be read (a str). With `home_root`, a file
    reached through a symlink is judged by where it really is (`private_link_target`)."""
    from memvault.backends.fs_io import read_regular
    from memvault.errors import VaultError

    if entry.problem is not None:
        return entry.problem
    if home_root is not None and _private_link(root, entry.path, home_root):
        return PRIVATE_LINK
    try:  # never blocks: a FIFO or device named *.md is refused before it is opened
        return read_regular(root / entry.path, "") or b""
    except VaultError as exc:
        return f"unreadable: {exc}"


def _private_link(root: Path, rel: str, home_root: str) -> bool:
    """Whether `rel` leads, through a symlink (of the file or a folder on the way), to a
    file this vault's index must not read as a note (`core.paths.private_link_target`)."""
    full = os.path.join(root, rel)
    real_root = os.path.realpath(root)
    target = os.path.realpath(full)
    if target == os.path.join(real_root, rel):
        return False  # no symlink on the way
    from memvault.core.paths import private_link_target

    inside = os.path.relpath(target, real_root).replace(os.sep, "/")
    return inside.startswith("../") or private_link_target(inside, home_root)


def content_hash(data: bytes) -> str:
    """A short digest of a file's bytes: equal digests mean there is nothing to re-read."""
    import hashlib

    return hashlib.blake2b(data, digest_size=12).hexdigest()


def parse_indexable(entry: ScannedFile, data: bytes) -> Indexable:
    """The note or memory records in these bytes, or why they cannot be indexed."""
    if b"\x00" in data:
        return "binary content (NUL bytes), not a text note"
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return f"not valid UTF-8 (byte {exc.start})"
    try:
        if entry.memory_kind:
            return _memory_records(data, entry.memory_kind)
        from memvault.core.notes import parse_note  # only when a note must be read

        return parse_note(entry.path, text)
    except Exception as exc:  # noqa: BLE001 - one odd file must never stop indexing
        return f"could not be parsed ({type(exc).__name__})"


def read_indexable(root: Path, entry: ScannedFile, home_root: str | None = None
                   ) -> Indexable:
    """The note or memory records in this file, or why it cannot be indexed."""
    data = read_file(root, entry, home_root)
    return data if isinstance(data, str) else parse_indexable(entry, data)


def _memory_records(data: bytes, kind_name: str) -> MemoryFileInfo:
    from memvault.core.bullets import parse_bullets
    from memvault.core.kinds import kind_named
    from memvault.core.records import record_from_item

    kind = kind_named(kind_name)
    info = MemoryFileInfo()
    for item in parse_bullets(data).items:
        record = record_from_item(item, kind.record_type, known=())
        label = kind.index_kind
        if kind.inbox:  # a proposal is indexed with what accepting it would make
            label = f"{label} ({record.meta.get('kind', 'fact')})"
        info.records.append(MemoryRecord(record.id, label, record.category_raw,
                                         record.status, record.line, record.text))
    return info
