"""Controls: `learning`, `retrieval` and `capture` in `.memvault/config.toml`.

`set` validates the value, then changes only that key's value (`set_config_value`) under the
backend lock with compare-and-swap, and re-parses the whole file before writing so a
change can never leave an invalid config. Comments and other lines stay byte for byte.
`learning = false` stops extraction and inference from proposing; explicit commands
(remember, propose, accept, import) keep working.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memvault.config import CAPTURE_MODES, parse_config, set_config_value
from memvault.errors import InvalidInput
from memvault.services.one_commit import one_commit
from memvault.state_paths import CONFIG

if TYPE_CHECKING:
    from memvault.services.vault import Vault

CONTROL_KEYS = ("learning", "retrieval", "capture")
_TRUE = ("true", "on", "yes", "1")
_FALSE = ("false", "off", "no", "0")


def parse_control(key: str, value: Any) -> bool | str:
    """A control value from the command line or an export (strict)."""
    if key not in CONTROL_KEYS:
        raise InvalidInput(f"unknown setting {key!r}; use one of: {', '.join(CONTROL_KEYS)}")
    if key == "capture":
        if not isinstance(value, str) or value.strip().lower() not in CAPTURE_MODES:
            raise InvalidInput(f"capture must be one of {', '.join(CAPTURE_MODES)}, "
                               f"not {value!r}")
        return value.strip().lower()
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in _TRUE + _FALSE:
        return value.strip().lower() in _TRUE
    raise InvalidInput(f"{key} must be true or false, not {value!r}")


class ControlService:
    def __init__(self, vault: Vault) -> None:
        self.vault = vault

    def all(self) -> dict[str, bool | str]:
        cfg = self.vault.config
        return {"learning": cfg.learning, "retrieval": cfg.retrieval, "capture": cfg.capture}

    def get(self, key: str) -> bool | str:
        if key not in CONTROL_KEYS:
            raise InvalidInput(f"unknown setting {key!r}; use one of: {', '.join(CONTROL_KEYS)}")
        return self.all()[key]

    @one_commit("memvault: config set")
    def set(self, key: str, value: Any) -> tuple[bool | str, bool]:
        """Set one control; returns (value, changed)."""
        parsed = parse_control(key, value)
        from memvault.backends.base import MISSING

        backend = self.vault.backend
        with backend.lock():
            blob = backend.read(CONFIG)
            current = parse_config(blob.data if blob else None)
            if getattr(current, key) == parsed and blob is not None:
                setattr(self.vault.config, key, parsed)
                return parsed, False
            try:
                text = blob.data.decode("utf-8") if blob else ""
            except UnicodeDecodeError:
                raise InvalidInput("not valid UTF-8", path=CONFIG) from None
            new = set_config_value(text, key, parsed)
            parse_config(new.encode("utf-8"))  # never write a config that does not parse
            backend.write(CONFIG, new.encode("utf-8"),
                          expected=blob.version if blob else MISSING,
                          message=f"memvault: set {key}")
        setattr(self.vault.config, key, parsed)
        self.vault.events.append("control.set", key=key, value=parsed)
        return parsed, True
