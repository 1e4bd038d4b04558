"""The bundled example vault and the README's tour (`examples/tour.sh`).

The tour is the first command a newcomer runs: it must work offline, exit 0, and never
modify `examples/vault` (it works on a copy).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import run_memvault

REPO = Path(__file__).resolve().parent.parent
EXAMPLE_VAULT = REPO / "examples" / "vault"
TOUR = REPO / "examples" / "tour.sh"

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="the tour is a bash script")


MACHINE_CACHES = (".memvault/index.sqlite", ".memvault/lock", ".memvault/parsed")
"""Git-ignored local caches (see .memvault/.gitignore), e.g. the search index doctor refreshes."""


def snapshot(root: Path, *, skip_caches: bool = False) -> dict[str, tuple[bytes, int] | None]:
    """Every file's bytes and mtime, and every folder, under `root`."""
    out: dict[str, tuple[bytes, int] | None] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if skip_caches and rel.startswith(MACHINE_CACHES):
            continue
        if path.is_dir():
            out[rel + "/"] = None
        else:
            out[rel] = (path.read_bytes(), path.stat().st_mtime_ns)
    return out


def changed(before: dict, after: dict) -> list[str]:
    """Paths added, removed or changed between two snapshots (for assertion messages)."""
    return sorted(set(before) ^ set(after)) + sorted(
        k for k in before if k in after and before[k] != after[k])


def run_tour(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    full_env = dict(os.environ, TOUR_PYTHON=sys.executable, TMPDIR=str(tmp_path), **env)
    return subprocess.run(["bash", str(TOUR)], env=full_env, capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)


def list_all(vault: Path) -> list[dict]:
    out = run_memvault("--vault", str(vault), "memory", "list", "--all", "--json")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)["facts"]


def test_tour_exits_0_and_leaves_the_bundled_vault_byte_for_byte_unchanged(tmp_path) -> None:
    before = snapshot(EXAMPLE_VAULT)
    started = time.monotonic()
    result = run_tour(tmp_path)
    elapsed = time.monotonic() - started
    assert result.returncode == 0, f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    assert changed(before, snapshot(EXAMPLE_VAULT)) == []
    assert elapsed < 10, f"the tour took {elapsed:.1f} s (promised: under 10 s)"
    for step in ("memory list", "remember", "memory show", "forget", "context", "doctor"):
        assert f"$ memvault {step}" in result.stdout
    assert "forgot 1 fact(s)" in result.stdout
    assert list(tmp_path.glob("memvault-tour.*")) == [], "the temporary copy is removed"


def _can_drop_network() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "-rn", "true"], capture_output=True, timeout=30)
    return probe.returncode == 0


@pytest.mark.skipif(not _can_drop_network(), reason="needs `unshare -rn` (no network namespace)")
def test_tour_runs_without_any_network(tmp_path) -> None:
    env = dict(os.environ, TOUR_PYTHON=sys.executable, TMPDIR=str(tmp_path))
    result = subprocess.run(["unshare", "-rn", "bash", str(TOUR)], env=env,
                            capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert result.returncode == 0, f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}"


def test_tour_copy_ends_with_one_fact_forgotten_and_one_remembered(tmp_path) -> None:
    copy = tmp_path / "kept" / "vault"
    result = run_tour(tmp_path, TOUR_DIR=str(copy))
    assert result.returncode == 0, result.stderr
    texts = {f["text"] for f in list_all(copy)}
    original = {f["text"] for f in list_all(EXAMPLE_VAULT)}
    assert original - texts == {"I'm usually offline on Sundays, so don't schedule anything "
                                "for me then"}
    assert texts - original == {"I prefer gas costs in USD, not gwei"}
    tombstones = (copy / ".memvault" / "tombstones.jsonl").read_text()
    assert "Sundays" not in tombstones


def test_tour_refuses_to_overwrite_an_existing_folder(tmp_path) -> None:
    taken = tmp_path / "taken"
    taken.mkdir()
    result = run_tour(tmp_path, TOUR_DIR=str(taken))
    assert result.returncode == 1
    assert "already exists" in result.stderr
    assert list(taken.iterdir()) == []


