"""The parse cache's folder on disk (`.memvault/parsed/`) and the key that signs its entries.

A cache must never stand in the user's way, and never be believed when someone else made
it. So the folder is handled here with descriptors, never with paths that could lead
elsewhere:

- **No link is ever followed.** The folder is opened component by component from the
  vault root with `O_NOFOLLOW`: when `.memvault` or `.memvault/parsed` is a symlink (or
  not a folder) there is no cache at all (nothing read, nothing written through it).
  An entry is opened with `O_NOFOLLOW` and used only if it is a regular file; it is
  replaced by renaming a new file over its name (which replaces a link itself) and
  removed by unlinking its name (a link goes, never what it points to). A folder where an
  entry belongs is removed when empty and otherwise left alone (it is never read;
  `doctor` names it): so an odd entry never stops a forget.
- **Entries are signed with a key of this clone.** `.key` in the folder holds 32 random
  bytes, made atomically (a private temp file, then a link to the name) with mode 0600.
  The file also records its own inode number, so a key that git checked out, or that a
  copy or a sync tool brought in, is not this clone's and is never used: an entry is
  believed only when its HMAC-SHA256 under this clone's key holds (`sign` / `verify`).
  No key, or one that cannot be read: no cache (reads miss; a writer makes a new key).
  The key never leaves this module: not in an error, a log line or any output.

Where the system cannot open files relative to a folder without following links (no
`dir_fd` support, e.g. Windows) there is no parse cache: every read parses.
"""

from __future__ import annotations

import errno
import hashlib
import hmac
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from memvault.state_paths import STATE_DIR

FOLDER = "parsed"
KEY = ".key"
IGNORE = ".gitignore"
IGNORE_ALL = b"# memvault's local parse cache: never committed\n*\n"
_KEY_HEAD = b"memvault parse-cache key 1\n"

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW | _CLOEXEC
_READ_FLAGS = os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | _CLOEXEC
SUPPORTED = bool(_NOFOLLOW and getattr(os, "O_DIRECTORY", 0)) and \
    {os.open, os.unlink, os.rmdir, os.mkdir, os.link, os.rename} <= os.supports_dir_fd


@contextmanager
def opened(root: Path, *, create: bool = False) -> Iterator[int | None]:
    """A descriptor on the cache folder, or None when there is no usable one (missing,
    reached through a symlink, not a folder). `create`: make `parsed/` (and its
    `.gitignore`) inside an existing `.memvault/` folder."""
    fd = _open_folder(root, create) if SUPPORTED else None
    try:
        yield fd
    finally:
        if fd is not None:
            os.close(fd)


def _open_folder(root: Path, create: bool) -> int | None:
    try:
        top = os.open(root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _CLOEXEC)
    except OSError:
        return None
    try:
        state = os.open(STATE_DIR, _DIR_FLAGS, dir_fd=top)
    except OSError:  # missing, a symlink (ELOOP/ENOTDIR), a file
        os.close(top)
        return None
    os.close(top)
    try:
        if create:
            try:
                os.mkdir(FOLDER, 0o700, dir_fd=state)
            except FileExistsError:
                pass
        folder = os.open(FOLDER, _DIR_FLAGS, dir_fd=state)
        if create and read(folder, IGNORE) is None:  # also in a folder git made
            try:
                write(folder, IGNORE, IGNORE_ALL)
            except OSError:
                os.close(folder)
                return None
        return folder
    except OSError:
        return None
    finally:
        os.close(state)


# -- files in the folder ---------------------------------------------------------------------


def read(folder: int, name: str) -> bytes | None:
    """The bytes of the regular file `name`, or None (missing, a link, a folder, a FIFO,
    unreadable): never follows a link, never blocks on a FIFO."""
    try:
        fd = os.open(name, _READ_FLAGS, dir_fd=folder)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def write(folder: int, name: str, data: bytes) -> None:
    """Replace `name` with a new file holding `data` (a private temp file renamed over it:
    a link there is replaced, never written through; no `fsync`, a crash may cost the
    entry). Raises OSError when it cannot (e.g. a folder is in the way)."""
    tmp = f".{name}.{os.urandom(6).hex()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o600,
                 dir_fd=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.rename(tmp, name, src_dir_fd=folder, dst_dir_fd=folder)
    finally:
        try:
            os.unlink(tmp, dir_fd=folder)
        except FileNotFoundError:
            pass


