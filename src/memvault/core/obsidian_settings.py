"""What memvault reads from Obsidian's own settings in `.obsidian/` (it never writes there).

- `types.json`: the vault's type for each property name (`{"types": {"aliases":
  "aliases", "rating": "number"}}`). Obsidian gives a property one type across the
  whole vault, so when memvault sets a property the vault has typed, it writes a value
  of that type (`typed_value`): a list for `multitext`, `tags` and `aliases`, a bare
  number for `number`, `true`/`false` for `checkbox`, `YYYY-MM-DD` for `date` and
  `YYYY-MM-DDTHH:MM:SS` for `datetime`; text that is not of the type is refused with
  the reason, and nothing is written. Names are matched ignoring case, as Obsidian does.
- `templates.json` (the core Templates plugin, `{"folder": "Templates"}`) and the
  Templater plugin's `plugins/templater-obsidian/data.json` (`templates_folder`): notes
  in a templates folder are skeletons full of `{{date}}` placeholders, not notes about
  anything, so the search index leaves them out (`template_folders`).
- `daily-notes.json` (`{"folder": "Daily Notes", "format": "YYYY-MM-DD"}`): where
  Obsidian puts the person's daily notes (`daily_notes`). memvault's trade day notes stay
  in its own `Journal/` folder, since it writes only in its home folder; doctor says when
  the two share a folder (`daily_notes_overlap`).

A missing file means "not set". A file that is not valid JSON or not the expected shape
is ignored and named by `problems_in`, so doctor can report it: it never stops a command.
Pure functions over bytes; the caller reads the files.
"""

from __future__ import annotations

import datetime as _dt
import json
import re
from typing import Any, Literal

from memvault.core.paths import clean_vault_path, folder_key
from memvault.errors import InvalidInput

TYPES = ".obsidian/types.json"
TEMPLATES = ".obsidian/templates.json"
TEMPLATER = ".obsidian/plugins/templater-obsidian/data.json"
DAILY_NOTES = ".obsidian/daily-notes.json"
DEFAULT_DAY_FORMAT = "YYYY-MM-DD"  # Obsidian's default, and the name of memvault's day notes
LIST_TYPES = ("multitext", "tags", "aliases")
PROPERTY_TYPES = ("text", "number", "checkbox", "date", "datetime", *LIST_TYPES)
_TRUE, _FALSE = ("true", "yes", "on", "1"), ("false", "no", "off", "0")
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\Z")


def _json_object(data: bytes | None) -> dict[str, Any] | None:
    """The JSON object in `data`; None when missing, not JSON or not an object."""
    if data is None:
        return None
    try:
        value = json.loads(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def problems_in(path: str, data: bytes | None) -> str | None:
    """Why the settings file at `path` cannot be used, or None (also when missing)."""
    if data is None or _json_object(data) is not None:
        return None
    return "not a JSON object, so memvault ignores it"


def property_types(data: bytes | None) -> dict[str, str]:
    """{folded property name: type} from types.json."""
    loaded = _json_object(data) or {}
    types = loaded.get("types")
    if not isinstance(types, dict):
        return {}
    return {str(k).casefold(): v for k, v in types.items() if isinstance(v, str)}


def typed_value(kind: str, key: str, text: str) -> Any:
    """`text` (from the command line) as a value of the vault's type `kind` (one of
    PROPERTY_TYPES) for `key`, or InvalidInput saying why it is not one."""
    where = f"{key!r} is a {kind} property in this vault (.obsidian/types.json)"
    text = text.strip()
    if kind in LIST_TYPES:
        return parse_list_value(text)
    if kind == "number":
        if not _NUMBER.match(text):
            raise InvalidInput(f"{where}; {text!r} is not a number")
        from decimal import Decimal  # (not at the top: the index scan imports this module)

        return int(text) if text.lstrip("+-").isdigit() else Decimal(text)
    if kind == "checkbox":
        if text.casefold() in _TRUE:
            return True
        if text.casefold() in _FALSE:
            return False
        raise InvalidInput(f"{where}; give true or false, not {text!r}")
    if kind == "date":
        try:
            return _dt.date.fromisoformat(text)
        except ValueError:
            raise InvalidInput(f"{where}; give a date as YYYY-MM-DD, not {text!r}") from None
    if kind == "datetime":
        try:
            moment = _dt.datetime.fromisoformat(text)
        except ValueError:
            raise InvalidInput(f"{where}; give a time as YYYY-MM-DDTHH:MM:SS, "
                               f"not {text!r}") from None
        return moment.replace(tzinfo=None)
    return text


def parse_list_value(text: str) -> list[str]:
    """`a, b` or a JSON array -> a list of strings."""
    text = text.strip()
    if text.startswith("["):
        try:
            items = json.loads(text)
            if isinstance(items, list):
                return [str(i).strip() for i in items if str(i).strip()]
        except ValueError:
            text = text.strip("[]")
    return [p.strip() for p in text.split(",") if p.strip()]


def _folder(value: Any) -> str | None:
    if not isinstance(value, str) or not value.strip().strip("/"):
        return None
    try:
        return clean_vault_path(value.strip())
    except InvalidInput:
        return None


def template_folders(templates: bytes | None, templater: bytes | None) -> tuple[str, ...]:
    """The vault-relative templates folders the two plugins name (either may be unset)."""
    found = [_folder((_json_object(templates) or {}).get("folder")),
             _folder((_json_object(templater) or {}).get("templates_folder"))]
    return tuple(dict.fromkeys(f for f in found if f))


def _key(path: str) -> str:
    return "/".join(folder_key(part) for part in path.split("/"))


def in_folders(path: str, folders: tuple[str, ...]) -> bool:
    """Whether vault-relative `path` lies in one of `folders` (case and Unicode form
    ignored, as on the disks Obsidian runs on)."""
    key = _key(path)
    return any(key.startswith(_key(folder) + "/") for folder in folders)


def daily_notes(data: bytes | None) -> tuple[str, str]:
    """(folder, date format) of the person's daily notes; folder "" is the vault root."""
    loaded = _json_object(data) or {}
    folder = _folder(loaded.get("folder")) or ""
    fmt = loaded.get("format")
    return folder, fmt.strip() if isinstance(fmt, str) and fmt.strip() else DEFAULT_DAY_FORMAT


def daily_notes_overlap(data: bytes | None, journal_dir: str
                        ) -> tuple[Literal["info", "warning"], str] | None:
    """(severity, message) when Obsidian's daily notes live in memvault's journal folder
    `journal_dir`: "info" when both name a day's note alike (the note receives
    memvault's lines), "warning" when not (a day can have two notes); else None."""
    if data is None:
        return None
    folder, fmt = daily_notes(data)
    if _key(folder) != _key(journal_dir):
        return None
    if fmt == DEFAULT_DAY_FORMAT:
        return "info", ("Obsidian's daily notes (.obsidian/daily-notes.json) share this "
                        "folder: `trade record` appends its lines to that day's note, below "
                        "the person's own text, and changes nothing else in it")
    return "warning", (f"Obsidian's daily notes (.obsidian/daily-notes.json) share this folder "
                       f"but are named {fmt}, while memvault's trade day notes are named "
                       "YYYY-MM-DD, so a day can have two notes here; point the daily notes "
                       "elsewhere to keep them apart")
