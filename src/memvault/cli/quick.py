"""`memvault search QUERY --json` without click: the cold path of the most frequent read.

The console script (`cli.entry`) hands a command line here when it may be a plain note
search printed as JSON. `run` answers it only when the ordinary command (`cli/search.py`,
through click) would provably print the same bytes and change nothing:

- the command line uses only options this module understands (`parse`): the global
  `--vault`, `--scope`, `--json`, `-q`, `-v`, then `search` with `--limit/-n`,
  `--path/-p`, `--tag/-t`, the same flags, and one QUERY;
- the vault is an existing local folder of the current format with valid settings,
  no interrupted forget to finish, no forget from another clone that this machine's
  caches have not seen yet (`services.forgets_applied`), no decision waiting in Inbox.md
  (`services.inbox_state`), read through no symlink;
- the search index is complete and in step with the files (`index.fresh`), so the
  search reads it as it is, with the same function and the same principal's view
  (`Layout.can_see`) as the ordinary command.

Anything else (help, an unknown or unusual option, an error to report, a vault to
create or upgrade, an index to refresh or rebuild, a file memvault would change) makes
`run` return None before anything is printed or written, and the ordinary command runs
from the start. `tests/test_quick_search_parity.py` runs both paths over many command
lines and vault states and compares stdout, stderr and the exit code;
`tests/test_lazy_imports.py` checks what this path does not import (click, rich, the
record types, the embedding stack).
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # nothing this path does not use is imported, not even `typing`
if TYPE_CHECKING:
    from collections.abc import Callable

    from memvault.index.query import Hit

_FLAGS = {"--json": "json", "-q": "quiet", "--quiet": "quiet", "-v": "verbose",
          "--verbose": "verbose"}
_GLOBAL = {"--vault": "vault", "--scope": "scope"}
_SEARCH = {"--limit": "limit", "-n": "limit", "--path": "path", "-p": "path", "--tag": "tag",
           "-t": "tag"}
COMPLETE_VAR = "_MEMVAULT_COMPLETE"
"""Set by the shell completion script: click answers those."""


class NotPlain(Exception):
    """Something this path does not handle: the ordinary command runs instead."""


def _option(argv: list[str], i: int, valued: dict[str, str]
            ) -> tuple[str, str | None, int] | None:
    """(name, value or None for a flag, index after it) of the option at `argv[i]`, or
    None when it is not one this path knows in the plain form."""
    token = argv[i]
    if token in _FLAGS:
        return _FLAGS[token], None, i + 1
    if token in valued:
        if i + 1 >= len(argv):
            return None
        return valued[token], argv[i + 1], i + 2
    if token.startswith("--"):
        key, eq, value = token.partition("=")
        return (valued[key], value, i + 1) if eq and key in valued else None
    if len(token) > 2 and token[:2] in valued:  # -n5
        return valued[token[:2]], token[2:], i + 1
    return None


def parse(argv: list[str]) -> dict[str, str | bool] | None:
    """The options of a plain `[global options] search [options] QUERY` command line
    with `--json`, or None. Values that are empty or start with `-`, repeated QUERY
    words, `--memory` and every other option are left to click."""
    found: dict[str, str | bool] = {}
    i = 0
    while i < len(argv) and argv[i] != "search":
        step = _option(argv, i, _GLOBAL)
        if step is None:
            return None
        name, value, i = step
        found[name] = True if value is None else value
    if i >= len(argv):
        return None
    i += 1
    positional: list[str] = []
    while i < len(argv):
        token = argv[i]
        if token == "--":
            positional += argv[i + 1:]
            break
        if not token.startswith("-"):
            positional.append(token)
            i += 1
            continue
        step = _option(argv, i, _SEARCH)
        if step is None:
            return None
        name, value, i = step
        found[name] = True if value is None else value
    if len(positional) != 1 or not found.get("json"):
        return None
    if any(isinstance(v, str) and (not v or v.startswith("-")) for v in found.values()):
        return None
    limit = found.get("limit", "10")
    if not isinstance(limit, str) or not (limit.isascii() and limit.isdigit()):
        return None
    from memvault.cli.streams import utf8_arg

    for name in ("path", "tag"):
        if isinstance(found.get(name), str):
            found[name] = utf8_arg(str(found[name]))
    found["query"] = utf8_arg(positional[0])
    return found


def _plain_reader(root: str) -> Callable[[str], bytes | None]:
    """Reads vault-relative files as the local backend does (a stable read of a regular
    file; a FIFO or device is refused unopened), but refuses any symlink on the way:
    those cases are left to the backend's own rules."""
    from memvault.backends.fs_io import stable_read

    real_root = os.path.realpath(root)

    def read(rel: str) -> bytes | None:
        parts = rel.split("/")
        full = os.path.join(root, *parts)
        if os.path.realpath(full) != os.path.join(real_root, *parts):
            raise NotPlain(f"{rel} is reached through a symlink")
        found = stable_read(full, rel)
        return None if found is None else found[0]

    return read