def remove(folder: int, name: str) -> bool:
    """Remove `name` without following it: a file or a link is unlinked (the link itself),
    an empty folder removed. Returns False only for a folder with something in it, which
    is left as it is (nothing ever reads it). Other errors raise OSError."""
    try:
        os.unlink(name, dir_fd=folder)
        return True
    except FileNotFoundError:
        return True
    except OSError as exc:
        if exc.errno not in (errno.EISDIR, errno.EPERM, errno.EACCES):
            raise
        if not _is_folder(folder, name):
            raise
    try:
        os.rmdir(name, dir_fd=folder)
        return True
    except FileNotFoundError:
        return True
    except OSError as exc:
        if exc.errno in (errno.ENOTEMPTY, errno.EEXIST):
            return False
        raise


def _is_folder(folder: int, name: str) -> bool:
    try:
        return stat.S_ISDIR(os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode)
    except OSError:
        return False


def names(folder: int) -> list[str]:
    """Every name in the folder but the key and the `.gitignore`."""
    return sorted(n for n in os.listdir(folder) if n not in (KEY, IGNORE))


def odd_entries(root: Path) -> list[str]:
    """Names in the cache folder that are not regular files (for doctor)."""
    with opened(root) as folder:
        if folder is None:
            return []
        out = []
        for name in names(folder):
            try:
                mode = os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode
            except OSError:
                continue
            if not stat.S_ISREG(mode):
                out.append(name)
        return out


def folder_is_a_link(root: Path) -> bool:
    """Whether `.memvault/parsed` (or `.memvault`) is a symlink: no cache is used (doctor)."""
    return any(os.path.islink(p) for p in (root / STATE_DIR, root / STATE_DIR / FOLDER))


# -- the key ---------------------------------------------------------------------------------


def load_key(folder: int) -> bytes | None:
    """This clone's key, or None: missing, unreadable, malformed, readable by others, or
    not the file it was made as (its recorded inode is not its own)."""
    try:
        fd = os.open(KEY, _READ_FLAGS, dir_fd=folder)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_mode & 0o077 or st.st_size > 256:
            return None
        raw = os.read(fd, 257)
    except OSError:
        return None
    finally:
        os.close(fd)
    return _key_of(raw, st.st_ino)


def _key_of(raw: bytes, inode: int) -> bytes | None:
    if not raw.startswith(_KEY_HEAD):
        return None
    fields = raw[len(_KEY_HEAD):].split(b"\n")
    if len(fields) != 3 or fields[2] != b"" or fields[1] != str(inode).encode():
        return None
    secret = fields[0]
    if len(secret) != 64 or not all(c in b"0123456789abcdef" for c in secret):
        return None
    return bytes.fromhex(secret.decode("ascii"))


def ensure_key(folder: int) -> bytes | None:
    """This clone's key, made when there is none (or the one there is not this clone's):
    a 0600 temp file holding the secret and its own inode number, linked to the name when
    free (two writers agree on the first), renamed over a foreign one. None if it cannot."""
    key = load_key(folder)
    if key is not None:
        return key
    tmp = f".key.{os.urandom(6).hex()}.tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o600,
                     dir_fd=folder)
    except OSError:
        return None
    try:
        try:
            os.fchmod(fd, 0o600)  # whatever the umask
            secret = os.urandom(32)
            os.write(fd, _KEY_HEAD + secret.hex().encode() + b"\n" +
                     str(os.fstat(fd).st_ino).encode() + b"\n")  # no fsync: a torn
            # key is not a key, and a new one is made (the entries it signed are misses)
        finally:
            os.close(fd)
        try:
            os.link(tmp, KEY, src_dir_fd=folder, dst_dir_fd=folder)
        except FileExistsError:
            if load_key(folder) is not None:  # another writer made one first: use theirs
                return load_key(folder)
            os.rename(tmp, KEY, src_dir_fd=folder, dst_dir_fd=folder)
        return load_key(folder)
    except OSError:
        return None
    finally:
        try:
            os.unlink(tmp, dir_fd=folder)
        except OSError:
            pass


def key_id(key: bytes) -> str:
    """A short public name of the key (for entry names); reveals nothing of the key."""
    return hmac.new(key, b"entry names", hashlib.sha256).hexdigest()[:16]


def sign(key: bytes, head: bytes) -> bytes:
    """The tag of an entry's head line (the head names every chunk's SHA-256)."""
    return hmac.new(key, head, hashlib.sha256).hexdigest().encode("ascii")


def verify(key: bytes, head: bytes, tag: bytes) -> bool:
    return hmac.compare_digest(sign(key, head), tag)
