"""Forgets that arrived from elsewhere (another clone, by `memvault sync` or plain git)
reach this machine's caches on the next memvault command, whatever it is.

A permanent forget made on another clone changes the vault's committed files (the memory
file, `tombstones.jsonl`, `events.jsonl`), but this machine's caches were filled before:
the search index (`.memvault/index.sqlite`, whose FTS tables keep a deleted row's words
in their segments until merged), the safety net's last-known copies and the parse cache.
A local forget scrubs all three; a forget that came in by a pull must too.

So this machine notes which forgets its caches reflect, in `.memvault/safety/forgets.json`
(local, git-ignored with the net, content-free):

    {"format": 1, "sig": "<size:mtime of tombstones.jsonl>/<size:mtime of events.jsonl>",
     "marks": "<digest of every forget mark>", "permanent": ["<digest of an event id>", ...]}

Numbers and digests are spelled in letters (`_spelled`), so the note never holds a run of
digits that a forgotten text (a PIN, a code) could also hold.

`in_step` compares the two files' sizes and modification times with `sig`: two `stat`
calls and one small read, cheap enough for the quick search path (which declines when
they differ). A vault with no `tombstones.jsonl` never had a forget (every forget of a
text writes one): it needs no note, and none is written.

`apply` (run by every `Vault.open` on a local vault, by sync after a pull, and by every
local forget) re-reads the two files only when they changed: when a *permanent* forget
is new it deletes the search index, as a local `forget --permanent` does (a cache: the
next search rebuilds it), and when the set of forget marks (tombstone lines, `*.forgotten`
events) is new it scrubs the safety net (`SafetyNet.scrub_forgotten`) and the parse cache
(`parse_cache_forget.drop_stale`). Nothing here reads a memory file's text.

A store kept elsewhere (the GitHub backend) has no local folder, but this machine caches
its files (`capabilities.cache_dir`: downloaded blobs of every version it read, and the
copy of the notes with its search index). `apply_cached` (run by every `Vault.open` on
such a store, and by every local forget) does the same there: the signature is the two
journals' versions (blob ids, from the listing every command takes anyway), the note is
`forgets.json` in the cache folder (never in the repository), and when a permanent
forget is new the whole cache is dropped, as a local `forget --permanent` drops it (old
blobs hold the words); the files are downloaded again as they are now. When the cache
folder cannot be emptied (read-only here), every command says so in one line on stderr,
naming the folder (never the words), and no note is written, so the next command tries
again.

A journal line this process appends itself (`before_append`, `after_append`) keeps an
in-step note in step: when the journal grew by exactly that line, which forgets nothing,
and the tombstones did not change, only `sig` is written again; so a `remember` does not
make the next command read a 10,000-event journal again.
"""

from __future__ import annotations

import os

from memvault.state_paths import EVENTS, FORGETS_APPLIED, STATE_DIR, TOMBSTONES

TYPE_CHECKING = False  # the quick search path imports this module: nothing else at first
if TYPE_CHECKING:
    from collections.abc import Callable

    from memvault.backends.base import Backend
    from memvault.services.vault import Vault

MARKER = FORGETS_APPLIED
_FORGOTTEN = b'.forgotten"'


_LETTERS = str.maketrans("0123456789abcdef", "ghijklmnopqrstuv")


def _spelled(text: str) -> str:
    """Digits and hex digits as letters (g-v), so no number or digest reads as digits."""
    return text.translate(_LETTERS)


def signature(root: str | os.PathLike[str]) -> str:
    """Sizes and modification times of the tombstones and the journal ('-' when missing),
    spelled in letters."""
    return _signature_of(_stats(root))


def _stats(root: str | os.PathLike[str]) -> tuple[os.stat_result | None, os.stat_result | None]:
    """(tombstones, journal) as `stat` finds them, None when missing."""
    found: list[os.stat_result | None] = []
    for rel in (TOMBSTONES, EVENTS):
        try:
            found.append(os.stat(os.path.join(root, rel)))
        except OSError:
            found.append(None)
    return found[0], found[1]


def _signature_of(stats: tuple[os.stat_result | None, os.stat_result | None]) -> str:
    return _spelled("/".join("-" if st is None else f"{st.st_size}:{st.st_mtime_ns}"
                             for st in stats))


def _marker(data: bytes | None) -> dict[str, object] | None:
    if not data:
        return None
    import json

    try:
        found = json.loads(data)
    except ValueError:
        return None
    return found if isinstance(found, dict) and found.get("format") == 1 else None


