"""A local copy of a remote vault's notes, so the search index works on any backend.

The index (`memvault.index`) reads notes from a folder. A backend with no folder on this
machine (the GitHub backend) but a private cache folder (`capabilities.cache_dir`) gets
one: `NoteMirror.sync` copies every Markdown note of the store into `<cache>/mirror/`,
and the index is built there as on a local vault. A file is copied again only when its
version (GitHub: the blob id) differs from the one recorded in the mirror's manifest
(`state_paths.MIRROR_MANIFEST`), so a search costs no download while nothing changed;
a note deleted in the store is deleted from the mirror. Copies are written whole (temp file,
rename), folders 0700 and files 0600, under a lock, so two processes never interleave.

The mirror is a cache: deleting it loses nothing. A permanent forget deletes it (with
the backend's other caches), since its copies hold the forgotten words.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path, PurePosixPath

from memvault.backends.base import Backend
from memvault.backends.fs_lock import FileLock
from memvault.core.paths import clean_vault_path
from memvault.errors import InvalidInput, VaultError
from memvault.state_paths import MIRROR_LOCK, MIRROR_MANIFEST, STATE_DIR


def mirrored(path: str) -> bool:
    """Whether the index would read this file: a `.md` note outside hidden folders."""
    parts = PurePosixPath(path).parts
    return path.lower().endswith(".md") and not any(p.startswith(".") for p in parts)


class NoteMirror:
    def __init__(self, backend: Backend, cache_dir: Path) -> None:
        self.backend = backend
        self.folder = cache_dir / "mirror"
        self._lock = FileLock(self.folder / MIRROR_LOCK, prepare=self._make_folder)

    def _make_folder(self) -> None:
        (self.folder / STATE_DIR).mkdir(parents=True, exist_ok=True, mode=0o700)

    def sync(self, only: tuple[str, ...] | list[str] | None = None) -> int:
        """Bring the mirror in step with the store (only the paths in `only`, when given);
        returns how many files were copied or removed."""
        with self._lock.hold():
            known = self._manifest()
            current = {p: v for p, v in self.backend.versions().items() if mirrored(p)}
            wanted = current if only is None else {p: v for p, v in current.items() if p in only}
            gone = [p for p in known if p not in current and (only is None or p in only)]
            changed = 0
            try:
                for path in gone:  # first: a note may have become a folder, or the reverse
                    self._target(path).unlink(missing_ok=True)
                    del known[path]
                    changed += 1
                stale = [p for p, v in wanted.items()
                         if known.get(p) != v or not self._target(p).is_file()]
                for path, blob in self.backend.read_many(stale).items():
                    self._write(path, blob.data)
                    known[path] = blob.version
                    changed += 1
            except OSError as exc:
                raise VaultError("cannot keep this machine's copy of the notes for search: "
                                 f"{exc.strerror or exc}", path=str(self.folder)) from None
            finally:
                if changed:
                    self._save(known)
            return changed

    def clear(self) -> None:
        """Delete the copy (and the index built on it)."""
        shutil.rmtree(self.folder, ignore_errors=True)

    def _target(self, path: str) -> Path:
        rel = clean_vault_path(path)
        target = self.folder / rel
        if not mirrored(rel) or os.path.islink(target):
            raise InvalidInput("not a note memvault mirrors for search", path=path)
        return target

    def _write(self, path: str, data: bytes) -> None:
        target = self._target(path)
        if target.is_dir():  # a folder of the same name was deleted from the store
            shutil.rmtree(target)
        target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(tmp, target)

    def _manifest(self) -> dict[str, str]:
        try:
            data = json.loads((self.folder / MIRROR_MANIFEST).read_text("utf-8"))
        except (OSError, ValueError):
            return {}
        return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}

    def _save(self, known: dict[str, str]) -> None:
        path = self.folder / MIRROR_MANIFEST
        tmp = path.with_name(f".mirror.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(known, sort_keys=True), "utf-8")
        os.replace(tmp, path)
