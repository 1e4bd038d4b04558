"""The parse cache: each memory file's parsed records, kept so a command need not parse
10,000 facts every time it starts.

Parsing `Memory.md` is a pure function of its bytes (`core.bullets.parse_bullets`), and at
10,000 facts it is the largest part of a cold `memory list` or `remember`. So a local vault
keeps, in `.memvault/parsed/` (git-ignored twice: by `.memvault/.gitignore` and by the
folder's own `.gitignore`), one entry per memory file (Memory.md, Lessons.md, Inbox.md of
each principal): what the parser returned for the file's exact bytes.

- **Keyed by the bytes, never by the clock.** An entry names the file's path and the
  SHA-256 of the bytes it was parsed from; it is used only for a read of exactly those
  bytes. An editor's in-place save or rename, a `touch`, a checkout, a copy or a clone with
  the same size and modification time is therefore always seen (no `mtime` is trusted).
- **Believed only when this clone made it.** An entry's first line is an HMAC-SHA256,
  under this clone's own key (`parse_cache_files`: local, git-ignored, never copied), of
  its head line; the head names the parser (format, memvault version, the parser's source
  files), the file and its bytes, and the SHA-256 of each part of the body. The tag is
  checked before the head is decoded, and each part's SHA-256 before that part is decoded
  (Python's `marshal`, of plain tuples). So an entry made anywhere else (planted, forged
  by someone who knows the format, committed to git by another clone) and a truncated,
  damaged or foreign one (another file's, another principal's, another version's) is
  ignored and written again. The body is a few chunks of 1,024 records, each with its
  own SHA-256, so adding a fact re-encodes only the last chunk; the chunks also hold each
  record's match key.
- **Never in the way.** The folder and its entries are opened without following links
  (`parse_cache_files`): a link or a folder where an entry belongs is never read, and is
  removed (a link itself, never what it points to) when a forget needs the entry gone; a
  `.memvault/parsed` that is a symlink means no cache at all. A cache never stops a forget.
- **One entry per file, replaced on write.** The one write path (`edit_bullet_file`)
  stores the entry of the bytes it just wrote. A read that misses stores the entry too,
  but only under the vault's write lock and only if the file still holds the bytes it
  parsed, so a read racing a forget never puts back an entry of the words it removed.
- **Forgetting reaches it.** An edit that removes records deletes the entry *before* the
  memory file is written (a crash in between leaves no entry, never a stale one), and a
  forget (`services/forgetting.py`, also when completed after a crash) and a sync that
  brought a forget in (`services/sync.py`) drop every entry that no longer matches its
  file (`parse_cache_forget.drop_stale`, where removing entries lives). Entries hold the
  user's words exactly like the memory files do.
- **The merge-leftover rules' verdict.** A file with hand-written bullets passes the
  rules' quick check every time (`core.reconcile.might_need_tidy`); when the rules then
  found nothing, the entry records that (for the forgotten ids they were given and their
  own source), so the next command skips them as well as the parse.
- **Per principal by construction**: an entry belongs to one file path, and each
  principal's files have their own paths.

Only the local-folder backend has the cache; anywhere else every read parses.
"""

from __future__ import annotations

import gc
import hashlib
import json
import marshal
import operator
import os
from typing import TYPE_CHECKING, Any

from memvault.core.bullets import BulletItem
from memvault.services import parse_cache_files as files
from memvault.state_paths import PARSED

if TYPE_CHECKING:
    from memvault.backends.base import Backend
    from memvault.core.bullets import BulletDocument

FORMAT = 4
"""Bump when what an entry holds changes."""


def _parser_id() -> str:
    """What made an entry: the entry format, marshal's, memvault's version and the
    parser's own source files (size and modification time, so a changed parser never
    reads entries an older one wrote, also in a development checkout)."""
    import memvault
    from memvault.core import bullets, lines

    stamps = []
    for module in (bullets, lines):
        try:
            st = os.stat(module.__file__ or "")
            stamps.append(f"{st.st_size}.{st.st_mtime_ns}")
        except OSError:
            stamps.append("?")
    return f"{FORMAT}/{marshal.version}/{memvault.__version__}/{'/'.join(stamps)}"


_PARSER: list[str] = []


def parser_id() -> str:
    if not _PARSER:
        _PARSER.append(_parser_id())
    return _PARSER[0]


def entry_name(key: bytes, path: str) -> str:
    """The name, in the cache folder, of the memory file `path`'s entry: prefixed by an
    id of this clone's key, so no file git tracks or another clone made is ever replaced
    by (or mistaken for) this clone's entry."""
    return f"{files.key_id(key)}.{path.replace('%', '%25').replace('/', '%2F')}"


