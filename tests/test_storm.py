"""The storm: memvault writers, an MCP write client, `memvault watch` and an editor saving
Memory.md (half in place, half by rename), all at once, as real processes.

When it ends, every hand edit the editor completed and every remember a writer was told
succeeded must be in Memory.md — after `memvault memory recover --all`, which restores
what an editor's stale save dropped (the one race no program beside an editor can close:
the editor's own instant between its last look at the file and its save).

The CI run lasts STORM_SECONDS (12 s by default); set MEMVAULT_STORM_SECONDS for longer.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from memvault import Vault
from memvault.core.bullets import parse_bullets
from tests.conftest import run_memvault

ROOT = Path(__file__).resolve().parents[1]
MEMORY = "Pilot/Memory.md"
STORM_SECONDS = float(os.environ.get("MEMVAULT_STORM_SECONDS", "12"))


def _start(*args: str) -> subprocess.Popen[str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "src")]))
    return subprocess.Popen([sys.executable, *args], cwd=ROOT, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


@pytest.mark.slow
def test_storm_keeps_every_confirmed_hand_edit_and_every_reported_remember(
        vault_dir: Path) -> None:
    seed = Vault.open(vault_dir)
    for i in range(20):
        seed.memory.remember(f"seed fact {i}")
    seconds = str(STORM_SECONDS)
    watch = _start("-m", "memvault", "--vault", str(vault_dir), "watch")
    actors = {
        "editor": _start("-m", "tests.editor_sim", "storm", str(vault_dir / MEMORY), "hand",
                         seconds),
        "api": _start("-m", "tests.storm_actors", "api", str(vault_dir), "api", seconds),
        "cli": _start("-m", "tests.storm_actors", "cli", str(vault_dir), "cli", seconds),
        "mcp": _start("-m", "tests.storm_actors", "mcp", str(vault_dir), "mcp", seconds),
    }
    outputs = {}
    try:
        for name, proc in actors.items():
            out, err = proc.communicate(timeout=STORM_SECONDS * 4 + 120)
            assert proc.returncode == 0, (name, err[-3000:])
            outputs[name] = out.splitlines()
    finally:
        for proc in actors.values():
            if proc.poll() is None:
                proc.kill()
        if watch.poll() is None:
            watch.send_signal(signal.SIGINT)
        watch.communicate(timeout=30)

    hand_edits = [line for line in outputs["editor"] if line.startswith("hand edit ")]
    reported = [line[3:] for name in ("api", "cli", "mcp") for line in outputs[name]
                if line.startswith("ok ")]
    refused = [line for name in ("api", "cli", "mcp") for line in outputs[name]
               if line.startswith("failed ")]
    assert len(hand_edits) >= 10 and len(reported) >= 10, (len(hand_edits), len(reported))

    data = (vault_dir / MEMORY).read_bytes()
    doc = parse_bullets(data)
    assert doc.readonly_reason is None and not doc.duplicate_ids
    texts = [it.text for it in doc.items]
    missing_edits = [t for t in hand_edits if t not in texts]
    assert missing_edits == [], f"hand edits lost: {missing_edits}"

    recovered = run_memvault("--vault", str(vault_dir), "memory", "recover", "--all", "--json")
    assert recovered.returncode == 0, recovered.stderr
    texts = [it.text for it in parse_bullets((vault_dir / MEMORY).read_bytes()).items]
    missing = [t for t in reported if t not in texts]
    assert missing == [], f"reported remembers lost: {missing}"
    assert [t for t in hand_edits if t not in texts] == []
    assert len(set(texts)) == len(texts), "a text is in Memory.md twice"
    assert not list((vault_dir / "Pilot").glob(".*.tmp"))
    assert not list((vault_dir / "Pilot").glob("*conflict*"))
    print(f"storm {STORM_SECONDS:.0f} s: {len(hand_edits)} hand edits, {len(reported)} "
          f"remembers reported, {len(refused)} refused, "
          f"{recovered.stdout.count(chr(34) + 'id' + chr(34))} restored from the safety net")
