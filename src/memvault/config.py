"""Where the vault is, and what `.memvault/config.toml` says.

Vault location, in order: `--vault PATH`, `MEMVAULT_VAULT`, the nearest parent folder
holding `.memvault/`, else the per-user default vault (`$XDG_DATA_HOME/memvault/vault`,
usually `~/.local/share/memvault/vault`), created on first use.

The config file is committed with the vault and must never hold secrets (tokens come
from the environment only). It is read with `tomllib`; a setting is changed with
`set_config_value`, which keeps every comment and every other byte.
"""

from __future__ import annotations

import os
import re
import tomllib

from memvault.core.values import Value
from memvault.errors import InvalidInput
from memvault.state_paths import CONFIG, STATE_DIR

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

CAPTURE_MODES = ("ask", "silent", "manual")
DEFAULT_BACKEND = "fs"
"""The local folder: always available (`backends.registry` registers it first)."""
VAULT_FORMAT = 3
"""The format of the files this memvault writes (`vault_format` in config.toml); the
steps from older formats are `services.migrations.MIGRATIONS`, whose last is this one."""


class Config(Value):
    """Vault settings. Unknown keys are kept (for newer versions) and reported by doctor."""

    __slots__ = ("home", "backend", "capture", "learning", "retrieval", "tombstone_salt",
                 "vault_format", "sections", "unknown_keys")

    def __init__(self, home: str = "Pilot", backend: str = DEFAULT_BACKEND,
                 capture: str = "ask", learning: bool = True, retrieval: bool = True,
                 tombstone_salt: str = "", vault_format: int = 1,
                 sections: dict[str, dict[str, Any]] | None = None,
                 unknown_keys: list[str] | None = None) -> None:
        self.home = home
        self.backend = backend
        self.capture = capture
        self.learning = learning
        self.retrieval = retrieval
        self.tombstone_salt = tombstone_salt
        self.vault_format = vault_format
        """No key: a vault made before formats were numbered (0.1.0)."""
        self.sections: dict[str, dict[str, Any]] = {} if sections is None else sections
        self.unknown_keys: list[str] = [] if unknown_keys is None else unknown_keys

    def section(self, name: str) -> dict[str, Any]:
        return self.sections.get(name, {})


_TOP_LEVEL_KEYS = {"home", "backend", "capture", "learning", "retrieval", "tombstone_salt",
                   "vault_format"}


def parse_config(data: bytes | None) -> Config:
    """Parse config.toml bytes (None: defaults). Raises InvalidInput naming the file and,
    where it can, the line (`.memvault/config.toml: capture must be ... (line 7)`)."""
    if data is None:
        return Config()
    try:
        text = data.decode("utf-8")
        raw = tomllib.loads(text)
    except UnicodeDecodeError:
        raise InvalidInput("not valid UTF-8", path=CONFIG) from None
    except tomllib.TOMLDecodeError as exc:
        raise InvalidInput(f"invalid TOML: {exc}", path=CONFIG) from None
    cfg = Config()
    for key, value in raw.items():
        if isinstance(value, dict):
            cfg.sections[key] = value
        elif key not in _TOP_LEVEL_KEYS:
            cfg.unknown_keys.append(key)
    _set(cfg, raw, "home", str, text)
    _set(cfg, raw, "backend", str, text)
    _set(cfg, raw, "capture", str, text)
    _set(cfg, raw, "learning", bool, text)
    _set(cfg, raw, "retrieval", bool, text)
    _set(cfg, raw, "tombstone_salt", str, text)
    _set(cfg, raw, "vault_format", int, text)
    if cfg.vault_format < 1:
        raise InvalidInput(f"vault_format must be 1 or more, not {cfg.vault_format}"
                           f"{_at(text, 'vault_format')}", path=CONFIG)
    if cfg.backend != DEFAULT_BACKEND:  # the default is always there
        from memvault.backends.registry import names as backend_names

        if cfg.backend not in backend_names():
            raise InvalidInput(f"backend must be one of {', '.join(backend_names())}, not "
                               f"{cfg.backend!r}{_at(text, 'backend')}", path=CONFIG)
    if cfg.capture not in CAPTURE_MODES:
        raise InvalidInput(f"capture must be one of {', '.join(CAPTURE_MODES)}, not "
                           f"{cfg.capture!r}{_at(text, 'capture')}", path=CONFIG)
    from memvault.core.paths import clean_vault_path

    try:
        cfg.home = clean_vault_path(cfg.home)
    except InvalidInput as exc:
        raise InvalidInput(f"home: {exc}{_at(text, 'home')}", path=CONFIG) from None
    if cfg.home.split("/")[0].startswith("."):
        raise InvalidInput(f"home may not be a hidden folder{_at(text, 'home')}",
                           path=CONFIG)
    return cfg