def path_of(key: bytes, name: str) -> str | None:
    """The memory file whose entry `name` is, when it is an entry name under `key`."""
    prefix, dot, rest = name.partition(".")
    if not dot or prefix != files.key_id(key):
        return None
    return rest.replace("%2F", "/").replace("%25", "%")


def entry_path(root: Any, path: str) -> str | None:
    """The vault-relative path of the entry of the memory file `path` (None: no key yet)."""
    with files.opened(root) as folder:
        key = files.load_key(folder) if folder is not None else None
    return None if key is None else f"{PARSED}/{entry_name(key, path)}"


def enabled(backend: Backend) -> bool:
    return backend.capabilities.local_root is not None and files.SUPPORTED


def root_of(backend: Backend) -> Any:
    return backend.capabilities.local_root


# -- reading ---------------------------------------------------------------------------------


def parse(backend: Backend, path: str, data: bytes, *, keep: bool = True) -> BulletDocument:
    """`parse_bullets(data)` for the memory file `path`, from its entry when the entry is
    of exactly these bytes. On a miss the bytes are parsed, and (with `keep`) the entry is
    stored when that is safe (see `store_if_current`)."""
    from memvault.core.bullets import parse_bullets

    if not data or not enabled(backend):
        return parse_bullets(data)
    digest = hashlib.sha256(data).hexdigest()
    doc = _load(backend, path, data, digest)
    if doc is not None:
        return doc
    doc = parse_bullets(data)
    if keep:
        store_if_current(backend, path, data, doc, digest)
    return doc


def parse_if_tidy(backend: Backend, path: str, data: bytes,
                  verdict: str) -> BulletDocument | None:
    """The entry's document when the entry is of exactly `data` *and* records that the
    merge-leftover rules (`core.reconcile.tidy`) found nothing to settle in these bytes
    under `verdict` (see `tidy_verdict`); else None. A file with hand-written bullets
    always passes the rules' quick check, so without this every read would run them."""
    if not data or not enabled(backend):
        return None
    return _load(backend, path, data, hashlib.sha256(data).hexdigest(), verdict=verdict)


def note_tidy(backend: Backend, path: str, data: bytes, doc: BulletDocument,
              verdict: str) -> None:
    """Record that the rules found nothing in `data` under `verdict` (with `doc`, its
    parse), when that is safe (`store_if_current`)."""
    if data and enabled(backend):
        store_if_current(backend, path, data, doc, tidy=verdict)


def tidy_verdict(dead: frozenset[str], renumber_copies: bool) -> str:
    """What a verdict of the merge-leftover rules depends on besides the bytes: the
    forgotten record ids they were given, their option, and the rules' own source."""
    from memvault.core import reconcile

    try:
        st = os.stat(reconcile.__file__ or "")
        rules = f"{st.st_size}.{st.st_mtime_ns}"
    except OSError:
        rules = "?"
    text = "\n".join([rules, str(renumber_copies), *sorted(dead)])
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


def _load(backend: Backend, path: str, data: bytes, digest: str, *,
          verdict: str | None = None) -> BulletDocument | None:
    """The document of the entry for (`path`, `digest`), or None for anything less than a
    valid entry of exactly those bytes (and, with `verdict`, one that records it)."""
    try:
        with files.opened(root_of(backend)) as folder:
            if folder is None:
                return None
            key = files.load_key(folder)
            raw = files.read(folder, entry_name(key, path)) if key is not None else None
    except Exception:  # noqa: BLE001 - an unreadable cache is a miss, never an error
        return None
    if raw is None or key is None:
        return None
    tag, sep, rest = raw.partition(b"\n")
    head, sep2, body = rest.partition(b"\n")
    if not (sep and sep2) or not files.verify(key, head, tag):
        return None  # not made by this clone: nothing in it is decoded
    try:
        meta = json.loads(head)
        if not isinstance(meta, dict) or meta.get("format") != FORMAT or \
                meta.get("parser") != parser_id() or meta.get("path") != path or \
                meta.get("source") != digest or \
                (verdict is not None and meta.get("tidy") != verdict):
            return None
        return _document(backend, path, data, body, meta)
    except Exception:  # noqa: BLE001 - whatever is wrong with an entry makes it a miss
        return None


