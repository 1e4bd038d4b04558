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
fails with one line naming the extra to install (`require`), and so does importing
`memvault.hosted` or `memvault.mcp` from Python code (`check_installed`, an ImportError).
"""

from __future__ import annotations

import importlib
import importlib.util

from memvault.errors import VaultError

EXTRAS = {
    "mcp": ("mcp.server.mcpserver", "the MCP server (`memvault serve`)"),
    "github": ("github", "the GitHub backend"),
    "hosted": ("cryptography", "hosted mode"),
    "history": ("git_filter_repo", "rewriting git history (`forget --rewrite-history`)"),
}


class MissingExtra(VaultError):
    """An optional part of memvault that this command needs is not installed."""


class ExtraNotInstalled(ImportError):
    """Importing a part of memvault whose optional library is not installed."""


def _missing(extra: str) -> str:
    return (f"{EXTRAS[extra][1]} needs an optional part that is not installed: "
            f"pip install 'memvault[{extra}]'")


def require(extra: str) -> None:
    """Raise MissingExtra, naming the pip extra, when `extra`'s library cannot be imported."""
    try:
        importlib.import_module(EXTRAS[extra][0])
    except ImportError:
        raise MissingExtra(_missing(extra)) from None


def check_installed(extra: str) -> None:
    """For the `__init__` of a package built on `extra`: raise ExtraNotInstalled, naming
    the pip extra, when the extra's library is not installed. Looks it up without
    importing it, so importing the package stays cheap."""
    top = EXTRAS[extra][0].split(".")[0]
    try:
        found = importlib.util.find_spec(top) is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        raise ExtraNotInstalled(_missing(extra), name=top)