def in_step(root: str | os.PathLike[str], read: Callable[[str], bytes | None] | None = None
            ) -> bool:
    """Whether this machine's caches reflect every forget the vault's files hold (as far
    as two `stat` calls tell); False also when the marker is missing or unreadable.
    `read` reads a vault-relative file (default: plainly, from `root`)."""
    try:
        if read is not None:
            data = read(MARKER)
        else:
            with open(os.path.join(root, MARKER), "rb") as fh:
                data = fh.read(1 << 20)
    except FileNotFoundError:
        data = None
    except OSError:
        return False
    sig = signature(root)
    if data is None:
        return _never_forgotten(sig)
    found = _marker(data)
    return found is not None and found.get("sig") == sig


def _never_forgotten(sig: str) -> bool:
    """No tombstones file: nothing was ever forgotten in this vault (every forget of a
    text writes one), so there is nothing to note."""
    return sig.startswith("-/")


def forget_marks(tombstones: bytes, events: bytes) -> tuple[str, set[str]]:
    """(digest of every forget mark, digests of the permanent forget events' ids) in the two
    files' bytes. Only journal lines holding a `*.forgotten` type are parsed."""
    import hashlib
    import json

    ids: set[str] = set()
    permanent: set[str] = set()
    start = events.find(_FORGOTTEN)
    while start != -1:
        begin = events.rfind(b"\n", 0, start) + 1
        end = events.find(b"\n", start)
        end = len(events) if end == -1 else end
        try:
            ev = json.loads(events[begin:end])
        except ValueError:
            ev = None
        if isinstance(ev, dict) and str(ev.get("type", "")).endswith(".forgotten"):
            eid = str(ev.get("id"))
            ids.add(eid)
            if ev.get("permanent"):
                permanent.add(_spelled(hashlib.sha256(eid.encode("utf-8", "surrogateescape"))
                                       .hexdigest()[:24]))
        start = events.find(_FORGOTTEN, end)
    digest = hashlib.sha256(tombstones)
    for eid in sorted(ids):
        digest.update(b"\n" + eid.encode("utf-8", "surrogateescape"))
    return _spelled(digest.hexdigest()), permanent


def apply(vault: Vault) -> bool:
    """Bring this machine's caches in step with the forgets the vault's files hold (see
    the module doc); returns whether the search index was deleted. A local vault only."""
    root = vault.backend.capabilities.local_root
    if root is None:
        return False
    sig = signature(root)  # before reading: a change meanwhile is seen next time
    backend = vault.backend
    noted = _read(backend, MARKER)
    found = _marker(noted)
    if found is not None and found.get("sig") == sig or noted is None and _never_forgotten(sig):
        return False
    stones, journal = _read(backend, TOMBSTONES) or b"", _read(backend, EVENTS) or b""
    marks, permanent = forget_marks(stones, journal)
    discarded = False
    if found is None or found.get("marks") != marks:
        from memvault.services import parse_cache_forget
        from memvault.services.safety_net import SafetyNet

        new = _newly_permanent(found, permanent)
        index = vault.search.index_path()
        if new and index is not None and index.exists():  # first: the widest copy
            vault.search.discard("a fact was forgotten permanently (here or on another "
                                 "clone)")
            discarded = True
        SafetyNet(backend).scrub_forgotten()
        parse_cache_forget.drop_stale(backend)
    _write_marker(backend, {"format": 1, "sig": sig, "marks": marks,
                            "permanent": sorted(permanent)})
    return discarded


def _newly_permanent(found: dict[str, object] | None, permanent: set[str]) -> set[str]:
    """The permanently forgotten records the note (`found`) does not list yet."""
    known = found.get("permanent") if found is not None else None
    return permanent - set(known if isinstance(known, list) else ())


CACHED_MARKER = "forgets.json"


def apply_cached(vault: Vault) -> bool:
    """Bring this machine's cache of a store kept elsewhere in step with the forgets the
    store's files hold (see the module doc); returns whether the cache was dropped."""
    from pathlib import Path

    backend = vault.backend
    folder = backend.capabilities.cache_dir
    if folder is None or backend.capabilities.local_root is not None:
        return False
    versions = backend.versions(STATE_DIR)
    sig = _spelled(f"{versions.get(TOMBSTONES, '-')}/{versions.get(EVENTS, '-')}")
    path = Path(folder) / CACHED_MARKER
    try:
        noted: bytes | None = path.read_bytes()
    except OSError:
        noted = None
    found = _marker(noted)
    if found is not None and found.get("sig") == sig or \
            noted is None and TOMBSTONES not in versions:
        return False
    stones, journal = _read(backend, TOMBSTONES) or b"", _read(backend, EVENTS) or b""
    marks, permanent = forget_marks(stones, journal)
    dropped = False
    if found is None or found.get("marks") != marks:
        if _newly_permanent(found, permanent):
            index = vault.search.index_path()
            try:
                if index is not None and index.exists():
                    vault.search.discard("a fact was forgotten permanently (here or on "
                                         "another machine)")
            except OSError:
                pass  # a read-only cache folder: told below
            backend.drop_caches()  # type: ignore[attr-defined]
            dropped = True
            if _holds_files(Path(folder)):
                _tell_cache_kept(Path(folder))
                return dropped  # no note: the next command tries again (and tells again)
    _write_private(path, {"format": 1, "sig": sig, "marks": marks,
                          "permanent": sorted(permanent)})
    return dropped


