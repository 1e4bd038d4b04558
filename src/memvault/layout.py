"""The vault layout: which file holds what, for the default principal or a scope.

The bullet files come from the table of record kinds (`memvault.core.kinds`; their file
names from `core.kind_files`, so this module does not import the record types).

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

from memvault.core.kind_files import BULLET_FILES
from memvault.core.paths import DEFAULT_SCOPE, SCOPES_FOLDER, check_scope, visible_to
from memvault.core.values import FrozenValue

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from memvault.core.kinds import RecordKind

__all__ = ["DEFAULT_SCOPE", "FOLDERS", "SCOPES_FOLDER", "Layout"]
FOLDERS = ("Journal", "Trades", "Reflections", "Tokens", "Venues")


class Layout(FrozenValue):
    """Vault-relative paths of one principal's memory home."""

    __slots__ = ("home_root", "scope", "on_disk")
    home_root: str
    scope: str | None
    on_disk: tuple[tuple[str, str], ...]
    """(memvault's folder path, the spelling found on disk) where they differ."""

    def __init__(self, home_root: str, scope: str | None = None,
                 on_disk: tuple[tuple[str, str], ...] = ()) -> None:
        self._init(home_root=home_root, scope=scope, on_disk=on_disk)

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
        if not isinstance(kind, str):
            return self.file(kind.file_name)
        name = BULLET_FILES.get(kind)
        if name is None:  # a kind added to the table at run time (`kinds.registered`)
            from memvault.core.kinds import kind_named

            name = kind_named(kind).file_name
        return self.file(name)

    def kind_at(self, path: str) -> RecordKind | None:
        """The record kind whose bullet file (of this principal) `path` is, or None."""
        from memvault.core.kinds import kind_of_file

        folder, _, name = path.rpartition("/")
        return kind_of_file(name) if folder == self.home else None

    def folder(self, name: str) -> str:
        """One of memvault's folders in the home (Journal, Trades, …), as spelled on disk."""
        return self._spelled(self.file(name))

    @property
    def memory(self) -> str:
        return self.path("fact")

    @property
    def lessons(self) -> str:
        return self.path("lesson")

    @property
    def inbox(self) -> str:
        return self.path("proposal")

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
        from memvault.core.kinds import all_kinds

        return tuple(self.file(k.file_name) for k in all_kinds())

    def can_see(self, path: str) -> bool:
        """Whether this principal may be shown the vault file at `path` (everything in
        another principal's part of the home is hidden; see `core.paths.visible_to`)."""
        return visible_to(path, self.home_root, self.scope_name)
