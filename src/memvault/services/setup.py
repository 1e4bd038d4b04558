"""`memvault init`: create the vault layout without ever overwriting a file.

Idempotent: running it again creates only what is missing and reports what it left
alone. Templates live in `memvault/templates/` and explain themselves to a reader who
opens them in Obsidian.

A vault gets memory only: the bullet file of every record kind (Memory.md, Lessons.md,
Inbox.md; `memvault.core.kinds`) and Profile.md. The trading
parts appear when they are first used: the trade notes and their folders with the first
recorded trade, Policy.md with the first `memvault policy set`; `init --trading` creates
them up front. A vault made by memvault 0.1.0 (which always created them) keeps them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from memvault.backends.base import MISSING, Backend, policy_writer
from memvault.config import default_config_text
from memvault.core.kinds import file_names, kind_of_file
from memvault.errors import Conflict, InvalidInput
from memvault.layout import Layout
from memvault.services.migrations import CURRENT_FORMAT
from memvault.state_folder import GITIGNORE_TEXT
from memvault.state_paths import CONFIG, GITIGNORE

PROFILE_FILE = "Profile.md"
TRADING_FILES = ("Policy.md",)
TRADING_FOLDERS = ("Journal", "Trades", "Reflections", "Venues", "Tokens")


@dataclass(slots=True)
class InitReport:
    root: str
    created: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        return {"vault": self.root, "created": self.created, "kept": self.kept}


def memory_files() -> tuple[str, ...]:
    """The files `init` creates in a principal's home: one per record kind, and the
    profile."""
    return file_names() + (PROFILE_FILE,)


def template_text(name: str) -> bytes:
    return resources.files("memvault.templates").joinpath(name).read_bytes()


def starting_text(name: str) -> bytes:
    """What `init` writes to a new file: the packaged template, or for a record kind
    without one, its header."""
    template = resources.files("memvault.templates").joinpath(name)
    if template.is_file():
        return template.read_bytes()
    kind = kind_of_file(name)
    if kind is None:
        raise FileNotFoundError(name)
    return kind.new_file()


def init_vault(root: Path, *, scope: str | None = None, backend: Backend | None = None,
               trading: bool = False) -> InitReport:
    """Create the layout at `root` (a folder, created if missing); with `trading`, also
    Policy.md and the trade-note folders."""
    if backend is None:
        if root.exists() and not root.is_dir():
            raise InvalidInput("vault path is a file, not a folder", path=str(root))
        root.mkdir(parents=True, exist_ok=True)
        from memvault.backends.fs import FsBackend

        backend = FsBackend(root)
    from memvault.services.one_commit import run_as_one

    # One unit: on GitHub the whole layout is one commit.
    return run_as_one(backend, "memvault init",
                      lambda: _create_layout(root, backend, scope, trading))


def _create_layout(root: Path, backend: Backend, scope: str | None,
                   trading: bool) -> InitReport:
    report = InitReport(root=str(root))

    def create(path: str, data: bytes) -> None:
        try:
            backend.write(path, data, expected=MISSING, message=f"memvault init: {path}")
            report.created.append(path)
        except Conflict:
            report.kept.append(path)

    fresh_ignore = backend.read(GITIGNORE) is None
    create(CONFIG, default_config_text(CURRENT_FORMAT).encode())
    if fresh_ignore and backend.read(GITIGNORE) is not None:
        report.created.append(GITIGNORE)  # written with the state folder (state_folder.py)
    else:
        create(GITIGNORE, GITIGNORE_TEXT.encode())
    from memvault.config import parse_config

    blob = backend.read(CONFIG)
    config = parse_config(blob.data if blob else None)
    layout = Layout.for_scope(config.home, scope, spell=getattr(backend, "spelled", None))
    for name in memory_files() + (TRADING_FILES if trading else ()):
        if name == "Policy.md":
            with policy_writer():  # the user's own starting limits, written once
                create(layout.file(name), template_text(name))
        else:
            create(layout.file(name), starting_text(name))
    local_root = backend.capabilities.local_root
    if trading and local_root is not None:
        for folder in TRADING_FOLDERS:
            path = local_root / layout.folder(folder)
            if path.is_dir():
                report.kept.append(f"{layout.folder(folder)}/")
            else:
                path.mkdir(parents=True, exist_ok=True)
                report.created.append(f"{layout.folder(folder)}/")
    return report