def _set(cfg: Config, raw: dict[str, Any], key: str, kind: type, text: str) -> None:
    if key not in raw:
        return
    value = raw[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        what = {bool: "boolean", int: "whole number"}.get(kind, "string")
        raise InvalidInput(f"{key} must be a {what}, not {value!r}{_at(text, key)}",
                           path=CONFIG)
    setattr(cfg, key, value)


def _at(text: str, key: str) -> str:
    """` (line N)` for the top-level line setting `key`, or "" when it cannot be found."""
    pattern = re.compile(rf"[ \t]*[\"']?{re.escape(key)}[\"']?[ \t]*=")
    for number, line in enumerate(text.split("\n"), 1):
        if line.lstrip().startswith("["):
            break
        if pattern.match(line):
            return f" (line {number})"
    return ""


def default_config_text(vault_format: int) -> str:
    """The config.toml written by `memvault init` for a vault of `vault_format`."""
    import secrets

    return (
        "# memvault settings for this vault. Committed with the vault: never put secrets here\n"
        "# (tokens come from environment variables only). See docs/configuration.md.\n"
        "\n"
        "# Folder (inside the vault) that holds Memory.md, Profile.md, Policy.md, ...\n"
        'home = "Pilot"\n'
        "# Where the vault lives: \"fs\" (this folder) or \"github\" (see [github])\n"
        'backend = "fs"\n'
        "# What extraction does with facts found in chat: \"ask\" (proposals), \"silent\", "
        "\"manual\"\n"
        'capture = "ask"\n'
        "# false: no new proposals from extraction or inference (existing memory is kept)\n"
        "learning = true\n"
        "# false: `memvault context` gives no personal memory\n"
        "retrieval = true\n"
        "# Key for the content-free hashes in tombstones.jsonl (random, not a secret)\n"
        f'tombstone_salt = "{secrets.token_hex(16)}"\n'
        "# Format of this vault's files; memvault upgrades an older vault when it opens it\n"
        f"vault_format = {vault_format}\n"
    )


def set_config_value(text: str, key: str, value: bool | int | str) -> str:
    """`text` (config.toml) with the top-level `key` set to `value`; every other byte kept.

    An existing key is changed with tomlkit, which keeps a TOML document's layout: the key
    keeps its place, spelling, spacing, line ending and inline comment; only its value
    changes. A new key is one line inserted right after the last top-level setting (before
    any comment or blank line leading to the first table), ending like the line above it.
    Raises InvalidInput when the text is not valid TOML or `key` names a table.
    """
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    try:
        doc = tomlkit.parse(text)
    except TOMLKitError as exc:
        raise InvalidInput(f"invalid TOML: {exc}", path=CONFIG) from None
    if key not in doc:
        return _insert_setting(text, f"{key} = {tomlkit.item(value).as_string()}")
    if isinstance(doc[key], dict):
        raise InvalidInput(f"{key} is a table, not a setting", path=CONFIG)
    doc[key] = value
    return tomlkit.dumps(doc)


def _insert_setting(text: str, line: str) -> str:
    """Insert one `key = value` line after the last top-level setting of valid TOML text.

    The file is cut into lines (endings kept); the top-level part ends at the first table
    header, and the insertion point is the shortest prefix of it that already holds every
    top-level setting (so multi-line values and trailing comments are handled by the
    TOML parser, not guessed).
    """
    pieces = [p for p in re.split(r"(?<=\n)", text) if p]

    def parsed(n: int) -> dict[str, Any] | None:
        try:
            return tomllib.loads("".join(pieces[:n]))
        except tomllib.TOMLDecodeError:
            return None

    region = next((i for i, p in enumerate(pieces)
                   if p.lstrip().startswith("[") and parsed(i) is not None), len(pieces))
    settings = parsed(region) or {}
    at = next(n for n in range(region + 1) if parsed(n) == settings) if settings else region
    dominant = "\r\n" if text.count("\r\n") * 2 > text.count("\n") else "\n"
    before = pieces[:at]
    if before and not before[-1].endswith("\n"):
        before[-1] += dominant  # the last line had no ending: the new line follows it
        return "".join(before) + line + "".join(pieces[at:])
    eol = "\r\n" if before and before[-1].endswith("\r\n") else (
        "\n" if before else dominant)
    return "".join(before) + line + eol + "".join(pieces[at:])


def default_vault_path() -> Path:
    from pathlib import Path

    return Path(_default_vault())


def _default_vault() -> str:
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local",
                                                            "share")
    return os.path.join(base, "memvault", "vault")


def locate_vault(explicit: str | os.PathLike[str] | None = None,
                 start: Path | None = None) -> tuple[Path, str]:
    """Find the vault folder. Returns (path, how it was found)."""
    from pathlib import Path

    found, how = find_vault(explicit, start)
    return Path(found), how


def find_vault(explicit: str | os.PathLike[str] | None = None,
               start: str | os.PathLike[str] | None = None) -> tuple[str, str]:
    """`locate_vault` as a plain absolute path (without importing pathlib): `--vault`,
    `MEMVAULT_VAULT`, the nearest parent folder holding the state folder, or the
    per-user default vault."""
    if explicit:
        return _absolute(os.path.expanduser(os.fspath(explicit))), "--vault"
    env = os.environ.get("MEMVAULT_VAULT")
    if env:
        return _absolute(os.path.expanduser(env)), "MEMVAULT_VAULT"
    here = _absolute(os.fspath(start) if start is not None else os.getcwd())
    while True:
        if os.path.isdir(os.path.join(here, STATE_DIR)):
            return here, f"nearest {STATE_DIR}/"
        parent = os.path.dirname(here)
        if parent == here:
            return _default_vault(), "default per-user vault"
        here = parent


def _absolute(path: str) -> str:
    """`path` made absolute against the working folder, as `Path.absolute` does: `.`
    parts and repeated or trailing slashes dropped, `..` kept (it may cross a symlink)."""
    if not os.path.isabs(path):
        path = os.path.join(os.getcwd(), path)
    parts = [p for p in path.split(os.sep) if p not in ("", ".")]
    head = os.sep * 2 if path.startswith(os.sep * 2) and not path.startswith(os.sep * 3) \
        else os.sep
    return head + os.sep.join(parts)
