"""docs/cli-reference.md is the `--help` of every command; it must not drift.

If this fails after you added or changed a command: run
`python scripts/gen_cli_docs.py` and commit docs/cli-reference.md.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "scripts" / "gen_cli_docs.py"


def run_script(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True,
                          timeout=120, cwd=REPO)


def test_cli_reference_matches_the_current_help_output() -> None:
    result = run_script("--check")
    assert result.returncode == 0, result.stderr


def test_check_fails_on_a_stale_reference_and_says_how_to_fix_it(tmp_path) -> None:
    current = (REPO / "docs" / "cli-reference.md").read_text(encoding="utf-8")
    stale = tmp_path / "cli-reference.md"
    stale.write_text(current.replace("## memvault remember", "## memvault remember-old"),
                     encoding="utf-8")
    result = run_script("--check", "--output", str(stale))
    assert result.returncode == 1
    assert "out of date" in result.stderr
    assert "python scripts/gen_cli_docs.py" in result.stderr


def test_reference_covers_every_fact_command() -> None:
    text = (REPO / "docs" / "cli-reference.md").read_text(encoding="utf-8")
    for command in ("memvault remember", "memvault forget", "memvault memory list",
                    "memvault memory show", "memvault memory edit", "memvault memory delete",
                    "memvault memory clear", "memvault memory open", "memvault doctor",
                    "memvault init"):
        assert f"\n## {command}\n" in text
