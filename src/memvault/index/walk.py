"""Listing the vault's Markdown files, and one signature of the listing.

`walk_notes` is the one definition of which files the index covers: every `.md` file
under the vault folder with its size, modification time and change time, skipping hidden folders and
files (`.obsidian/`, `.memvault/`, `.git/`, `.trash/`), symlinks that lead outside the
vault or to something other than a file, and the templates folders Obsidian's Templates
or Templater plugin names (`template_folders`: skeletons with `{{date}}` placeholders are
not notes about anything; a templates folder holding memvault's home is not skipped).

`files_signature` folds a listing into one value, so a search can tell that nothing
changed since the last refresh by comparing one stored value instead of 10,000 rows.

This module is on the cold path of every search (`memvault search --json` runs it before
anything else is imported), so it imports only `os` and `zlib` at first; Obsidian's
settings are read only when the vault has an `.obsidian/` folder. Nothing here writes.
"""

from __future__ import annotations

import os
import stat

Entry = tuple[str, int, int, int]
"""(vault-relative path, size in bytes, modification time in ns, change time in ns).

The change time (`st_ctime_ns`) is set by the kernel on every write, rename or chmod and
cannot be set back by a program (`os.utime`, `touch -r`, `cp -p` and editors that keep the
old modification time only set the modification time), so an edit that keeps the size
and puts the modification time back still changes it."""


def _settings_file(root: str, rel: str) -> bytes | None:
    """A small settings file in `.obsidian/`, or None (missing, not a file, a symlink)."""
    path = os.path.join(root, rel)
    try:
        st = os.lstat(path)
        if not stat.S_ISREG(st.st_mode) or st.st_size > 1 << 20:
            return None
        with open(path, "rb") as fh:
            return fh.read()
    except OSError:
        return None


def template_folders(root: str | os.PathLike[str], home_root: str) -> tuple[str, ...]:
    """The templates folders Obsidian's settings name, except one holding the home."""
    root = os.fspath(root)
    if not os.path.isdir(os.path.join(root, ".obsidian")):
        return ()
    from memvault.core.obsidian_settings import TEMPLATER, TEMPLATES, in_folders
    from memvault.core.obsidian_settings import template_folders as named

    folders = named(_settings_file(root, TEMPLATES), _settings_file(root, TEMPLATER))
    return tuple(f for f in folders if not in_folders(f"{home_root}/x", (f,)))


_HANDED_OVER: dict[tuple[str, str], list[Entry]] = {}


def hand_over(root: str | os.PathLike[str], home_root: str, listing: list[Entry]) -> None:
    """Keep a listing just taken for the next `walk_notes` of the same folder in this
    process, once: the quick search path lists the vault, finds the index behind, and
    leaves the search to the ordinary command, which would list it again a moment later."""
    _HANDED_OVER[(os.fspath(root), home_root)] = listing


def walk_notes(root: str | os.PathLike[str], home_root: str) -> list[Entry]:
    """Every indexable file under `root` (see the module doc), in no particular order."""
    root = os.fspath(root)
    kept = _HANDED_OVER.pop((root, home_root), None)
    if kept is not None:
        return kept
    out: list[Entry] = []
    append = out.append  # names looked up once: this loop runs once per file
    real_root = os.path.realpath(root)
    templates = template_folders(root, home_root)
    skipped: set[str] = set()
    if templates:
        from memvault.core.paths import folder_key

        def key(rel: str) -> str:
            return "/".join(map(folder_key, rel.split("/")))

        skipped = {key(f) + "/" for f in templates}
    stack = [(root, "")]
    while stack:
        folder, rel_folder = stack.pop()
        try:
            with os.scandir(folder) as listing:
                entries = list(listing)
        except OSError:
            continue
        for entry in entries:
            name = entry.name
            if name[0] == ".":
                continue
            try:
                if entry.is_dir(follow_symlinks=False):
                    sub = f"{rel_folder}{name}/"
                    if not skipped or key(sub) not in skipped:
                        stack.append((entry.path, sub))
                    continue
                if name[-3:].lower() != ".md":
                    continue
                if entry.is_symlink():
                    target = os.path.realpath(entry.path)
                    if not target.startswith(real_root + os.sep) or not os.path.isfile(target):
                        continue
                st = entry.stat()
            except OSError:
                continue
            append((f"{rel_folder}{name}", st.st_size, st.st_mtime_ns, st.st_ctime_ns))
    return out


def files_signature(entries: list[Entry]) -> str:
    """One value that changes whenever a file is added, removed, renamed, resized,
    touched or written in place (its change time moves even when its size and
    modification time are put back): the count, the sums of sizes, modification and change
    times, and the sum of a checksum of each file's path seeded with its size and times,
    so two files trading contents (by renames, each keeping its size and time) change it
    too. A refresh whose listing has the signature stored with the files table compares
    that one value instead of 10,000 rows; any change to the table deletes it first."""
    import zlib

    crc = zlib.crc32
    size = mtime = ctime = paths = 0
    for path, entry_size, entry_mtime, entry_ctime in entries:
        size += entry_size
        mtime += entry_mtime
        ctime += entry_ctime
        seed = (entry_size * 0x9E3779B1 + entry_mtime + entry_ctime * 0x85EBCA6B) & 0xFFFFFFFF
        paths += crc(path.encode("utf-8", "surrogateescape"), seed)
    return f"{len(entries)}:{size}:{mtime}:{ctime}:{paths}"
