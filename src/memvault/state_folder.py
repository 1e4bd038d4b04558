"""Creating the `.memvault/` state folder on disk, always with its `.gitignore`.

Whoever creates the folder first (`init`, the write lock of the first change, the search
index of a folder that was never initialised) goes through `ensure_state_folder`, so the
local caches (the search index, the lock) are git-ignored from the first moment and a
`git add -A` in the vault never commits them. An existing `.gitignore` is never changed.
"""

from __future__ import annotations

import os
from pathlib import Path

from memvault.state_paths import CACHE_PATTERNS, GITIGNORE, STATE_DIR

GITIGNORE_TEXT = "# Local caches: rebuildable, never committed\n" + "".join(
    f"{pattern}\n" for pattern in CACHE_PATTERNS)


def ensure_state_folder(root: Path) -> Path:
    """Make `root/.memvault/` if missing and give it a `.gitignore` if it has none."""
    folder = root / STATE_DIR
    folder.mkdir(parents=True, exist_ok=True)
    ignore = root / GITIGNORE
    if not ignore.exists() and not ignore.is_symlink():
        tmp = folder / f".gitignore.{os.getpid()}.tmp"
        tmp.write_text(GITIGNORE_TEXT, encoding="utf-8")
        try:
            os.link(tmp, ignore)  # never replaces a .gitignore written meanwhile
        except FileExistsError:
            pass
        except OSError:  # no hard links here: a plain exclusive create instead
            try:
                with open(ignore, "x", encoding="utf-8") as fh:
                    fh.write(GITIGNORE_TEXT)
            except FileExistsError:
                pass
        finally:
            tmp.unlink(missing_ok=True)
    return folder
