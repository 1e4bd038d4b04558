"""The vault layout: which file holds what, for the default principal or a scope.

The bullet files come from the table of record kinds (`memvault.core.kinds`).

Pure path arithmetic, no I/O. The default principal's home is the configured folder
(`Pilot/`); another principal (`--scope NAME`) lives in `Pilot/scopes/<name>/`, so two
principals never read each other's memory files.

A layout can be spelled after the disk (`for_scope(..., spell=backend.spelled)`): the
home, the scope folder and each of memvault's folders then take the spelling of a folder
already there that differs only in case or Unicode normalisation (`pilot/`, `journal/`,
an NFD name from macOS), so memvault never creates a second `Pilot/` beside the
person's `pilot/`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from memvault.core.kinds import (
    FACT,
    LESSON,
    PROPOSAL,
    RecordKind,
    all_kinds,
    kind_named,
    kind_of_file,
)
from memvault.core.paths import check_scope

SCOPES_FOLDER = "scopes"
DEFAULT_SCOPE = "default"
FOLDERS = ("Journal", "Trades", "Reflections", "Tokens", "Venues")


@dataclass(frozen=True, slots=True)
class Layout:
    """Vault-relative paths of one principal's memory home."""

    home_root: str
    scope: str | None = None
    on_disk: tuple[tuple[str, str], ...] = ()
    """(memvault's folder path, the spelling found on disk) where they differ."""

    @classmethod
    def for_scope(cls, home_root: str, scope: str | None,
                  spell: Callable[[str], str] | None = None) -> Layout:
        name = check_scope(scope) if scope else None
        if name == DEFAULT_SCOPE:
            # The journal and tombstones tag the default principal "default": a scope of
            # that name would share its history, so it *is* the default principal.
            name = None
        if spell is None:
            return cls(home_root=home_root, scope=name)
        plain = cls(home_root=spell(home_root), scope=name)
        home = spell(plain.home)
        pairs = [(plain.home, home), *((f"{home}/{n}", spell(f"{home}/{n}")) for n in FOLDERS)]
        return cls(home_root=plain.home_root, scope=name,
                   on_disk=tuple((ours, disk) for ours, disk in pairs if ours != disk))

    def _spelled(self, path: str) -> str:
        for ours, disk in self.on_disk:
            if path == ours:
                return disk
        return path

    @property
    def scope_name(self) -> str:
        return self.scope or DEFAULT_SCOPE

    @property
    def home(self) -> str:
        if self.scope:
            return self._spelled(f"{self.home_root}/{SCOPES_FOLDER}/{self.scope}")
        return self.home_root

    def file(self, name: str) -> str:
        return f"{self.home}/{name}"

    def path(self, kind: str | RecordKind) -> str:
        """The bullet file of a record kind (`"fact"` -> `Pilot/Memory.md`)."""
        record_kind = kind_named(kind) if isinstance(kind, str) else kind
        return self.file(record_kind.file_name)

    def kind_at(self, path: str) -> RecordKind | None:
        """The record kind whose bullet file (of this principal) `path` is, or None."""
        folder, _, name = path.rpartition("/")
        return kind_of_file(name) if folder == self.home else None

    def folder(self, name: str) -> str:
        """One of memvault's folders in the home (Journal, Trades, …), as spelled on disk."""
        return self._spelled(self.file(name))

    @property
    def memory(self) -> str:
        return self.path(FACT)

    @property
    def lessons(self) -> str:
        return self.path(LESSON)

    @property
    def inbox(self) -> str:
        return self.path(PROPOSAL)

    @property
    def profile(self) -> str:
        return self.file("Profile.md")

    @property
    def policy(self) -> str:
        return self.file("Policy.md")

    @property
    def journal_dir(self) -> str:
        return self.folder("Journal")

    @property
    def trades_dir(self) -> str:
        return self.folder("Trades")

    @property
    def reflections_dir(self) -> str:
        return self.folder("Reflections")

    @property
    def tokens_dir(self) -> str:
        return self.folder("Tokens")

    @property
    def venues_dir(self) -> str:
        return self.folder("Venues")

    @property
    def memory_files(self) -> tuple[str, ...]:
        """The bullet file of every record kind (`memvault.core.kinds`), in table order."""
        return tuple(self.file(k.file_name) for k in all_kinds())

    def can_see(self, path: str) -> bool:
        """Whether this principal may be shown the vault file at `path`.

        Everything under the memvault home belongs to one principal: `scopes/<name>/…`
        to that scope, the rest to the default principal. Notes elsewhere in the vault
        are the user's own and seen by every principal. Compared case-insensitively, as
        a case-insensitive disk would open the same file.
        """
        owner = owner_of(path, self.home_root)
        return owner is None or owner == self.scope_name


def owner_of(path: str, home_root: str) -> str | None:
    """The principal whose memory home holds `path`, or None for a note outside it."""
    folded = path.casefold()
    home = home_root.strip("/").casefold() + "/"
    if not folded.startswith(home):
        return None
    rest = folded[len(home):]
    scopes = SCOPES_FOLDER + "/"
    if rest.startswith(scopes):
        name, sep, _ = rest[len(scopes):].partition("/")
        if name and sep:
            return name  # `scopes/default/` is the default principal's, like the rest
    return DEFAULT_SCOPE
