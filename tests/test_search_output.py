"""What `memvault search` prints: matches in a snippet are emphasised on a terminal (a real
pseudo-terminal), plain when piped or with NO_COLOR, and the index's highlight control
characters never reach the output in any of those (`--json` marks them with **)."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memvault.services.setup import init_vault
from tests.conftest import run_memvault


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    root = tmp_path / "v"
    init_vault(root)
    (root / "n.md").write_text("apples here\n")
    return root


def _on_a_terminal(root: Path, *args: str, env: dict[str, str] | None = None) -> bytes:
    """Run memvault with stdout on a pseudo-terminal; returns what it wrote there."""
    leader, follower = pty.openpty()
    full_env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    full_env.update({"TERM": "xterm-256color", "COLUMNS": "120", **(env or {})})
    proc = subprocess.Popen([sys.executable, "-m", "memvault", "--vault", str(root), *args],
                            stdout=follower, stderr=subprocess.PIPE, env=full_env)
    os.close(follower)
    out = b""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal closed: the process is done
                break
            if not chunk:
                break
            out += chunk
        elif proc.poll() is not None:
            break
    os.close(leader)
    assert proc.wait(timeout=60) == 0, proc.stderr.read() if proc.stderr else ""
    return out


def test_piped_search_output_is_plain_text(notes: Path) -> None:
    out = run_memvault("--vault", str(notes), "search", "apples")
    assert out.returncode == 0, out.stderr
    assert "  apples here\n" in out.stdout
    assert "\x02" not in out.stdout and "\\x02" not in out.stdout and "\x1b" not in out.stdout


def test_a_terminal_shows_the_match_emphasised(notes: Path) -> None:
    out = _on_a_terminal(notes, "search", "apples")
    assert b"\x02" not in out and b"\\x02" not in out and b"\\x03" not in out
    assert b"\x1b[1;33mapples\x1b[0m" in out  # bold yellow, then the rest plain
    assert b" here" in out


def test_no_color_on_a_terminal_prints_the_words_only(notes: Path) -> None:
    out = _on_a_terminal(notes, "search", "apples", env={"NO_COLOR": "1"})
    assert b"apples here" in out
    assert b"\x02" not in out and b"\\x02" not in out and b"\x1b[1;33m" not in out


def test_memory_search_snippets_too(notes: Path) -> None:
    assert run_memvault("--vault", str(notes), "remember", "I grow apples").returncode == 0
    out = run_memvault("--vault", str(notes), "search", "--memory", "apples")
    assert "  I grow apples\n" in out.stdout and "\\x02" not in out.stdout
    data = json.loads(run_memvault("--vault", str(notes), "search", "apples", "--json").stdout)
    assert data["results"][0]["snippet"] == "**apples** here"