def _document(backend: Backend, path: str, data: bytes, body: bytes,
              meta: dict[str, Any]) -> BulletDocument:
    """Decode an entry's records, each chunk checked against its SHA-256 first (the match
    keys stay encoded until `match_keys` asks for them)."""
    from memvault.core.bullets import BulletDocument
    from memvault.core.lines import TextFile

    chunks: list[_Chunk] = []
    offset = 0
    for rows_size, rows_sha, keys_size, keys_sha in meta["chunks"]:
        rows_piece = body[offset:offset + rows_size]
        keys_piece = body[offset + rows_size:offset + rows_size + keys_size]
        if len(rows_piece) != rows_size or len(keys_piece) != keys_size or \
                hashlib.sha256(rows_piece).hexdigest() != rows_sha:
            raise ValueError("damaged entry")
        chunks.append(_Chunk(rows_piece, rows_sha, keys_piece, keys_sha))
        offset += rows_size + keys_size
    if offset != len(body):
        raise ValueError("damaged entry")
    readonly_reason, duplicated = meta["readonly"], meta["duplicated"]
    if readonly_reason is not None and not isinstance(readonly_reason, str):
        raise ValueError("not an entry")
    rows: list[tuple[Any, ...]] = []
    paused = gc.isenabled()
    gc.disable()  # tens of thousands of objects and no cycles (see `parse_bullets`)
    try:
        for chunk in chunks:
            rows += marshal.loads(chunk.rows)
        items = [BulletItem(*row) for row in rows]
        lines = TextFile.lazy(data)  # split only if the caller edits or renders lines
    finally:
        if paused:
            gc.enable()
    dupes: dict[str, list[BulletItem]] = {str(rid): [] for rid in duplicated}
    if dupes:
        for it in items:
            if it.id in dupes:
                dupes[it.id].append(it)
    _KNOWN[_where(backend, path)] = (list(items), rows, chunks)
    return BulletDocument(lines, items, readonly_reason, dupes)


# -- what this process knows of each entry ---------------------------------------------------

CHUNK = 1024
"""Records per encoded chunk of an entry. An edit after the last record (a new fact)
re-encodes only the last chunk; the others are reused as they were read or written."""


class _Chunk:
    """One chunk of an entry: its records and their match keys, each encoded with its
    SHA-256 (`keys`: the decoded match keys, once someone asked for them)."""

    __slots__ = ("rows", "rows_sha", "keys_piece", "keys_sha", "keys")

    def __init__(self, rows: bytes, rows_sha: str, keys_piece: bytes, keys_sha: str,
                 keys: list[str] | None = None) -> None:
        self.rows, self.rows_sha = rows, rows_sha
        self.keys_piece, self.keys_sha, self.keys = keys_piece, keys_sha, keys

    def match_keys(self) -> list[str] | None:
        if self.keys is None and hashlib.sha256(self.keys_piece).hexdigest() == self.keys_sha:
            try:
                keys = marshal.loads(self.keys_piece)
            except (ValueError, EOFError, TypeError):
                return None
            self.keys = keys if isinstance(keys, list) else None
        return self.keys


_KNOWN: dict[tuple[str, str], tuple[list[BulletItem], list[tuple[Any, ...]],
                                    list[_Chunk]]] = {}
"""Per memory file, the last entry this process read or wrote: its items (the very
objects handed out), their encoded rows and its chunks."""


def _where(backend: Backend, path: str) -> tuple[str, str]:
    return str(backend.capabilities.local_root), path


def match_keys(backend: Backend, path: str, doc: BulletDocument) -> list[str]:
    """`match_key` of every item of `doc`, from the entry when `doc` holds exactly the
    items this process read from (or wrote to) the entry of `path`."""
    from memvault.core.records import match_key

    known = _KNOWN.get(_where(backend, path))
    if known is not None and _same_items(doc.items, known[0]):
        keys: list[str] = []
        for chunk in known[2]:
            part = chunk.match_keys()
            if part is None:
                break
            keys += part
        else:
            if len(keys) == len(doc.items):
                return keys
    return [match_key(it.text) for it in doc.items]


def _same_items(items: list[BulletItem], known: list[BulletItem]) -> bool:
    return len(items) == len(known) and all(map(operator.is_, items, known))


_MARK_FIELDS = ("id", "provisional", "readonly_reason")
_MARKS = operator.attrgetter(*_MARK_FIELDS)
_ROW_MARKS = operator.itemgetter(*(BulletItem.__slots__.index(f) for f in _MARK_FIELDS))


def _unchanged(items: list[BulletItem], known: list[BulletItem],
               rows: list[tuple[Any, ...]]) -> bool:
    """`items` are the very objects `known` (handed out from an entry, or stored into it)
    and still read as their `rows`. Only the parser changes an item after making it, and
    only these fields (`_assign_ids`, read-only marks). Compared list by list, at C speed."""
    return all(map(operator.is_, items, known)) and \
        list(map(_MARKS, items)) == list(map(_ROW_MARKS, rows))


