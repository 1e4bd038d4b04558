"""Low-level file reading for the local-folder backend: regular files only, never blocking.

A named pipe (FIFO), socket or device node where a note should be must not hang or
surprise memvault: opening a FIFO for reading the ordinary way blocks until something
writes to it, and opening a device can have side effects. So a file is `stat`ed first and
opened only when it is a regular file, and then with `O_NONBLOCK` and checked again on the
open descriptor (something may have swapped it in between).
"""

from __future__ import annotations

import contextlib
import errno
import glob
import os
import stat
import sys

from memvault.errors import InvalidInput, ReadOnly, VaultError

TYPE_CHECKING = False  # on the cold path of `memvault search --json`: no pathlib
if TYPE_CHECKING:
    from pathlib import Path

_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_BINARY = getattr(os, "O_BINARY", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
READ_FLAGS = os.O_RDONLY | _NONBLOCK | _BINARY | _CLOEXEC


def kind_of(mode: int) -> str:
    """A short human name for a file that is not a regular file."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a special file"


def not_regular(path: str, mode: int) -> InvalidInput:
    if stat.S_ISDIR(mode):
        return InvalidInput("is a folder, expected a file", path=path)
    return InvalidInput(f"is {kind_of(mode)}, not a regular file; memvault never opens it",
                        path=path)


def open_regular(full: str | os.PathLike[str], path: str, flags: int = READ_FLAGS) -> int | None:
    """A descriptor on `full` if it is a regular file; None when it does not exist.

    Anything else (folder, FIFO, socket, device) is an `InvalidInput` naming `path`,
    raised before the file is opened (and re-checked on the descriptor).
    """
    try:
        st = os.stat(full)
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        raise InvalidInput("a parent of this path is a file, not a folder", path=path) from None
    except PermissionError:
        raise ReadOnly("permission denied while reading", path=path) from None
    except OSError as exc:
        raise VaultError(f"cannot read: {exc.strerror or exc}", path=path) from None
    if not stat.S_ISREG(st.st_mode):
        raise not_regular(path, st.st_mode)
    try:
        fd = os.open(full, flags)
    except FileNotFoundError:
        return None
    except PermissionError:
        raise ReadOnly("permission denied while reading", path=path) from None
    except OSError as exc:
        raise VaultError(f"cannot read: {exc.strerror or exc}", path=path) from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise not_regular(path, mode)
    return fd


def read_regular(full: str | os.PathLike[str], path: str) -> bytes | None:
    """The bytes of a regular file, None when missing; see `open_regular`."""
    fd = open_regular(full, path)
    if fd is None:
        return None
    try:
        return read_all(fd, path)
    finally:
        os.close(fd)


def read_all(fd: int, path: str) -> bytes:
    chunks: list[bytes] = []
    try:
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
    except OSError as exc:
        raise VaultError(f"cannot read: {exc.strerror or exc}", path=path) from None


# -- stable reads and identity ------------------------------------------------------------

STABLE_READ_ATTEMPTS = 40
"""A file that changes under every one of this many reads (5 ms apart, growing) is refused."""


def stable_read(full: str | os.PathLike[str], path: str) -> tuple[bytes, os.stat_result] | None:
    """The bytes of a regular file and the `fstat` they were read at; None when missing.

    The descriptor is `fstat`ed before and after reading: if the inode's size or
    modification time moved (someone writing in place), or fewer bytes came back than the
    size says, the read is repeated. Bytes and identity therefore always belong together.
    """
    import time

    from memvault.errors import Conflict

    for attempt in range(STABLE_READ_ATTEMPTS):
        fd = open_regular(full, path)
        if fd is None:
            return None
        try:
            before = os.fstat(fd)
            data = read_all(fd, path)
            after = os.fstat(fd)
        finally:
            os.close(fd)
        if identity(before) == identity(after) and len(data) == after.st_size:
            return data, after
        time.sleep(0.005 * (1 + attempt // 8))
    raise Conflict("kept changing while memvault read it; nothing was changed (try again)",
                   path=path)


def identity(st: os.stat_result) -> tuple[int, int, int]:
    """What tells one state of a file from another without reading it: inode, size and
    modification time (nanoseconds). The content hash completes it (see `version_of`)."""
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def version_of(data: bytes, st: os.stat_result) -> str:
    """A version naming both the bytes (SHA-1) and the file they were read from."""
    import hashlib

    ino, size, mtime_ns = identity(st)
    return f"{hashlib.sha1(data).hexdigest()}:{ino}:{size}:{mtime_ns}"


def same_version(expected: str, data: bytes, st: os.stat_result) -> bool:
    """Whether the file read as (`data`, `st`) is the one `expected` was read from.

    A bare content hash (no identity part) compares the bytes only."""
    if ":" in expected:
        return expected == version_of(data, st)
    import hashlib

    return expected == hashlib.sha1(data).hexdigest()


def changed_ns(st: os.stat_result) -> int:
    """When the file last changed: its modification or status-change time, whichever is
    later (a rename-style save keeps an old mtime on some tools but always moves ctime).
    On Windows `st_ctime` is the creation time, which is never later than a change."""
    return max(st.st_mtime_ns, st.st_ctime_ns)


# -- installing a staged file ----------------------------------------------------------------

_RENAME_NOREPLACE = 1
_RENAME_EXCHANGE = 2
_renameat2: object = None  # resolved lazily: the C function, or False when unavailable
_unsupported_devices: set[int] = set()


def _libc_renameat2():  # type: ignore[no-untyped-def]
    global _renameat2
    if _renameat2 is None:
        _renameat2 = False
        if sys.platform.startswith("linux"):
            try:
                import ctypes

                libc = ctypes.CDLL(None, use_errno=True)
                func = libc.renameat2
                func.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                                 ctypes.c_uint]
                func.restype = ctypes.c_int
                _renameat2 = func
            except (OSError, AttributeError):
                _renameat2 = False
    return _renameat2


def rename_flags(src: str | os.PathLike[str], dst: str | os.PathLike[str], flags: int,
                 device: int) -> bool:
    """`renameat2(src, dst, flags)`: True when done, False when this system or file system
    cannot (the caller falls back to a plain rename). Other failures raise OSError."""
    func = _libc_renameat2()
    if not func or device in _unsupported_devices:
        return False
    import ctypes

    AT_FDCWD = -100
    if func(AT_FDCWD, os.fsencode(src), AT_FDCWD, os.fsencode(dst), flags) == 0:  # type: ignore[operator]
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
        _unsupported_devices.add(device)
        return False
    raise OSError(err, os.strerror(err), os.fspath(dst))


def swap(a: str | os.PathLike[str], b: str | os.PathLike[str], device: int) -> bool:
    """Atomically exchange two paths (Linux `RENAME_EXCHANGE`); False when unsupported."""
    return rename_flags(a, b, _RENAME_EXCHANGE, device)


def rename_no_replace(src: str | os.PathLike[str], dst: str | os.PathLike[str],
                      device: int) -> bool:
    """Rename only if `dst` does not exist (`RENAME_NOREPLACE`); False when unsupported,
    FileExistsError when it exists."""
    return rename_flags(src, dst, _RENAME_NOREPLACE, device)


# -- writing helpers ---------------------------------------------------------------------


def open_for_append(full: Path, path: str) -> int:
    """A read-write, append-only descriptor on a regular file (created if missing).

    A FIFO, socket or device is refused before it is opened (opening a FIFO for writing
    blocks until a reader appears) and re-checked on the descriptor; a symlink is not
    followed, and a file with several hard links is refused.
    """
    try:
        mode = os.stat(full).st_mode
    except FileNotFoundError:
        mode = None
    except NotADirectoryError:
        raise InvalidInput("a parent of this path is a file, not a folder", path=path) from None
    if mode is not None and not stat.S_ISREG(mode):
        raise not_regular(path, mode)
    flags = (os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_NONBLOCK", 0)
             | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
             | getattr(os, "O_CLOEXEC", 0))
    try:
        fd = os.open(full, flags, 0o644)
    except IsADirectoryError:
        raise InvalidInput("is a folder, expected a file", path=path) from None
    except OSError as exc:
        raise VaultError(f"cannot write: {exc.strerror or exc}", path=path) from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise not_regular(path, st.st_mode)
    if st.st_nlink > 1:
        # Appending changes the file in place, so every other name of it would change too
        # (a hard link to Policy.md, say). Rename-style writes replace only this name.
        os.close(fd)
        raise InvalidInput(f"has {st.st_nlink} hard links; memvault appends only to a file "
                           "with one name; nothing was written", path=path)
    return fd


def check_not_readonly(path: str, full: Path) -> None:
    """Refuse to replace a file the user made read-only (no write bit for anyone).

    An atomic rename would otherwise replace it silently (and root ignores modes).
    """
    try:
        mode = full.stat().st_mode
    except (FileNotFoundError, NotADirectoryError):
        return
    if stat.S_ISREG(mode) and not mode & 0o222:
        raise ReadOnly("file is read-only (no write permission); nothing was written",
                       path=path)


_TEMP_FLAGS = (os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | _CLOEXEC
               | _BINARY)


TEMP_HEX = 12
"""Hex digits of randomness in a temp file's name (`.<name>.<12 hex>.tmp`)."""


def temp_for(name: str) -> str | None:
    """The name of the file a temp file called `name` was staged for (`Memory.md` for
    `.Memory.md.0123456789ab.tmp`), or None when `name` is not one of memvault's temps."""
    if not (name.startswith(".") and name.endswith(".tmp")) or len(name) < TEMP_HEX + 7:
        return None
    stem, sep, digits = name[1:-4].rpartition(".")
    if not (stem and sep and len(digits) == TEMP_HEX
            and all(c in "0123456789abcdef" for c in digits)):
        return None
    return stem


def make_temp(full: Path) -> tuple[int, Path]:
    """A new, empty temp file `.<name>.<random>.tmp` beside `full`, open for writing (mode
    0600; never an existing file, never through a link): what `tempfile.mkstemp` does,
    without importing `tempfile` (and with it `shutil`, `bz2` and `lzma`) into every
    command that writes."""
    for _ in range(100):
        tmp = full.with_name(f".{full.name}.{os.urandom(TEMP_HEX // 2).hex()}.tmp")
        try:
            return os.open(tmp, _TEMP_FLAGS, 0o600), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temp name beside {full.name}")


def remove_stale_temps(full: Path) -> None:
    """Delete temp files a killed writer left next to `full`.

    Called only under the vault lock, while no other memvault process is staging, so
    every `.<name>.*.tmp` there is an orphan.
    """
    for orphan in full.parent.glob(f".{glob.escape(full.name)}.*.tmp"):
        with contextlib.suppress(OSError):
            orphan.unlink()


def remove_stale_temps_once(fulls: list[Path]) -> None:
    """`remove_stale_temps` for many files, scanning each folder once."""
    by_folder: dict[Path, set[str]] = {}
    for full in fulls:
        by_folder.setdefault(full.parent, set()).add(full.name)
    for folder, names in by_folder.items():
        try:
            entries = [e.name for e in os.scandir(folder)
                       if e.name.startswith(".") and e.name.endswith(".tmp")]
        except OSError:
            continue
        for entry in entries:
            stem = entry[1:-4]
            if any(stem.startswith(f"{name}.") for name in names):
                with contextlib.suppress(OSError):
                    (folder / entry).unlink()


def fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
