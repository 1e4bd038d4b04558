"""Vault-relative paths and safe file names (pure).

Every path that reaches a backend goes through `clean_vault_path`: POSIX, normalised,
relative, and refused when it could escape the vault (`..`, absolute, drive letters,
NUL). File names built from user data go through `safe_name`, which refuses anything
Obsidian or Windows cannot hold. `owner_of` and `visible_to` decide which principal a
vault path belongs to, and so who may be shown it; `private_link_target` decides which
symlinked files the search index must not read through.
"""

from __future__ import annotations

import re
import unicodedata

from memvault.errors import InvalidInput

_WINDOWS_RESERVED = {"con", "prn", "aux", "nul", *(f"com{i}" for i in range(1, 10)),
                     *(f"lpt{i}" for i in range(1, 10))}
_FORBIDDEN_CHARS = set('/\\:*?"<>|#^[]\x00')
_SCOPE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\Z")


def clean_vault_path(path: str) -> str:
    """Normalise `path` to a vault-relative POSIX path, or raise InvalidInput."""
    if not isinstance(path, str) or not path:
        raise InvalidInput("empty path")
    if "\x00" in path:
        raise InvalidInput("path contains a NUL byte")
    p = path.replace("\\", "/")
    if p.startswith("/") or re.match(r"[A-Za-z]:", p):
        raise InvalidInput(f"path {path!r} is absolute; paths are relative to the vault")
    parts: list[str] = []
    for part in p.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            raise InvalidInput(f"path {path!r} escapes the vault")
        parts.append(part)
    if not parts:
        raise InvalidInput(f"path {path!r} names the vault itself")
    return "/".join(parts)


def folder_key(name: str) -> str:
    """What makes two folder names the same folder on a case-insensitive, normalising disk
    (macOS, Windows) or to Obsidian's link resolution: case folded, Unicode NFC. So
    `pilot`, `PILOT` and `Pilot` share a key, as do `Zu\u0308rich` (NFD) and `Z\u00fcrich`."""
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", name).casefold())


def is_obsidian_internal(path: str) -> bool:
    """True for paths inside `.obsidian/` (settings, plugin secrets): never written."""
    first = path.split("/", 1)[0]
    return first.casefold() == ".obsidian"


def check_safe_name(name: str, what: str = "name") -> str:
    """Return `name` if it is a valid file name on every platform, else raise."""
    if not name or name != name.strip() or name.endswith("."):
        raise InvalidInput(f"{what} {name!r} is not a valid file name")
    if any(c in _FORBIDDEN_CHARS or ord(c) < 32 for c in name):
        raise InvalidInput(f"{what} {name!r} contains a character file names cannot hold")
    if name.split(".")[0].casefold() in _WINDOWS_RESERVED or name in (".", ".."):
        raise InvalidInput(f"{what} {name!r} is a reserved file name")
    return name


def safe_name(text: str, fallback: str = "untitled") -> str:
    """A slug of `text` that is a valid Obsidian and Windows file name."""
    out = "".join("-" if (c in _FORBIDDEN_CHARS or ord(c) < 32) else c for c in text)
    out = re.sub(r"\s+", " ", out).strip(" .-")
    out = re.sub(r"-{2,}", "-", out)
    if not out or out.split(".")[0].casefold() in _WINDOWS_RESERVED:
        out = f"{out or fallback}-" if out else fallback
    return out[:120]


def check_scope(scope: str) -> str:
    """Validate a principal (scope) name; the folder name is its lower-case form."""
    if not _SCOPE.match(scope) or scope.endswith(".") or ".." in scope:
        raise InvalidInput(
            f"scope {scope!r} is not a safe folder name: use letters, digits, '.', '_' or '-'"
            " (at most 64, starting with a letter or digit)")
    if scope.split(".")[0].casefold() in _WINDOWS_RESERVED:
        raise InvalidInput(f"scope {scope!r} is a reserved name on Windows")
    return scope.lower()


SCOPES_FOLDER = "scopes"
"""Inside the memvault home, the folder holding one folder per other principal."""
DEFAULT_SCOPE = "default"


def owner_of(path: str, home_root: str) -> str | None:
    """The principal whose memory home holds `path`, or None for a note outside it."""
    folded = path.casefold()
    home = home_root.strip("/").casefold() + "/"
    if not folded.startswith(home):
        return None
    rest = folded[len(home):]
    scopes = SCOPES_FOLDER + "/"
    if rest.startswith(scopes):
        name, sep, _ = rest[len(scopes):].partition("/")
        if name and sep:
            return name  # `scopes/default/` is the default principal's, like the rest
    return DEFAULT_SCOPE


def visible_to(path: str, home_root: str, scope_name: str) -> bool:
    """Whether principal `scope_name` may be shown the vault file at `path`.

    Everything under the memvault home `home_root` belongs to one principal:
    `scopes/<name>/…` to that scope, the rest to the default principal. Notes elsewhere
    in the vault are the user's own and seen by every principal. Compared
    case-insensitively, as a case-insensitive disk would open the same file.
    """
    owner = owner_of(path, home_root)
    return owner is None or owner == scope_name


def private_link_target(target: str, home_root: str) -> bool:
    """Whether a symlink in the vault that resolves to vault path `target` must not be
    read as a note: the target lies in the memvault home (some principal's memory,
    while the link would be shown by its own path to every principal allowed there) or
    in a hidden folder (`.memvault/` with its caches, `.git/`, `.obsidian/`)."""
    return owner_of(target, home_root) is not None or \
        any(part.startswith(".") for part in target.split("/"))