def _search(options: dict[str, str | bool]) -> list[Hit] | None:
    """The hits, or None when the ordinary command must run (see the module doc)."""
    from memvault.config import DEFAULT_BACKEND, VAULT_FORMAT, find_vault, parse_config
    from memvault.errors import VaultError
    from memvault.state_paths import CONFIG, PENDING_FORGETS

    if os.environ.get("MEMVAULT_BACKEND") not in (None, "", "fs"):
        return None  # another store (the default, `fs`, is checked against config below)
    vault = options.get("vault") or os.environ.get("MEMVAULT_VAULT") or None
    scope = options.get("scope") or os.environ.get("MEMVAULT_SCOPE") or None
    root, _how = find_vault(str(vault) if vault else None)
    if not os.path.isdir(root) or os.path.lexists(os.path.join(root, PENDING_FORGETS)):
        return None
    read = _plain_reader(root)
    from memvault.services.forgets_applied import in_step

    if not in_step(root, read):
        return None  # a forget from another clone this machine's caches have not seen
    try:
        config = parse_config(read(CONFIG))
        if config.backend != DEFAULT_BACKEND or config.vault_format != VAULT_FORMAT:
            return None
        from memvault.backends.fs_names import spelled
        from memvault.layout import Layout

        layout = Layout.for_scope(config.home, str(scope) if scope else None,
                                  spell=lambda folder: spelled(root, folder))
        from memvault.services.search import check_note_search

        query, path, tag = str(options["query"]), options.get("path"), options.get("tag")
        limit = int(str(options.get("limit", "10")))
        check_note_search(query, limit, str(path) if path else None, str(tag) if tag else None)
    except VaultError:
        return None  # an error to report: click's command says it
    from memvault.services.inbox_state import inbox_as_written, seen_path

    read(seen_path(layout.inbox))  # the net's file through a symlink: NotPlain, declined
    if not inbox_as_written(read, layout.inbox, layout.scope_name):
        return None
    from memvault.index.fresh import fresh_connection

    conn = fresh_connection(root, layout.home_root)
    if conn is None:
        return None
    try:
        from memvault.index.query import search_notes

        return search_notes(conn, query, limit=limit, path_glob=str(path) if path else None,
                            tag=str(tag) if tag else None, visible=layout.can_see)
    finally:
        conn.close()


def run(argv: list[str]) -> int | None:
    """Answer `memvault argv` here and return its exit code, or None (nothing printed,
    nothing written) when the ordinary command must run instead."""
    if os.environ.get(COMPLETE_VAR):
        return None
    options = parse(argv)
    if options is None:
        return None
    try:
        hits = _search(options)
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        return 130
    except Exception:  # noqa: BLE001 - whatever went wrong, the ordinary command says it
        return None
    if hits is None:
        return None
    from memvault.cli.json_output import print_json, search_document
    from memvault.cli.streams import OutputFailed, finish, guard_stdout, report

    guard_stdout()  # as click's command does: the same one-line error if stdout fails
    code = 0
    try:
        print_json(search_document(str(options["query"]), hits, []))
    except BrokenPipeError:
        code = 1
    except OutputFailed as exc:
        code = report(exc)
    return finish(code)
