"""memvault: long-term memory for AI assistants, kept as plain Markdown in an Obsidian vault.

The typed Python API is the `Vault` service::

    from memvault import Vault

    vault = Vault.open("~/Notes")
    fact = vault.memory.remember("I prefer concise answers", category="preference")
    for f in vault.memory.list():
        print(f.id, f.text)

The CLI (`memvault ...`) and the MCP server call exactly this API.
"""

from __future__ import annotations

__version__ = "0.2.0"

__all__ = ["Vault", "__version__"]

TYPE_CHECKING = False  # `typing` itself is not imported: every command starts here
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

    from memvault.services.vault import Vault


def __getattr__(name: str) -> Any:
    # Imported lazily so that `memvault --version` stays instant.
    if name == "Vault":
        from memvault.services.vault import Vault

        return Vault
    raise AttributeError(name)
