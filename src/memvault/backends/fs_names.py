"""Reusing the folders already on disk: `Pilot/` is `pilot/` when that is what exists.

A vault moves between disks that disagree about names: macOS and Windows treat `pilot/`
and `Pilot/` as one folder, and macOS stores names decomposed (NFD) where Linux keeps
whatever bytes it is given. On a case-sensitive Linux disk (or in a git checkout), a
vault made on a Mac may hold `pilot/` or an NFD `Mémoire/` while memvault's layout says
`Pilot/` or NFC `Mémoire/`. Creating the second spelling would split the memory in two
folders, and sync would later collide them. `existing_spelling` maps each folder of a
vault-relative path to the folder already on disk whose name is the same up to case and
Unicode normalisation (`core.paths.folder_key`), so memvault reads and writes the folder
the person has.

Only folders are matched (file names are memvault's own); a folder spelled exactly as
asked always wins; among several twins (possible on a case-sensitive disk) the one whose
name is already NFC wins, then the first in code-point order, so the choice is stable.
Symlinked folders are not matched (writes never go through them anyway).
"""

from __future__ import annotations

import os
import unicodedata

from memvault.core.paths import folder_key

TYPE_CHECKING = False  # on the cold path of `memvault search --json`: no pathlib
if TYPE_CHECKING:
    StrPath = str | os.PathLike[str]


def spelled(root: StrPath, folder: str) -> str:
    """The vault-relative `folder` as spelled on disk under `root` (`FsBackend.spelled`);
    InvalidInput when it is not a clean vault-relative path."""
    from memvault.core.paths import clean_vault_path

    return existing_spelling(root, clean_vault_path(folder))


def existing_spelling(root: StrPath, rel: str) -> str:
    """`rel` (a clean vault-relative folder path) with each folder that does not exist
    as spelled replaced by its twin on disk, if there is one."""
    parts = rel.split("/")
    base = os.fspath(root)
    for i, part in enumerate(parts):
        if os.path.lexists(os.path.join(base, part)):
            base = os.path.join(base, part)
            continue
        twin = _twin(base, part)
        if twin is None:
            break  # nothing further down can exist
        parts[i] = twin
        base = os.path.join(base, twin)
    return "/".join(parts)


def _twin(folder: StrPath, name: str) -> str | None:
    key = folder_key(name)
    try:
        with os.scandir(folder) as listing:
            found = [e.name for e in listing
                     if folder_key(e.name) == key and e.is_dir(follow_symlinks=False)]
    except OSError:
        return None
    if not found:
        return None
    return min(found, key=lambda n: (unicodedata.normalize("NFC", n) != n, n))
