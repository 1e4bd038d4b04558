"""`memvault init`: create the vault layout without ever overwriting a file.

Idempotent: running it again creates only what is missing and reports what it left
alone. Templates live in `memvault/templates/` and explain themselves to a reader who
opens them in Obsidian.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from memvault.backends.base import MISSING, Backend
from memvault.config import default_config_text
from memvault.errors import Conflict, InvalidInput
from memvault.layout import Layout
from memvault.state_paths import CACHE_PATTERNS, CONFIG, GITIGNORE

GITIGNORE_TEXT = "# Local caches: rebuildable, never committed\n" + "".join(
    f"{pattern}\n" for pattern in CACHE_PATTERNS)
TEMPLATE_FILES = ("Memory.md", "Lessons.md", "Inbox.md", "Profile.md", "Policy.md")
FOLDERS = ("Journal", "Trades", "Reflections", "Venues", "Tokens")


@dataclass(slots=True)
class InitReport:
    root: str
    created: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        return {"vault": self.root, "created": self.created, "kept": self.kept}


def template_text(name: str) -> bytes:
    return resources.files("memvault.templates").joinpath(name).read_bytes()


def init_vault(root: Path, *, scope: str | None = None,
               backend: Backend | None = None) -> InitReport:
    """Create the layout at `root` (a folder, created if missing)."""
    if backend is None:
        if root.exists() and not root.is_dir():
            raise InvalidInput("vault path is a file, not a folder", path=str(root))
        root.mkdir(parents=True, exist_ok=True)
        from memvault.backends.fs import FsBackend

        backend = FsBackend(root)
    report = InitReport(root=str(root))

    def create(path: str, data: bytes) -> None:
        try:
            backend.write(path, data, expected=MISSING, message=f"memvault init: {path}")
            report.created.append(path)
        except Conflict:
            report.kept.append(path)

    create(CONFIG, default_config_text().encode())
    create(GITIGNORE, GITIGNORE_TEXT.encode())
    from memvault.config import parse_config

    blob = backend.read(CONFIG)
    config = parse_config(blob.data if blob else None)
    layout = Layout.for_scope(config.home, scope)
    for name in TEMPLATE_FILES:
        create(layout.file(name), template_text(name))
    if backend.name == "fs":
        for folder in FOLDERS:
            path = root / layout.home / folder
            if path.is_dir():
                report.kept.append(f"{layout.home}/{folder}/")
            else:
                path.mkdir(parents=True, exist_ok=True)
                report.created.append(f"{layout.home}/{folder}/")
    return report
