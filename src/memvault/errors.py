"""Errors a user can act on.

Every failure memvault reports is one of these. Each carries a one-line message (naming
the file and the reason where there is one) and the exit code the CLI uses. The CLI
renders them in exactly one place (`memvault.cli.app`); nothing else prints errors.
"""

from __future__ import annotations


class VaultError(Exception):
    """Base class: a failure the user can act on. Exit code 1."""

    exit_code = 1

    def __init__(self, message: str, *, path: str | None = None,
                 problems: list[str] | None = None) -> None:
        self.path = path
        self.problems: list[str] = list(problems or [])
        """Every individual problem, when there are several (each shown on its own line)."""
        super().__init__(f"{path}: {message}" if path else message)

    @property
    def message(self) -> str:
        return str(self)


class NotFound(VaultError):
    """An id, file or record that does not exist."""


class InvalidInput(VaultError):
    """Input that fails validation: bad JSON, a bad setting, a path escaping the vault."""


class BadInput(InvalidInput):
    """What a command was given that it refuses before changing anything: the text of a
    fact, proposal or lesson that is empty or breaks the text rule, an unknown category,
    an argument that goes with another one. Exit code 2, like a usage error."""

    exit_code = 2


class Conflict(VaultError):
    """A concurrent change or an ambiguous target (duplicate id, stale version)."""


class ReadOnly(VaultError):
    """A file or item memvault refuses to change (binary, ambiguous, invalid encoding)."""


class RemoteError(VaultError):
    """A remote backend (GitHub) failed; nothing local was touched."""


class UsageError(VaultError):
    """The command line itself is wrong. Exit code 2."""

    exit_code = 2


class NeedsConfirmation(VaultError):
    """A destructive command ran without a terminal and without --yes."""
