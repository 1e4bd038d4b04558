"""Temp files a killed write left in the memory home, found and removed.

Every write of a local vault stages `.<name>.<12 hex>.tmp` beside the file it replaces
and swaps it in. A write killed before the swap leaves the new bytes there; one killed
after an exchange but before the last unlink leaves the *previous* file (every fact it
held, forgotten ones included). The next write of that file removes such orphans; until
then `memvault sync` must not commit them (see `services/sync.py`), the vault's
`.gitignore` keeps Obsidian Git and a plain `git add -A` from taking them
(`IGNORE_PATTERN`), and `doctor` names them (`--fix` removes them).

Reading never removes anything: only commands that write (which hold the vault lock,
so no memvault process is staging at that moment) do.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from memvault.backends.fs_io import TEMP_HEX, temp_for

if TYPE_CHECKING:
    from memvault.services.vault import Vault


def ignore_pattern(home: str) -> str:
    """The `.gitignore` line that keeps the temps under the memory home out of git: only
    memvault's own names (12 hex digits), so a hidden `.tmp` file of the user's syncs."""
    return f"{home}/**/.*.{'[0-9a-f]' * TEMP_HEX}.tmp"


def exclude_pathspec(home: str) -> str:
    """A `git add` pathspec leaving the temps under the memory home out, whatever the
    ignore files say."""
    return f":(exclude,glob){ignore_pattern(home)}"


def find(vault: Vault) -> list[str]:
    """Vault-relative paths of memvault temp files under the memory home (every scope),
    sorted; empty for a backend without a local folder. Symlinked folders are not
    followed (memvault never writes through them)."""
    root = vault.backend.capabilities.local_root
    if root is None:
        return []
    home = vault.config.home
    found: list[str] = []
    for folder, dirs, names in os.walk(root / home):
        dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(folder, d))]
        rel = os.path.relpath(folder, root).replace(os.sep, "/")
        found += [f"{rel}/{n}" for n in names if temp_for(n) is not None]
    return sorted(found)


def remove(vault: Vault) -> list[str]:
    """Remove the leftover temps under the memory home, under the vault lock (through
    the backend, which knows its own naming); return those that are gone."""
    leftovers = find(vault)
    if not leftovers:
        return []
    backend: Any = vault.backend
    targets = sorted({p.rpartition("/")[0] + "/" + str(temp_for(p.rpartition("/")[2]))
                      for p in leftovers})
    backend.remove_stale_temps(targets)
    root = vault.backend.capabilities.local_root
    assert root is not None
    return [p for p in leftovers if not os.path.lexists(root / p)]


def doctor_findings(vault: Vault) -> list[Any]:
    """One warning per leftover temp: what it is and what `--fix` does."""
    from memvault.services.doctor import Finding

    return [Finding("warning", path, "is a temp file a killed write left (it may hold an "
                    f"older copy of {temp_for(path.rpartition('/')[2])}, forgotten facts "
                    "included); the next write removes it, `doctor --fix` now")
            for path in find(vault)]


def doctor_repair(vault: Vault) -> list[str]:
    """`doctor --fix`: remove the leftover temps (the next write would)."""
    return [f"removed {path} (a temp file a killed write left)" for path in remove(vault)]
