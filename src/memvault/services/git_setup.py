"""How git merges a vault's memory files: attributes, the merge driver, and its health.

Two layers, so that every clone merges safely and a set-up clone merges best:

- The versioned `.gitattributes` (committed, so every clone has it, including one synced
  only by plain git or Obsidian Git) gives the memory files and journals git's built-in
  `merge=union`: concurrent additions never become conflict markers. Whatever a union
  leaves (a fact twice, a forgotten line back) memvault tidies on its next command
  (`memvault.core.reconcile`).
- `memvault sync --setup` adds, in this clone only, `.git/info/attributes` lines (which
  take precedence over `.gitattributes`) pointing the same files at the memvault driver,
  and the driver itself in `.git/config`. The driver merges fact by fact (the fast path).

`check_driver` runs the configured driver the way git does (through `sh`, on three small
probe files) and compares its version with this one, so a driver whose interpreter was
deleted (a removed virtualenv, a pipx or uvx reinstall) is noticed and repaired with the
current interpreter instead of failing in the middle of a rebase.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memvault import __version__
from memvault.backends.base import Backend, Change
from memvault.core.kinds import file_names
from memvault.services.git_repo import GitRepo, last_line
from memvault.services.merge_driver import PROBE_ENV
from memvault.state_paths import JOURNALS, cache_ignore_lines

DRIVER_NAME = "memvault"
GITATTRIBUTES = ".gitattributes"

ATTRIBUTES_HEADER = ("# memvault: memory files merge as unions of lines in every clone; "
                     "memvault tidies the result")
OLD_ATTRIBUTES_HEADER = "# memvault: merge memory files fact by fact (memvault sync --setup)"
INFO_HEADER = "# memvault: this clone merges memory files fact by fact (memvault sync --setup)"
IGNORE_HEADER = "# memvault: local caches, never committed"


def driver_command() -> str:
    """The driver as this interpreter runs it (`-P`: nothing in the vault can shadow it)."""
    return f"{shlex.quote(sys.executable)} -P -m memvault merge-driver %O %A %B %P"


def _patterns(home: str, prefix: str = "") -> list[str]:
    return [f"{prefix}{home}/**/{name}" for name in file_names()] + \
        [f"{prefix}{path}" for path in JOURNALS]


def attribute_lines(home: str, merge: str = "union", prefix: str = "") -> list[str]:
    return [f"{pattern} merge={merge}" for pattern in _patterns(home, prefix)]


@dataclass(slots=True)
class SetupReport:
    gitattributes: list[str] = field(default_factory=list)
    info_attributes: list[str] = field(default_factory=list)
    gitignore: list[str] = field(default_factory=list)
    git_config: bool = False
    repaired: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"gitattributes_added": self.gitattributes,
                "info_attributes_added": self.info_attributes,
                "gitignore_added": self.gitignore, "driver_configured": self.git_config,
                "driver_repaired": self.repaired}

    def lines(self) -> list[str]:
        out = [f".gitattributes: {ln}" for ln in self.gitattributes]
        out += [f".git/info/attributes: added {ln}" for ln in self.info_attributes]
        out += [f".gitignore: added {ln}" for ln in self.gitignore]
        if self.repaired:
            out.append(f"git config: repaired the merge driver ({self.repaired})")
        else:
            out.append("git config: merge driver 'memvault' "
                       + ("installed" if self.git_config else "already installed"))
        return out


def setup_clone(repo: GitRepo, home: str) -> SetupReport:
    """Write the versioned attributes, this clone's attributes and driver, and .gitignore."""
    report = SetupReport()
    report.gitattributes = update_versioned_attributes(repo.root / ".gitattributes", home)
    info = Path(repo.out("rev-parse", "--git-path", "info/attributes"))
    if not info.is_absolute():
        info = repo.root / info
    info.parent.mkdir(parents=True, exist_ok=True)
    report.info_attributes = add_lines(info, INFO_HEADER,
                                       attribute_lines(home, DRIVER_NAME, repo.prefix))
    report.gitignore = add_ignore_lines(repo, home)
    configured = repo.config_get(f"merge.{DRIVER_NAME}.driver")
    if configured is None:
        install_driver(repo)
        report.git_config = True
    else:
        problem = check_driver(repo, configured)
        if problem:
            install_driver(repo)
            report.git_config = True
            report.repaired = problem
    return report


def add_ignore_lines(repo: GitRepo, home: str) -> list[str]:
    """Add to the vault's `.gitignore` (line by line) what git must never take: the local
    caches and the temp files a killed write leaves under the memory home."""
    from memvault.services.leftover_temps import ignore_pattern

    return add_lines(repo.root / ".gitignore", IGNORE_HEADER,
                     cache_ignore_lines() + [ignore_pattern(home)])


def install_driver(repo: GitRepo) -> None:
    repo.run("config", f"merge.{DRIVER_NAME}.name", "memvault fact-by-fact merge")
    repo.run("config", f"merge.{DRIVER_NAME}.driver", driver_command())


