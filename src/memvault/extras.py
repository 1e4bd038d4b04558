"""The optional parts of memvault and the pip extra that installs each.

The default install holds what the vault itself needs (facts, recall, search, sync
with git, the watcher). Three features pull in large dependency trees that most users
never run, so they are extras:

| extra | brings | for |
| --- | --- | --- |
| `mcp` | the MCP SDK (with uvicorn, starlette, httpx, jsonschema, …) | `memvault serve` |
| `github` | PyGithub (with requests, PyNaCl, PyJWT) | the GitHub backend |
| `hosted` | cryptography | hosted mode |
| `history` | git-filter-repo | `memvault forget --permanent --rewrite-history` |

`pip install 'memvault[all]'` installs every one. A command that needs a missing part
fails with one line naming the extra to install.
"""

from __future__ import annotations

import importlib

from memvault.errors import VaultError

EXTRAS = {
    "mcp": ("mcp.server.mcpserver", "the MCP server (`memvault serve`)"),
    "github": ("github", "the GitHub backend"),
    "hosted": ("cryptography", "hosted mode"),
    "history": ("git_filter_repo", "rewriting git history (`forget --rewrite-history`)"),
}


class MissingExtra(VaultError):
    """An optional part of memvault that this command needs is not installed."""


def require(extra: str) -> None:
    """Raise MissingExtra, naming the pip extra, when `extra`'s library cannot be imported."""
    module, feature = EXTRAS[extra]
    try:
        importlib.import_module(module)
    except ImportError:
        raise MissingExtra(f"{feature} needs an optional part that is not installed: "
                           f"pip install 'memvault[{extra}]'") from None
