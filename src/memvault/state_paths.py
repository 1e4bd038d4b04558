"""The `.memvault/` state folder: every file memvault keeps beside the user's notes, named once.

Two kinds of file live there:

- **Committed with the vault** (they are its settings and history, synced like a note):
  `config.toml`, the experience journal `events.jsonl`, `tombstones.jsonl`, and the
  `.gitignore` that keeps the caches out of git.
- **Local caches**, git-ignored and safe to delete at any time: the search index
  `index.sqlite` (plus SQLite's `-wal`/`-shm` and the index writer's `-lock`), the
  cross-process write `lock`, stray `*.tmp` files from an interrupted atomic write, and
  the `safety/` net (last-known copies of the memory files; it also ignores itself with
  its own `.gitignore`, so vaults made before it existed keep it out of git too), and
  `pending-forgets.jsonl` (content-free intents of forgets a crash may have interrupted;
  the next command completes them on this machine). `safety/notices.json` remembers which
  standing problems (a ticked Inbox line memvault cannot accept) commands have already
  mentioned, as content-free hashes; `safety/forgets.json` which forgets this machine's
  caches reflect (`services/forgets_applied.py`). `parsed/` is the parse cache (each memory file's
  parsed records, keyed by the SHA-256 of its bytes; see `services/parse_cache.py`), which
  also ignores itself with its own `.gitignore` and holds `.key`, this clone's secret
  that signs its entries (never shared, never printed).

Every other module takes these names from here; none spells the folder itself. Pure
constants, no I/O, cheap to import.
"""

from __future__ import annotations

STATE_DIR = ".memvault"


def state_path(name: str) -> str:
    """The vault-relative path of `name` inside the state folder."""
    return f"{STATE_DIR}/{name}"


CONFIG = state_path("config.toml")
EVENTS = state_path("events.jsonl")
TOMBSTONES = state_path("tombstones.jsonl")
GITIGNORE = state_path(".gitignore")
INDEX = state_path("index.sqlite")
LOCK = state_path("lock")
SAFETY = state_path("safety")  # the safety net: last-known copies of memory files
PARSED = state_path("parsed")  # the parse cache: each memory file's parsed records
PENDING_FORGETS = state_path("pending-forgets.jsonl")  # forgets a crash left unfinished
NOTICES = state_path("safety/notices.json")  # which standing problems a command has told
FORGETS_APPLIED = state_path("safety/forgets.json")  # forgets this machine's caches reflect
# In the copy of a remote store's notes that search indexes (a cache folder, never a vault):
MIRROR_MANIFEST = state_path("mirror.json")  # path -> the version each copy was made at
MIRROR_LOCK = state_path("mirror.lock")

COMMITTED = (CONFIG, EVENTS, TOMBSTONES, GITIGNORE)
"""The state files that belong in git; everything else under the state folder is local."""


def is_local_state(rel: str) -> bool:
    """Whether the vault-relative `rel` is a local file of the state folder (a cache, a
    lock, a key) that git should never track."""
    return rel.startswith(f"{STATE_DIR}/") and rel not in COMMITTED


# Append-only JSON-lines files that git merges as a union of lines (the merge driver).
JOURNALS = (EVENTS, TOMBSTONES)

# Git-ignore patterns for the local caches, relative to the state folder.
CACHE_PATTERNS = ("index.sqlite", "index.sqlite-*", "lock", "*.tmp", "safety/",
                  "pending-forgets.jsonl", "parsed/")


def cache_ignore_lines() -> list[str]:
    """The cache patterns relative to the vault root (for a vault-level `.gitignore`)."""
    return [state_path(pattern) for pattern in CACHE_PATTERNS]
