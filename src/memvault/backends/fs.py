"""The local-folder backend (the default).

- Writes are atomic: a temp file in the same folder, fsync, `os.replace`, folder fsync.
  No reader ever sees a half-written file; a killed writer leaves the old file intact.
- A cross-process lock (`flock` on `.memvault/lock`) is held around read-modify-write.
  It is re-entrant inside one process.
- Versions are SHA-1 digests of the bytes, so a concurrent edit by Obsidian or another
  process is detected before replacing the file.
- Nothing is written outside the vault, through a symlink leaving it, or inside
  `.obsidian/`. File modes of replaced files are kept.
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
import os
import stat
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

from memvault.backends.base import ANY, MISSING, Blob, Change, Expected
from memvault.backends.fs_io import not_regular, read_regular
from memvault.core.paths import clean_vault_path, is_obsidian_internal
from memvault.errors import Conflict, InvalidInput, ReadOnly, VaultError
from memvault.state_folder import ensure_state_folder
from memvault.state_paths import LOCK


def content_version(data: bytes) -> str:
    return hashlib.sha1(data).hexdigest()


class FsBackend:
    """A vault stored in a local folder."""

    name = "fs"

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root).expanduser().absolute()
        self._real_root = Path(os.path.realpath(self.root))
        self._thread_lock = threading.RLock()
        self._depth = 0
        self._lock_fd: int | None = None

    def describe(self) -> str:
        return str(self.root)

    # -- paths -------------------------------------------------------------------------

    def _path(self, rel: str, *, for_write: bool = False, follow: bool = True) -> Path:
        """The absolute path for `rel`, refusing anything that leaves the vault.

        For a write, a symlink inside the vault is followed (`follow`): the file it points
        to is replaced and the link stays a link. A write that would land in `.obsidian/`,
        also through a symlinked file or folder, is refused.
        """
        rel = clean_vault_path(rel)
        full = self.root / rel
        if for_write:
            if is_obsidian_internal(rel):
                raise InvalidInput("memvault never writes inside .obsidian/", path=rel)
            real_parent = Path(os.path.realpath(full.parent))
            if not _is_within(real_parent, self._real_root):
                raise InvalidInput("path leads outside the vault (through a symlink?)",
                                   path=rel)
            resolved = Path(os.path.realpath(full))
            if full.is_symlink() and not _is_within(resolved, self._real_root):
                raise InvalidInput("file is a symlink pointing outside the vault", path=rel)
            if resolved != self._real_root and is_obsidian_internal(
                    resolved.relative_to(self._real_root).as_posix()):
                raise InvalidInput("memvault never writes inside .obsidian/ (the path is a "
                                   "symlink into it)", path=rel)
            if follow and full.is_symlink():
                full = resolved
        else:
            real = Path(os.path.realpath(full))
            if not _is_within(real, self._real_root):
                raise InvalidInput("path leads outside the vault (through a symlink?)",
                                   path=rel)
        return full

    # -- reading -----------------------------------------------------------------------

    def read(self, path: str) -> Blob | None:
        data = read_regular(self._path(path), path)
        return None if data is None else Blob(data, content_version(data))

    def list(self, prefix: str = "") -> list[str]:
        base = self._path(prefix) if prefix else self.root
        if not base.is_dir():
            return []
        out: list[str] = []
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames.sort()
            for fn in sorted(filenames):
                out.append(Path(dirpath, fn).relative_to(self.root).as_posix())
        return sorted(out)

    # -- writing -----------------------------------------------------------------------

    def _check_expected(self, path: str, full: Path, expected: Expected) -> None:
        if expected is ANY:
            return
        data = read_regular(full, path)
        current = None if data is None else content_version(data)
        if expected is MISSING:
            if current is not None:
                raise Conflict("already exists", path=path)
        elif current != expected:
            raise Conflict("changed on disk since it was read; nothing was written (try again)",
                           path=path)

    def write(self, path: str, data: bytes, *, expected: Expected = ANY,
              message: str = "") -> str:
        full = self._path(path, for_write=True)
        with self.lock():
            self._check_expected(path, full, expected)
            _check_not_readonly(path, full)
            tmp = self._stage(path, full, data)
            self._install(path, tmp, full)
        return content_version(data)

    def delete(self, path: str, *, expected: Expected = ANY, message: str = "") -> None:
        full = self._path(path, for_write=True, follow=False)
        with self.lock():
            self._check_expected(path, full, expected)
            try:
                full.unlink()
            except FileNotFoundError:
                return
            except IsADirectoryError:
                raise InvalidInput("is a folder, expected a file", path=path) from None
            _fsync_dir(full.parent)

    def append(self, path: str, data: bytes, *, message: str = "") -> None:
        full = self._path(path, for_write=True)
        with self.lock():
            _check_not_readonly(path, full)
            full.parent.mkdir(parents=True, exist_ok=True)
            fd = _open_for_append(full, path)
            try:
                size = os.fstat(fd).st_size
                if size:
                    # A crash may have left a torn last line: start on a fresh one.
                    os.lseek(fd, size - 1, os.SEEK_SET)
                    if os.read(fd, 1) != b"\n":
                        data = b"\n" + data
                os.write(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)

    def commit(self, changes: list[Change], *, message: str = "") -> None:
        """Stage every new file first; then install them all, rolling back on failure."""
        with self.lock():
            staged: list[tuple[Change, Path, Path | None]] = []
            try:
                fulls = [self._path(ch.path, for_write=True, follow=ch.data is not None)
                         for ch in changes]
                _remove_stale_temps_once(fulls)  # one scan per folder, not one per file
                for ch, full in zip(changes, fulls):
                    self._check_expected(ch.path, full, ch.expected)
                    if ch.data is not None:
                        _check_not_readonly(ch.path, full)
                    tmp = (self._stage(ch.path, full, ch.data, clean=False)
                           if ch.data is not None else None)
                    staged.append((ch, full, tmp))
            except BaseException:
                for _, _, tmp in staged:
                    if tmp is not None:
                        tmp.unlink(missing_ok=True)
                raise
            done: list[tuple[Path, bytes | None]] = []
            try:
                for ch, full, tmp in staged:
                    old = read_regular(full, ch.path)
                    if tmp is not None:
                        self._install(ch.path, tmp, full, sync_dir=False)
                    elif old is not None:
                        full.unlink()
                    done.append((full, old))
                for folder in dict.fromkeys(full.parent for full, _ in done):
                    _fsync_dir(folder)
            except BaseException:
                for full, old in reversed(done):
                    if old is None:
                        full.unlink(missing_ok=True)
                    else:
                        restore = self._stage(str(full), full, old)
                        os.replace(restore, full)
                for _, _, tmp in staged:
                    if tmp is not None:
                        tmp.unlink(missing_ok=True)
                raise

    def _stage(self, path: str, full: Path, data: bytes, *, clean: bool = True) -> Path:
        """Write `data` to a temp file next to `full`, fsynced; returns the temp path.

        `clean=False`: the caller already removed stale temps (see `commit`)."""
        try:
            full.parent.mkdir(parents=True, exist_ok=True)
        except (FileExistsError, NotADirectoryError):
            raise InvalidInput("a parent of this path is a file, not a folder",
                               path=path) from None
        if full.is_dir():
            raise InvalidInput("is a folder, expected a file", path=path)
        try:
            mode = full.stat().st_mode & 0o7777
        except FileNotFoundError:
            mode = None
        except NotADirectoryError:
            raise InvalidInput("a parent of this path is a file, not a folder",
                               path=path) from None
        if clean:
            _remove_stale_temps(full)
        fd, tmp_name = tempfile.mkstemp(prefix=f".{full.name}.", suffix=".tmp",
                                        dir=full.parent)
        tmp = Path(tmp_name)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            os.chmod(tmp, mode if mode is not None else 0o644)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        return tmp

    def _install(self, path: str, tmp: Path, full: Path, *, sync_dir: bool = True) -> None:
        try:
            os.replace(tmp, full)
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            raise VaultError(f"cannot write: {exc.strerror or exc}", path=path) from None
        if sync_dir:
            _fsync_dir(full.parent)

    # -- locking -----------------------------------------------------------------------

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        import fcntl

        with self._thread_lock:
            if self._depth == 0:
                lock_path = self.root / LOCK
                ensure_state_folder(self.root)  # the caches are git-ignored from the start
                fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
                fcntl.flock(fd, fcntl.LOCK_EX)
                self._lock_fd = fd
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
                if self._depth == 0 and self._lock_fd is not None:
                    fcntl.flock(self._lock_fd, fcntl.LOCK_UN)
                    os.close(self._lock_fd)
                    self._lock_fd = None


def _open_for_append(full: Path, path: str) -> int:
    """A read-write, append-only descriptor on a regular file (created if missing).

    A FIFO, socket or device is refused before it is opened (opening a FIFO for writing
    blocks until a reader appears) and re-checked on the descriptor.
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
             | getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        fd = os.open(full, flags, 0o644)
    except IsADirectoryError:
        raise InvalidInput("is a folder, expected a file", path=path) from None
    except OSError as exc:
        raise VaultError(f"cannot write: {exc.strerror or exc}", path=path) from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise not_regular(path, mode)
    return fd


def _check_not_readonly(path: str, full: Path) -> None:
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


def _remove_stale_temps(full: Path) -> None:
    """Delete temp files a killed writer left next to `full`.

    Called only under the vault lock, while no other memvault process is staging, so
    every `.<name>.*.tmp` there is an orphan.
    """
    for orphan in full.parent.glob(f".{glob.escape(full.name)}.*.tmp"):
        with contextlib.suppress(OSError):
            orphan.unlink()


def _remove_stale_temps_once(fulls: list[Path]) -> None:
    """`_remove_stale_temps` for many files, scanning each folder once."""
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


def _is_within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _fsync_dir(folder: Path) -> None:
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
