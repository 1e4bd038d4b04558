"""Backends by name: each kind of store registers a factory here, and `Vault.open` and
`memvault init` choose through this table, never through an if-chain.

A factory takes the vault's local folder (which a remote store never creates) and the
vault's settings, and returns a `Backend`. `local` says the vault lives in that folder
on this machine: memvault then creates the folder when asked and reads its settings
from there; otherwise only an existing `.memvault/config.toml` in the folder is read (for
the store's own settings table) and everything else lives in the store.

Adding a backend: implement the protocol in `backends/base.py`, declare what it can do
in `capabilities`, register it (`register("name", factory)`), and run the contract suite
(`tests/test_backend_contract.py`) on it. See docs/architecture.md.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from memvault.config import DEFAULT_BACKEND
from memvault.errors import InvalidInput

if TYPE_CHECKING:
    from memvault.backends.base import Backend
    from memvault.config import Config

Factory = Callable[[Path, "Config"], "Backend"]
DEFAULT = DEFAULT_BACKEND


@dataclass(frozen=True, slots=True)
class BackendType:
    name: str
    factory: Factory
    local: bool = False
    about: str = ""

    def open(self, root: Path, config: Config) -> Backend:
        return self.factory(root, config)


_TYPES: dict[str, BackendType] = {}


def register(name: str, factory: Factory, *, local: bool = False,
             about: str = "") -> BackendType:
    """Make `name` a value of `backend = ...` and MEMVAULT_BACKEND (a later registration
    of the same name replaces the earlier one)."""
    kind = BackendType(name, factory, local, about)
    _TYPES[name] = kind
    return kind


def unregister(name: str) -> None:
    if name != DEFAULT:
        _TYPES.pop(name, None)


def names() -> tuple[str, ...]:
    return tuple(_TYPES)


def backend_type(name: str, *, path: str | None = None) -> BackendType:
    kind = _TYPES.get(name)
    if kind is None:
        raise InvalidInput(f"unknown backend {name!r} (use {' or '.join(names())})", path=path)
    return kind


def _local_folder(root: Path, config: Config) -> Backend:
    from memvault.backends.fs_git import local_backend

    return local_backend(root)


def _github(root: Path, config: Config) -> Backend:
    from memvault.extras import require

    require("github")
    from memvault.backends.github import GithubBackend

    return GithubBackend.from_config(config)


register(DEFAULT, _local_folder, local=True,
         about="a folder on this machine (git-aware when it lies in a git work tree)")
register("github", _github, about="a GitHub repository, through the Git Data API")