def update_versioned_attributes(path: Path, home: str) -> list[str]:
    """Add the union lines; turn memvault 0.1 lines (`merge=memvault`, which a clone
    without the driver merges as plain text) into union lines. Other lines are kept."""
    try:
        text = path.read_text("utf-8")
    except FileNotFoundError:
        text = ""
    old = set(attribute_lines(home, DRIVER_NAME))
    lines = text.splitlines()
    changed: list[str] = []
    for i, line in enumerate(lines):
        if line.strip() in old:
            lines[i] = line.strip().replace(f"merge={DRIVER_NAME}", "merge=union")
            changed.append(f"changed {line.strip()} to {lines[i]}")
        elif line.strip() == OLD_ATTRIBUTES_HEADER:
            lines[i] = ATTRIBUTES_HEADER
    if changed:
        _write_text(path, "\n".join(lines) + "\n")
    added = add_lines(path, ATTRIBUTES_HEADER, attribute_lines(home))
    return changed + [f"added {ln}" for ln in added]


def add_lines(path: Path, header: str, wanted: list[str]) -> list[str]:
    """Append the missing lines (under a header comment); never touch existing lines."""
    try:
        text = path.read_text("utf-8")
    except FileNotFoundError:
        text = ""
    present = {ln.strip() for ln in text.splitlines()}
    missing = [ln for ln in wanted if ln not in present]
    if not missing:
        return []
    block = ([] if header in present else [header]) + missing
    prefix = "" if not text or text.endswith("\n") else "\n"
    sep = "\n" if text and header not in present else ""
    _write_text(path, text + prefix + sep + "\n".join(block) + "\n")
    return missing


def _write_text(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.memvault.tmp")
    tmp.write_text(text, "utf-8")
    os.replace(tmp, path)


# -- is the driver healthy? -------------------------------------------------------------------

_PROBE_BASE = b"# Memory\n\n- memvault probe a <!-- id:prbaaa updated:1 -->\n"
_PROBE_OURS = _PROBE_BASE + b"- memvault probe b <!-- id:prbbbb updated:2 -->\n"
_PROBE_THEIRS = _PROBE_BASE + b"- memvault probe c <!-- id:prbccc updated:3 -->\n"


def check_driver(repo: GitRepo, command: str | None = None) -> str | None:
    """Why the configured driver would fail, or None when it merges and is this version.

    Runs it as git would: `sh -c` with %O %A %B %P replaced by quoted probe file names.
    """
    command = command if command is not None else repo.config_get(f"merge.{DRIVER_NAME}.driver")
    if command is None:
        return "not configured in this clone"
    if command.strip() == driver_command():
        return None  # this very interpreter: it exists and is this version
    with tempfile.TemporaryDirectory(prefix="memvault-probe-") as tmp:
        files = {}
        for key, data in (("O", _PROBE_BASE), ("A", _PROBE_OURS), ("B", _PROBE_THEIRS)):
            files[key] = Path(tmp, key)
            files[key].write_bytes(data)
        values = {"O": str(files["O"]), "A": str(files["A"]), "B": str(files["B"]),
                  "P": "probe/Memory.md", "L": "7", "S": "base", "X": "ours",
                  "Y": "theirs"}
        shell = re.sub(r"%([OABPLSXY%])", lambda m: "%" if m.group(1) == "%" else
                       shlex.quote(values[m.group(1)]), command)
        try:
            proc = subprocess.run(["sh", "-c", shell], cwd=tmp, capture_output=True,
                                  env=dict(os.environ, **{PROBE_ENV: "1"}), timeout=60)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"`{command}` could not be run ({type(exc).__name__})"
        merged = files["A"].read_bytes()
    err = proc.stderr.decode("utf-8", "replace")
    if proc.returncode in (126, 127):
        return f"`{command}` cannot run: {last_line(err)}"
    if proc.returncode != 0 or not all(f"probe {c}".encode() in merged for c in "abc"):
        return f"`{command}` did not merge a test file (exit {proc.returncode}: {last_line(err)})"
    said = proc.stdout.decode("utf-8", "replace").strip().splitlines()
    version = said[0].removeprefix("memvault ").strip() if said and \
        said[0].startswith("memvault ") else "an older version"
    if version != __version__:
        return f"`{command}` runs memvault {version}, not {__version__}"
    return None


def attributes_status(root: Path) -> tuple[bool, bool]:
    """(versioned union lines present, old `merge=memvault` lines still versioned)."""
    try:
        text = (root / ".gitattributes").read_text("utf-8")
    except OSError:
        return False, False
    return "merge=union" in text, f"merge={DRIVER_NAME}" in text


def union_merge_attributes(backend: Backend) -> list[Change]:
    """Vault migration: the `.gitattributes` lines `memvault sync --setup` 0.1 wrote route
    memory files to the memvault driver, which a clone without it (Obsidian Git, a new
    laptop) merges as plain text, with conflict markers. They become `merge=union`, which
    every clone applies; set-up clones keep the driver through `.git/info/attributes`.
    Only those exact lines (and their header) change, each keeping its line ending; a
    vault without them is left alone."""
    from memvault.config import parse_config
    from memvault.state_paths import CONFIG

    blob = backend.read(GITATTRIBUTES)
    if blob is None:
        return []
    config = backend.read(CONFIG)
    home = parse_config(config.data if config else None).home
    old = {ln.encode() for ln in attribute_lines(home, DRIVER_NAME)}
    out, changed = [], False
    for line in blob.data.splitlines(keepends=True):
        body = line.rstrip(b"\r\n")
        ending = line[len(body):]
        if body.strip() in old:
            body, changed = body.replace(f"merge={DRIVER_NAME}".encode(), b"merge=union"), True
        elif body.strip() == OLD_ATTRIBUTES_HEADER.encode():
            body = ATTRIBUTES_HEADER.encode()
        out.append(body + ending)
    return [Change(GITATTRIBUTES, b"".join(out), blob.version)] if changed else []
