"""A cross-process lock on a file, for POSIX and Windows.

`FileLock(path)` is held around every read-modify-write of a local vault, so two memvault
processes never interleave one. It is re-entrant inside one process (threads of the same
process share it through an `RLock`; nested `with` blocks are counted).

- POSIX: `fcntl.flock` on the open file (an advisory whole-file lock, released by the
  kernel when the process dies, so a killed writer never leaves the vault locked).
- Windows: `msvcrt.locking` on the first byte (a byte-range lock, also released when the
  process exits). `LK_LOCK` gives up after about ten seconds; the lock retries until it
  gets the byte, like a blocking `flock`.

The lock file is opened without following a symlink (where the system can), so a link
planted at `.memvault/lock` can neither create nor lock a file elsewhere.

`try_lock(fd)` / `unlock(fd)` are the same two mechanisms without waiting, for callers
that poll with their own deadline (the search index's writer lock).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

from memvault.errors import VaultError


def _platform_locker() -> tuple[str, ModuleType]:
    """("fcntl", module) on POSIX, ("msvcrt", module) on Windows."""
    try:
        import fcntl

        return "fcntl", fcntl
    except ImportError:
        import msvcrt  # type: ignore[import-not-found,unused-ignore]

        return "msvcrt", msvcrt


class FileLock:
    """An exclusive, re-entrant, cross-process lock held on `path`."""

    def __init__(self, path: str | os.PathLike[str],
                 prepare: Callable[[], object] | None = None) -> None:
        self.path = Path(path)
        self._prepare = prepare  # run before each first acquisition (e.g. make the folder)
        self._thread_lock = threading.RLock()
        self._depth = 0
        self._fd: int | None = None

    @contextlib.contextmanager
    def hold(self) -> Iterator[None]:
        with self._thread_lock:
            if self._depth == 0:
                self._fd = self._acquire()
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
                if self._depth == 0 and self._fd is not None:
                    fd, self._fd = self._fd, None
                    self._release(fd)

    @contextlib.contextmanager
    def hold_if_free(self) -> Iterator[bool]:
        """Like `hold`, but never waits: yields True holding the lock (also when this
        thread holds it already), or False holding nothing when someone else has it."""
        if not self._thread_lock.acquire(blocking=False):
            yield False
            return
        try:
            if self._depth == 0:
                fd = self._open()
                if not try_lock(fd):
                    os.close(fd)
                    yield False
                    return
                self._fd = fd
            self._depth += 1
            try:
                yield True
            finally:
                self._depth -= 1
                if self._depth == 0 and self._fd is not None:
                    fd, self._fd = self._fd, None
                    self._release(fd)
        finally:
            self._thread_lock.release()

    def _acquire(self) -> int:
        fd = self._open()
        try:
            kind, module = _platform_locker()
            if kind == "fcntl":
                module.flock(fd, module.LOCK_EX)
            else:
                _msvcrt_lock(module, fd)
        except BaseException:
            os.close(fd)
            raise
        return fd

    def _open(self) -> int:
        if self._prepare is not None:
            self._prepare()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        flags = (os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
                 | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
                 | getattr(os, "O_BINARY", 0))
        try:
            fd = os.open(self.path, flags, 0o644)
        except OSError as exc:
            raise VaultError(f"cannot open the lock file: {exc.strerror or exc}"
                             f"{_why_unopenable(self.path, exc)}", path=str(self.path)) from None
        return fd

    @staticmethod
    def _release(fd: int) -> None:
        try:
            unlock(fd)
        finally:
            os.close(fd)


def try_lock(fd: int) -> bool:
    """Take the exclusive lock on the open file `fd` if no other process holds it; never
    waits. `flock` on POSIX, a non-blocking lock of the first byte on Windows."""
    kind, module = _platform_locker()
    if kind == "fcntl":
        try:
            module.flock(fd, module.LOCK_EX | module.LOCK_NB)
        except BlockingIOError:
            return False
        return True
    os.lseek(fd, 0, os.SEEK_SET)
    try:
        module.locking(fd, module.LK_NBLCK, 1)
    except OSError as exc:
        if exc.errno in _STILL_LOCKED:
            return False
        raise
    return True


def unlock(fd: int) -> None:
    """Give up the lock `try_lock` (or `FileLock`) took on `fd`."""
    kind, module = _platform_locker()
    if kind == "fcntl":
        module.flock(fd, module.LOCK_UN)
    else:
        os.lseek(fd, 0, os.SEEK_SET)
        module.locking(fd, module.LK_UNLCK, 1)


def _msvcrt_lock(msvcrt: ModuleType, fd: int) -> None:
    """Lock the first byte of `fd`, waiting as long as another process holds it."""
    while True:
        os.lseek(fd, 0, os.SEEK_SET)
        try:
            msvcrt.locking(fd, msvcrt.LK_LOCK, 1)  # waits about 10 s, then OSError
            return
        except OSError as exc:
            if exc.errno not in _STILL_LOCKED:
                raise


_STILL_LOCKED = {getattr(errno, "EDEADLOCK", errno.EDEADLK), errno.EDEADLK, errno.EACCES}


def _why_unopenable(path: Path, exc: OSError) -> str:
    """The likely cause of a lock file that cannot be opened, as a suffix for the error:
    a symlink (never followed) only when the path really is one, else a vault the user
    cannot write (a read-only folder or mount, another user's files)."""
    try:
        if stat.S_ISLNK(os.lstat(path).st_mode):
            return " (it is a symlink; memvault never follows one there: remove it)"
    except OSError:
        pass
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return " (the vault is read-only or not writable by you: nothing was changed)"
    return ""
