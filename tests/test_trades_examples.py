"""examples/vault's trades, journal and reflections are exactly what the commands make
from examples/trades/*.json (so the example can always be regenerated)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import run_memvault

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")


def _generated(root: Path) -> dict[str, bytes]:
    out = {}
    for folder in ("Pilot/Trades", "Pilot/Journal", "Pilot/Reflections"):
        for p in sorted((root / folder).glob("*.md")):
            out[p.relative_to(root).as_posix()] = p.read_bytes()
    out["events"] = (root / ".memvault" / "events.jsonl").read_bytes()
    return out


def test_regenerating_the_example_vault_reproduces_its_trade_notes(tmp_path: Path) -> None:
    copy = tmp_path / "vault"
    shutil.copytree(EXAMPLES / "vault", copy)
    res = subprocess.run(["bash", str(EXAMPLES / "regenerate.sh"), str(copy)],
                         env=dict(os.environ, MEMVAULT_PYTHON=sys.executable),
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert _generated(copy) == _generated(EXAMPLES / "vault")
    inputs = sorted(p.stem for p in (EXAMPLES / "trades").glob("*.json"))
    assert sorted(p.stem for p in (copy / "Pilot" / "Journal").glob("*.md")) == inputs
    assert run_memvault("--vault", str(copy), "doctor").returncode == 0
    assert (copy / "Pilot" / "Inbox.md").read_bytes() == \
        (EXAMPLES / "vault" / "Pilot" / "Inbox.md").read_bytes()