def _known_prefix(items: list[BulletItem], start: int, stop: int,
                  known_items: list[BulletItem], known_rows: list[tuple[Any, ...]],
                  known_chunk: _Chunk | None) -> list[str]:
    """The match keys of the first of `items[start:stop]` (one chunk) when they are the
    known items at the same places, unchanged, and `known_chunk` holds their keys: all
    of that chunk's known items, or none (the usual case: records added after them)."""
    known_stop = min(stop, len(known_items))
    if known_chunk is None or known_stop <= start or \
            not _unchanged(items[start:known_stop], known_items[start:known_stop],
                           known_rows[start:known_stop]):
        return []
    keys = known_chunk.match_keys()
    if keys is None or len(keys) != known_stop - start:
        return []
    return keys[:]


# -- writing ---------------------------------------------------------------------------------


def store(backend: Backend, path: str, data: bytes, doc: BulletDocument,
          digest: str | None = None, *, tidy: str | None = None) -> None:
    """Make `doc` (what `parse_bullets(data)` gives) the entry of `path`. The caller holds
    the vault's write lock and `data` is what the file now holds. A cache that cannot be
    written is left as it is (the next read parses).

    Whole chunks of records that are the very items this process read from (or wrote to)
    the previous entry, unchanged, are reused as encoded; the rest are encoded anew."""
    if not data or not enabled(backend):
        return
    from memvault.core.records import match_key

    fields = operator.attrgetter(*BulletItem.__slots__)
    items = doc.items
    known_items, known_rows, known_chunks = _KNOWN.get(_where(backend, path)) or ([], [], [])
    rows: list[tuple[Any, ...]] = []
    chunks: list[_Chunk] = []
    for start in range(0, len(items), CHUNK):
        stop = min(start + CHUNK, len(items))
        n = start // CHUNK
        if stop - start == CHUNK and n < len(known_chunks) and stop <= len(known_items) and \
                _unchanged(items[start:stop], known_items[start:stop], known_rows[start:stop]):
            rows += known_rows[start:stop]
            chunks.append(known_chunks[n])
            continue
        # the chunk's first items may be the known ones, unchanged (a record appended
        # after them): their rows and match keys are taken as they are
        known_keys = _known_prefix(items, start, stop, known_items, known_rows,
                                   known_chunks[n] if n < len(known_chunks) else None)
        same = len(known_keys)
        chunk_rows = known_rows[start:start + same] + \
            [fields(it) for it in items[start + same:stop]]
        chunk_keys = known_keys + [match_key(it.text) for it in items[start + same:stop]]
        rows_piece, keys_piece = marshal.dumps(chunk_rows), marshal.dumps(chunk_keys)
        rows += chunk_rows
        chunks.append(_Chunk(rows_piece, hashlib.sha256(rows_piece).hexdigest(), keys_piece,
                             hashlib.sha256(keys_piece).hexdigest(), chunk_keys))
    head = {"format": FORMAT, "parser": parser_id(), "path": path,
            "source": digest or hashlib.sha256(data).hexdigest(),
            "readonly": doc.readonly_reason, "duplicated": sorted(doc.duplicate_ids),
            "tidy": tidy,
            "chunks": [[len(c.rows), c.rows_sha, len(c.keys_piece), c.keys_sha]
                       for c in chunks]}
    _KNOWN[_where(backend, path)] = (list(items), rows, chunks)
    try:
        with files.opened(root_of(backend), create=True) as folder:
            key = files.ensure_key(folder) if folder is not None else None
            if folder is None or key is None:
                return
            # No fsync: a crash may cost the entry (a torn one fails its checks), never
            # leave words behind: entries are deleted durably (`parse_cache_forget`),
            # written lazily.
            head_line = json.dumps(head).encode()
            parts = [files.sign(key, head_line), b"\n", head_line, b"\n"]
            for chunk in chunks:
                parts += (chunk.rows, chunk.keys_piece)
            files.write(folder, entry_name(key, path), b"".join(parts))
    except Exception:  # noqa: BLE001 - a cache that cannot be written costs a parse later
        return


def store_if_current(backend: Backend, path: str, data: bytes, doc: BulletDocument,
                     digest: str | None = None, *, tidy: str | None = None) -> None:
    """`store`, from a reader: only when the write lock is free (a reader never waits for
    a writer) and, under it, the file still holds `data`. A memvault write (a forget
    included) holds the lock from its read to its last step, so an entry stored here is
    always of bytes the file holds, never of words a forget just removed."""
    try_lock = getattr(backend, "try_lock", None)
    if try_lock is None or not enabled(backend):
        return
    try:
        with try_lock() as held:
            if not held:
                return
            now = backend.read(path)
            if now is None or now.data != data:
                return
            store(backend, path, data, doc, digest, tidy=tidy)
    except Exception:  # noqa: BLE001 - e.g. no write access to .memvault: just no cache
        return