def test_example_memory_lists_fifteen_facts_including_the_hand_edited_ones(tmp_path) -> None:
    copy = tmp_path / "vault"
    shutil.copytree(EXAMPLE_VAULT, copy)
    facts = list_all(copy)
    assert len(facts) == 15
    by_id = {f["id"]: f for f in facts}
    assert len(by_id) == 15, "ids are unique"
    assert {f["category"] for f in facts} == {
        "identity", "preference", "presentation", "communication", "project", "workflow",
        "research", "instruction", "other"}
    # Odd-cased known category: read as `preference`, kept as written.
    assert by_id["k3v9qa"]["category"] == "preference"
    assert by_id["k3v9qa"]["category_as_written"] == "Preference"
    # `*` marker, keys in another order, an extra key.
    assert by_id["rej3ct"]["meta"] == {"updated": "1794662400", "src": "chat", "id": "rej3ct"}
    # A trailing ^block-id is not part of the text.
    assert by_id["c0ldw1"]["text"].endswith("never trade from it")
    # A wikilink stays in the text.
    assert "[[Venues/Uniswap|Uniswap]]" in by_id["uni5wp"]["text"]
    # Exactly one hand-written bullet without metadata: a provisional id, no timestamp.
    provisional = [f for f in facts if f["provisional_id"]]
    assert [f["text"] for f in provisional] == [
        "I avoid trading around the US market open because gas often spikes then"]
    assert provisional[0]["updated"] is None
    # Bullets inside the callout, the %% comment and the nested child are not facts.
    assert not any("callout" in f["text"] or "draft" in f["text"].lower()
                   or "child bullet" in f["text"] for f in facts)
    assert all(f["read_only"] is None for f in facts)


def test_example_vault_is_healthy_for_doctor(tmp_path) -> None:
    copy = tmp_path / "vault"
    shutil.copytree(EXAMPLE_VAULT, copy)
    out = run_memvault("--vault", str(copy), "doctor", "--json")
    assert out.returncode == 0, out.stdout + out.stderr
    report = json.loads(out.stdout)
    assert report["ok"] is True
    assert [f for f in report["findings"] if f["severity"] != "info"] == []
    # The one deliberate quirk doctor mentions: the hand-written bullet without an id.
    memory_notes = [f for f in report["findings"] if f["path"] == "Pilot/Memory.md"]
    assert [(f["severity"], f["line"]) for f in memory_notes] == [("info", 38)]


def test_example_trade_notes_quote_their_hashes_and_match_their_file_names() -> None:
    import yaml

    trades = sorted((EXAMPLE_VAULT / "Pilot" / "Trades").glob("*.md"))
    assert len(trades) >= 2
    for note in trades:
        text = note.read_text(encoding="utf-8")
        front = text.split("---\n")[1]
        assert f'hash: "{note.stem}"' in front
        meta = yaml.safe_load(front)
        assert meta["hash"] == note.stem and meta["status"] == "validated"
        assert (EXAMPLE_VAULT / "Pilot" / "Reflections" / note.name).is_file()
        # generated from the made-up inputs in examples/trades/ by examples/regenerate.sh
        inputs = (REPO / "examples" / "trades").glob("*.json")
        assert any(note.stem in p.read_text() for p in inputs)


def test_doctor_on_the_bundled_vault_in_place_is_clean_and_changes_nothing() -> None:
    """`memvault --vault examples/vault doctor` (inside memvault's own git checkout).

    Doctor may build the git-ignored search index in `.memvault/`; every note, the config
    and the journal must stay byte for byte (and keep their mtimes)."""
    before = snapshot(EXAMPLE_VAULT, skip_caches=True)
    out = run_memvault("--vault", str(EXAMPLE_VAULT), "doctor", "--json")
    assert out.returncode == 0, out.stdout + out.stderr
    report = json.loads(out.stdout)
    assert report["ok"] is True
    assert [f for f in report["findings"] if f["severity"] != "info"] == []
    assert changed(before, snapshot(EXAMPLE_VAULT, skip_caches=True)) == []
