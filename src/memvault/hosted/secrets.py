"""The hosted-mode secret rule, stated and enforced here and nowhere else.

`SESSION_SECRET` comes from the process environment only: no option, file or argument
takes it, and it is never printed, logged, stored or put in an error message.

The rule: at least 32 **characters**, counted as Unicode code points of the NFC form of
the value (not as UTF-8 bytes), so sixteen "é" count as 16 however they are encoded and
are refused. Use random printable characters, e.g.
`python -c 'import secrets; print(secrets.token_urlsafe(48))'`. The key material is the
value's exact UTF-8 bytes.

`SESSION_SECRET_PREVIOUS` (optional) is a second secret accepted for *reading* while
`memvault hosted rekey` moves every document to the current one; it obeys the same rule.
"""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field

from memvault.errors import VaultError

SECRET_ENV = "SESSION_SECRET"
PREVIOUS_SECRET_ENV = "SESSION_SECRET_PREVIOUS"
MIN_SECRET_CHARS = 32
_HOW = "python -c 'import secrets; print(secrets.token_urlsafe(48))'"


class SecretError(VaultError):
    """A secret is missing, too short, or not one this store accepts."""


def check_secret(value: str | None, name: str = SECRET_ENV) -> bytes:
    """The secret's key material, or a SecretError that never echoes the value."""
    if not value:
        raise SecretError(f"{name} is not set; hosted mode needs it in the environment "
                          f"(at least {MIN_SECRET_CHARS} random characters)")
    chars = len(unicodedata.normalize("NFC", value))
    if chars < MIN_SECRET_CHARS:
        raise SecretError(f"{name} is too short: {chars} characters, the rule is at least "
                          f"{MIN_SECRET_CHARS} characters (counted as characters, not bytes); "
                          f"make one with `{_HOW}`")
    return value.encode("utf-8")


@dataclass(frozen=True)
class Secrets:
    """The current secret and, during a rotation, the previous one (key material only)."""

    current: bytes = field(repr=False)
    previous: bytes | None = field(default=None, repr=False)

    def __repr__(self) -> str:  # never show a secret
        return f"Secrets(previous={'set' if self.previous else 'unset'})"


def secrets_from_env(environ: Mapping[str, str] | None = None) -> Secrets:
    """Read and check both variables; raises before anything is opened or created."""
    env = os.environ if environ is None else environ
    current = check_secret(env.get(SECRET_ENV), SECRET_ENV)
    raw_previous = env.get(PREVIOUS_SECRET_ENV)
    previous = check_secret(raw_previous, PREVIOUS_SECRET_ENV) if raw_previous else None
    return Secrets(current, None if previous == current else previous)
