"""The local-folder backend (the default).

- Writes are atomic: a temp file in the same folder, fsync, then an atomic rename over the
  old file, folder fsync. No reader ever sees a half-written file; a killed writer leaves
  the old file intact.
- A cross-process lock (`flock` on `.memvault/lock`) is held around read-modify-write.
  It is re-entrant inside one process.
- A version names the bytes (SHA-1) *and* the file they were read from (inode, size,
  modification time), and reads are stable (the file did not move while it was read).
  Compare-and-swap checks the version twice: before staging, and again after the temp file
  is written and fsynced, immediately before it is installed. On Linux the install is an
  atomic exchange, and the file it displaced is checked once more: if an editor replaced
  the file in that last instant, the exchange is undone and the caller retries. Elsewhere
  a plain rename follows the final check (see docs/guarantees.md for what that leaves).
- Nothing is written outside the vault, through any symlink, or inside `.obsidian/`; a
  file named Policy.md only inside `policy_writer()`. File modes of replaced files are
  kept. Only regular files are ever opened.
"""

from __future__ import annotations

import builtins  # `builtins.list` in classes that have a method named list
import hashlib
import os
import stat
import time
from contextlib import AbstractContextManager
from pathlib import Path

from memvault.backends.base import (
    ANY,
    MISSING,
    Blob,
    Capabilities,
    Change,
    Expected,
    check_not_policy,
)
from memvault.backends.fs_io import (
    changed_ns,
    check_not_readonly,
    fsync_dir,
    identity,
    make_temp,
    open_for_append,
    read_regular,
    remove_stale_temps,
    remove_stale_temps_once,
    rename_no_replace,
    same_version,
    stable_read,
    swap,
    version_of,
)
from memvault.backends.fs_lock import FileLock
from memvault.core.paths import clean_vault_path, is_obsidian_internal
from memvault.errors import Conflict, InvalidInput, VaultError
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
        self._lock = FileLock(self.root / LOCK,
                              # the caches are git-ignored from the very first write
                              prepare=lambda: ensure_state_folder(self.root))

    def describe(self) -> str:
        return str(self.root)

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(local_root=self.root)

    def spelled(self, folder: str) -> str:
        """`folder` as it is spelled on disk: a folder named the same up to case and
        Unicode normalisation is reused (see `backends.fs_names`)."""
        from memvault.backends.fs_names import spelled

        return spelled(self.root, folder)

    # -- paths -------------------------------------------------------------------------

    def _path(self, rel: str, *, for_write: bool = False) -> Path:
        """The absolute path for `rel`, refusing anything that leaves the vault.

        Reading may follow a symlink that stays inside the vault. Writing never follows
        one: a write, append or delete whose path has a symlink anywhere below the vault
        root (the file, or a folder on the way) is refused, so a link can never widen a
        write to another note, another principal's files or Policy.md. Nothing is written
        inside `.obsidian/`, and a file named Policy.md only by `policy_writer()`.
        """
        rel = clean_vault_path(rel)
        full = self.root / rel
        if for_write and is_obsidian_internal(rel):
            raise InvalidInput("memvault never writes inside .obsidian/", path=rel)
        real = Path(os.path.realpath(full))
        if not _is_within(real, self._real_root):
            if full.is_symlink():
                raise InvalidInput("file is a symlink pointing outside the vault", path=rel)
            raise InvalidInput("path leads outside the vault (through a symlink?)", path=rel)
        if for_write:
            target = self._linked_to(rel, real)
            if target is not None:
                if is_obsidian_internal(target):
                    raise InvalidInput("memvault never writes inside .obsidian/ (the path is "
                                       "a symlink into it)", path=rel)
                raise InvalidInput(f"{_first_link(self.root, rel)}; memvault never writes "
                                   "through a symlink (replace it with the real file or "
                                   "folder); nothing was written", path=rel)
            check_not_policy(rel)
        return full

    def _linked_to(self, rel: str, real: Path) -> str | None:
        """The vault-relative path `rel` really leads to, when a symlink is on the way."""
        expected = self._real_root / rel
        if os.path.normcase(str(real)) == os.path.normcase(str(expected)):
            return None
        return real.relative_to(self._real_root).as_posix() if real != self._real_root else "."

    # -- reading -----------------------------------------------------------------------

    def read(self, path: str) -> Blob | None:
        full = self._path(path)
        found = stable_read(full, path)
        linked = self._linked_to(clean_vault_path(path), Path(os.path.realpath(full)))
        if found is None:
            if linked is not None:  # a dangling link is broken, not "no such file"
                raise InvalidInput(f"is a symlink to {linked}, which does not exist",
                                   path=path)
            return None
        data, st = found
        return Blob(data, version_of(data, st), changed_ns(st), linked)

    def read_unversioned(self, path: str) -> bytes | None:
        """A file's bytes, read as `read` reads them but without computing a version (no
        hash of the content): for local records that are read whole and never written back
        from what was read (the journal scanned for forgets, the safety net's
        fingerprint of a 1 MB memory file)."""
        found = stable_read(self._path(path), path)
        return None if found is None else found[0]

    def remove_stale_temps(self, paths: list[str]) -> None:
        """Delete temp files a killed writer left beside these files: a staged new file, or
        the old file displaced by an exchange just before the kill. Under the lock no
        other memvault process is staging, so every one of them is an orphan."""
        with self.lock():
            remove_stale_temps_once([self.root / clean_vault_path(p) for p in paths])

    def link_target(self, path: str) -> str | None:
        """Where `path` really leads when a symlink is on the way (for doctor), else None."""
        rel = clean_vault_path(path)
        full = self.root / rel
        if not os.path.lexists(full):
            return None
        return self._linked_to(rel, Path(os.path.realpath(full)))

    def read_many(self, paths: list[str]) -> dict[str, Blob]:
        found = {path: self.read(path) for path in paths}
        return {path: blob for path, blob in found.items() if blob is not None}

    def versions(self, prefix: str = "") -> dict[str, str]:
        """Versions here name bytes, so each file is read (a local read is cheap)."""
        out = {}
        for path in self.list(prefix):
            try:
                blob = self.read(path)
            except InvalidInput:
                continue  # a dangling link: nothing to read
            if blob is not None:
                out[path] = blob.version
        return out

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
        """Raise Conflict unless the file is still the one `expected` was read from."""
        if expected is ANY:
            return
        found = stable_read(full, path)
        if expected is MISSING:
            if found is not None:
                raise Conflict("already exists", path=path)
        elif found is None or not same_version(str(expected), *found):
            raise Conflict("changed on disk since it was read; nothing was written (try again)",
                           path=path)

    def _check_moved(self, path: str, full: Path, expected: Expected) -> None:
        """The early half of `_check_expected`: a file whose inode, size or modification
        time is not the one `expected` was read at is refused before any staging (no read,
        no hash); one that still looks the same is checked byte for byte (SHA-1) by the
        final check, right before install."""
        if isinstance(expected, str) and expected.count(":") == 3:
            try:
                st = os.lstat(full)
            except OSError:
                st = None
            if st is not None and stat.S_ISREG(st.st_mode) and \
                    expected.partition(":")[2] == ":".join(map(str, identity(st))):
                return
        self._check_expected(path, full, expected)  # says why (or it changed back)

    def write(self, path: str, data: bytes, *, expected: Expected = ANY,
              message: str = "") -> str:
        full = self._path(path, for_write=True)
        with self.lock():
            self._check_moved(path, full, expected)  # early: before any staging
            check_not_readonly(path, full)
            tmp, staged = self._stage(path, full, data)
            try:
                self._check_expected(path, full, expected)  # final: right before install
                self._install(path, tmp, full, expected, staged)
            finally:
                tmp.unlink(missing_ok=True)  # after an exchange: the displaced old file
        return version_of(data, staged)

    def replace_unsynced(self, path: str, data: bytes) -> None:
        """Replace a file atomically (temp file, rename) without `fsync`: for a local
        record whose loss in a power cut costs nothing (the safety net's copy of bytes a
        memory file already holds durably). The same path checks as `write`."""
        full = self._path(path, for_write=True)
        with self.lock():
            check_not_readonly(path, full)
            tmp, _staged = self._stage(path, full, data, durable=False)
            try:
                os.replace(tmp, full)
            finally:
                tmp.unlink(missing_ok=True)

    def delete(self, path: str, *, expected: Expected = ANY, message: str = "") -> None:
        full = self._path(path, for_write=True)
        with self.lock():
            self._check_expected(path, full, expected)
            try:
                full.unlink()
            except FileNotFoundError:
                return
            except IsADirectoryError:
                raise InvalidInput("is a folder, expected a file", path=path) from None
            fsync_dir(full.parent)

    def append(self, path: str, data: bytes, *, message: str = "") -> None:
        full = self._path(path, for_write=True)
        with self.lock():
            check_not_readonly(path, full)
            full.parent.mkdir(parents=True, exist_ok=True)
            fd = open_for_append(full, path)
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

    def commit(self, changes: builtins.list[Change], *, message: str = "") -> None:
        """Stage every new file first; then install them all, rolling back on failure."""
        with self.lock():
            staged: list[tuple[Change, Path, tuple[Path, os.stat_result] | None]] = []
            try:
                fulls = [self._path(ch.path, for_write=True) for ch in changes]
                remove_stale_temps_once(fulls)  # one scan per folder, not one per file
                for ch, full in zip(changes, fulls, strict=True):
                    self._check_expected(ch.path, full, ch.expected)
                    if ch.data is not None:
                        check_not_readonly(ch.path, full)
                    tmp = (self._stage(ch.path, full, ch.data, clean=False)
                           if ch.data is not None else None)
                    staged.append((ch, full, tmp))
                for ch, full, _tmp in staged:  # final check, after every file is staged
                    self._check_expected(ch.path, full, ch.expected)
            except BaseException:
                for _, _, tmp in staged:
                    if tmp is not None:
                        tmp[0].unlink(missing_ok=True)
                raise
            done: list[tuple[Path, bytes | None]] = []
            try:
                for ch, full, tmp in staged:
                    old = read_regular(full, ch.path)
                    if tmp is not None:
                        self._install(ch.path, tmp[0], full, ch.expected, tmp[1],
                                      sync_dir=False)
                    elif old is not None:
                        full.unlink()
                    done.append((full, old))
                for folder in dict.fromkeys(full.parent for full, _ in done):
                    fsync_dir(folder)
            except BaseException:
                for full, old in reversed(done):
                    if old is None:
                        full.unlink(missing_ok=True)
                    else:
                        restore, _st = self._stage(str(full), full, old)
                        os.replace(restore, full)
                raise
            finally:
                for _, _, tmp in staged:
                    if tmp is not None:
                        tmp[0].unlink(missing_ok=True)  # after an exchange: the old file

    def _stage(self, path: str, full: Path, data: bytes, *, clean: bool = True,
               durable: bool = True) -> tuple[Path, os.stat_result]:
        """Write `data` to a temp file next to `full`, fsynced; returns the temp path and
        its `fstat` (the identity the installed file will have).

        `clean=False`: the caller already removed stale temps (see `commit`);
        `durable=False`: no `fsync` (see `replace_unsynced`)."""
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
            remove_stale_temps(full)
        fd, tmp = make_temp(full)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.chmod(tmp, mode if mode is not None else 0o644)
                if durable:
                    os.fsync(fh.fileno())
                staged = os.fstat(fh.fileno())
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        return tmp, staged

    def _install(self, path: str, tmp: Path, full: Path, expected: Expected,
                 staged: os.stat_result, *, sync_dir: bool = True) -> None:
        """Put the staged file in place of `full`, honouring `expected` to the last instant.

        - `MISSING`: an atomic rename that refuses to replace an existing file, where the
          system has one (`RENAME_NOREPLACE`).
        - a version: an atomic exchange (`RENAME_EXCHANGE`), after which the displaced
          file, now at the temp path, is checked against `expected`. If someone replaced or
          rewrote the file after the final check, the exchange is undone and Conflict is
          raised (the caller re-reads and re-applies). Without exchange support, a rename.
        """
        try:
            if expected is MISSING and rename_no_replace(tmp, full, staged.st_dev):
                pass
            elif isinstance(expected, str) and swap(tmp, full, staged.st_dev):
                self._verify_displaced(path, tmp, full, expected, staged)
            else:
                os.replace(tmp, full)
        except FileExistsError:
            raise Conflict("already exists", path=path) from None
        except FileNotFoundError:
            raise Conflict("was removed while memvault wrote it; nothing was written "
                           "(try again)", path=path) from None
        except OSError as exc:
            raise VaultError(f"cannot write: {exc.strerror or exc}", path=path) from None
        if sync_dir:
            fsync_dir(full.parent)

    def _verify_displaced(self, path: str, tmp: Path, full: Path, expected: str,
                          staged: os.stat_result) -> None:
        """After an exchange: keep it if the file we displaced is the one we read, else
        put that file back and raise Conflict. Nothing anyone saved is deleted here."""
        found = stable_read(tmp, path)
        if found is not None and same_version(expected, *found):
            return  # the caller removes the displaced old file
        swap(tmp, full, staged.st_dev)  # undo: their file back in place
        back = tmp.lstat()
        if (back.st_ino, back.st_dev) != (staged.st_ino, staged.st_dev):
            # A third save landed between the exchange and its undo: keep it beside the
            # file, where doctor reports conflict copies, rather than delete anyone's words.
            copy = full.with_name(f"{full.stem} (memvault conflict copy "
                                  f"{time.strftime('%Y%m%d-%H%M%S')}){full.suffix}")
            os.replace(tmp, copy)
        raise Conflict("changed on disk while memvault wrote it; nothing was written "
                       "(try again)", path=path)

    # -- locking -----------------------------------------------------------------------

    def lock(self) -> AbstractContextManager[None]:
        """The vault's cross-process lock (`.memvault/lock`; see `fs_lock.FileLock`)."""
        return self._lock.hold()

    def try_lock(self) -> AbstractContextManager[bool]:
        """The same lock without waiting: yields whether it is held (a reader that only
        wants to keep a cache up to date never waits for a writer)."""
        return self._lock.hold_if_free()


def _first_link(root: Path, rel: str) -> str:
    """"X is a symlink to Y" for the first symlink on the way from `root` to `rel`."""
    parts = rel.split("/")
    for n in range(1, len(parts) + 1):
        here = root.joinpath(*parts[:n])
        if here.is_symlink():
            where = "/".join(parts[:n])
            what = "is a symlink" if n == len(parts) else f"its folder {where} is a symlink"
            try:
                to = os.readlink(here)
            except OSError:
                to = "?"
            return f"{what} to {to}"
    return "is reached through a symlink"


def _is_within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents
