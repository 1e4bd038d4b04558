"""Low-level file reading for the local-folder backend: regular files only, never blocking.

A named pipe (FIFO), socket or device node where a note should be must not hang or
surprise memvault: opening a FIFO for reading the ordinary way blocks until something
writes to it, and opening a device can have side effects. So a file is `stat`ed first and
opened only when it is a regular file, and then with `O_NONBLOCK` and checked again on the
open descriptor (something may have swapped it in between).
"""

from __future__ import annotations

import os
import stat

from memvault.errors import InvalidInput, ReadOnly, VaultError

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
    chunks = []
    try:
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
    except OSError as exc:
        raise VaultError(f"cannot read: {exc.strerror or exc}", path=path) from None