def _holds_files(folder: os.PathLike[str]) -> bool:
    """Whether any file is left under `folder` (a cache folder that could not be emptied)."""
    for _dirpath, _dirs, files in os.walk(folder):
        if files:
            return True
    return False


def _tell_cache_kept(folder: os.PathLike[str]) -> None:
    """One line on stderr naming the cache folder (never the words) when a permanent
    forget could not empty it: it still holds copies of forgotten words."""
    import sys

    sys.stderr.write(f"warning: this machine's cache folder {os.fspath(folder)} could not be "
                     "emptied after a permanent forget (it is read-only here) and still holds "
                     "copies of forgotten words; make it writable and run any memvault "
                     "command, or delete it\n")
    sys.stderr.flush()


def _write_private(path: os.PathLike[str] | str, marker: dict[str, object]) -> None:
    """Write the note atomically, readable by this user only (a lost note is redone)."""
    import json

    folder = os.path.dirname(path)
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        tmp = f"{os.fspath(path)}.{os.getpid()}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(json.dumps(marker).encode() + b"\n")
        os.replace(tmp, path)
    except OSError:
        pass


def _read(backend: Backend, rel: str) -> bytes | None:
    """One plain read where the backend offers it (no version hashing: a 10,000-event
    journal is read in a millisecond), else an ordinary one."""
    plain = getattr(backend, "read_unversioned", None)
    if plain is not None:
        return plain(rel)  # type: ignore[no-any-return]
    blob = backend.read(rel)
    return None if blob is None else bytes(blob.data)


def _write_marker(backend: Backend, marker: dict[str, object]) -> None:
    import json

    from memvault.backends.base import ANY
    from memvault.services.safety_net import SafetyNet

    net = SafetyNet(backend)
    net.ensure_ignored()
    data = json.dumps(marker).encode() + b"\n"
    quick = getattr(backend, "replace_unsynced", None)  # no fsync: a lost note is redone
    if quick is not None:
        quick(MARKER, data)
    else:
        backend.write(MARKER, data, expected=ANY, message="memvault: forgets applied")


# -- this process's own journal lines ---------------------------------------------------


def before_append(backend: Backend) -> tuple[dict[str, object], os.stat_result,
                                             os.stat_result] | None:
    """Called just before this process appends to the journal (under the vault's lock):
    the note with the tombstones' and the journal's `stat`, when the note is in step with
    them; else None (nothing to keep: no note, no forget ever, or already behind)."""
    root = backend.capabilities.local_root
    if root is None:
        return None
    stones, journal = _stats(root)
    if stones is None or journal is None:
        return None
    try:
        found = _marker(_read(backend, MARKER))
    except Exception:  # noqa: BLE001 - the next `apply` deals with an unreadable note
        return None
    if found is None or found.get("sig") != _signature_of((stones, journal)):
        return None
    return found, stones, journal


def after_append(backend: Backend, before: tuple[dict[str, object], os.stat_result,
                                                 os.stat_result], data: bytes) -> None:
    """Keep the note in step after this process appended `data` to the journal, when that
    is all that changed: `data` forgets nothing, the journal is the same file grown by
    exactly `data` (and the newline a torn last line gets), and the tombstones are as
    they were. Otherwise the note is left behind and the next command's `apply` reads
    the files again. Without this, every write would make the next command re-read a
    10,000-event journal."""
    if _FORGOTTEN in data:
        return
    root = backend.capabilities.local_root
    if root is None:
        return
    found, stones, journal = before
    now = _stats(root)
    if now[0] is None or now[1] is None or _identity(now[0]) != _identity(stones) or \
            now[1].st_ino != journal.st_ino or \
            now[1].st_size - journal.st_size not in (len(data), len(data) + 1):
        return
    try:
        _write_marker(backend, {**found, "sig": _signature_of(now)})
    except Exception:  # noqa: BLE001 - a lost note is redone by the next command
        pass


def _identity(st: os.stat_result) -> tuple[int, int, int]:
    return (st.st_ino, st.st_size, st.st_mtime_ns)
