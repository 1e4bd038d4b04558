"""After a permanent forget, memvault names the notes that still hold the words (it never
edits a note), one line each, capped, and in `--json`; never the words themselves."""

from __future__ import annotations

import json
from pathlib import Path

from memvault import Vault
from tests.conftest import run_memvault

WORDS = "my dog is called Quillbert"


def _notes(root: Path) -> None:
    """Notes holding the words (differently cased, inside a sentence, in the home's
    journal), and notes that must not be named."""
    (root / "Daily.md").write_text("Walked today. My dog is called quillbert, he loves it.\n",
                                   encoding="utf-8")
    journal = root / "Pilot" / "Journal"
    journal.mkdir(parents=True, exist_ok=True)
    (journal / "2026-11-30.md").write_text("- note: my dog is called Quillbert\n",
                                           encoding="utf-8")
    (root / "Shuffled.md").write_text("Quillbert is called my dog\n", encoding="utf-8")
    other = root / "Pilot" / "scopes" / "other"
    other.mkdir(parents=True, exist_ok=True)
    (other / "Notes.md").write_text("their dog: my dog is called Quillbert\n",
                                    encoding="utf-8")


def test_a_permanent_forget_names_the_notes_that_still_hold_the_words(vault_dir):
    vault = Vault.open(vault_dir)
    fact = vault.memory.remember("my dog is called Rufus").fact
    vault.memory.edit(fact.id, WORDS)  # the old wording is forgotten too
    (vault_dir / "Old.md").write_text("Back then: my dog is called Rufus.\n", encoding="utf-8")
    _notes(vault_dir)
    done = run_memvault("--vault", str(vault_dir), "forget", fact.id, "--permanent", "--yes")
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert lines[0].startswith("warning: 3 note(s) still hold these words")
    assert lines[1:] == ["  Daily.md", "  Old.md", "  Pilot/Journal/2026-11-30.md"]
    assert "quillbert" not in done.stderr.lower() and "rufus" not in done.stderr.lower()
    # the notes were not touched; the fact's words are gone from memvault's own files
    assert "quillbert" in (vault_dir / "Daily.md").read_text(encoding="utf-8")
    assert "Quillbert" not in (vault_dir / "Pilot" / "Memory.md").read_text(encoding="utf-8")


def test_the_notes_are_in_the_json_result_and_the_list_is_capped(vault_dir):
    vault = Vault.open(vault_dir)
    fact = vault.memory.remember(WORDS).fact
    for n in range(13):
        (vault_dir / f"Day {n:02d}.md").write_text(f"Day {n}: {WORDS}.\n", encoding="utf-8")
    as_json = run_memvault("--vault", str(vault_dir), "--json", "memory", "delete", fact.id,
                           "--permanent", "--yes")
    assert as_json.returncode == 0, as_json.stderr
    result = json.loads(as_json.stdout)
    assert result["still_in_notes"] == [f"Day {n:02d}.md" for n in range(13)]
    assert result["still_in_notes_total"] == 13
    assert "quillbert" not in (as_json.stdout + as_json.stderr).lower()

    fact = Vault.open(vault_dir).memory.remember(WORDS).fact
    plain = run_memvault("--vault", str(vault_dir), "forget", fact.id, "--permanent", "--yes")
    assert plain.returncode == 0, plain.stderr
    named = [ln for ln in plain.stderr.splitlines() if ln.startswith("  ")]
    assert named == [f"  Day {n:02d}.md" for n in range(10)] + [
        "  ... and 3 more (--json lists up to 13)"]


def test_memory_clear_permanent_names_notes_and_a_plain_forget_does_not_look(vault_dir):
    vault = Vault.open(vault_dir)
    kept = vault.memory.remember("I sail a boat named Zephyrine").fact
    (vault_dir / "Boat.md").write_text("I sail a boat named Zephyrine\n", encoding="utf-8")
    plain = run_memvault("--vault", str(vault_dir), "--json", "forget", kept.id, "--yes")
    assert plain.returncode == 0, plain.stderr
    assert "still_in_notes" not in json.loads(plain.stdout)  # not permanent: not asked
    vault = Vault.open(vault_dir)
    vault.memory.remember(WORDS)
    _notes(vault_dir)
    done = run_memvault("--vault", str(vault_dir), "memory", "clear", "--permanent", "--yes")
    assert done.returncode == 0, done.stderr
    assert [ln for ln in done.stderr.splitlines() if ln.startswith("  ")] == [
        "  Daily.md", "  Pilot/Journal/2026-11-30.md"]


def test_the_api_result_carries_the_notes(vault_dir):
    vault = Vault.open(vault_dir)
    fact = vault.memory.remember(WORDS).fact
    _notes(vault_dir)
    result = vault.memory.forget([fact.id], permanent=True)
    assert result.notes is not None
    assert result.notes.paths == ["Daily.md", "Pilot/Journal/2026-11-30.md"]
    none_left = Vault.open(vault_dir).memory.remember("a fact no note holds").fact
    assert Vault.open(vault_dir).memory.forget([none_left.id], permanent=True).notes.total == 0


def test_without_an_index_the_notes_are_read_not_indexed_with_the_same_answer(tmp_path):
    """No index on this machine: the forget reads the notes once instead of building a
    whole index for one question, and names the same notes the index would name, with
    the index's visibility rules (hidden folders, another principal's home, a symlink
    judged by its target)."""
    import os
    import shutil

    from memvault.services.setup import init_vault

    names: dict[bool, list[str]] = {}
    for with_index in (True, False):
        root = tmp_path / ("indexed" if with_index else "cold")
        init_vault(root)
        _notes(root)
        (root / ".obsidian").mkdir(exist_ok=True)
        (root / ".obsidian" / "Hidden.md").write_text(WORDS + "\n", encoding="utf-8")
        (root / "Accents.md").write_text("MY DÓG — is called: QUILLBERT!\n", encoding="utf-8")
        (root / "Split.md").write_text("my dog is\ncalled Quillbert\n", encoding="utf-8")
        os.symlink(root / "Pilot" / "scopes" / "other" / "Notes.md", root / "Link.md")
        vault = Vault.open(root)
        fact = vault.memory.remember(WORDS).fact
        if with_index:
            vault.search.refresh()
        else:
            shutil.rmtree(root / ".memvault" / "index.sqlite", ignore_errors=True)
            for path in (root / ".memvault").glob("index.sqlite*"):
                path.unlink()
        result = vault.memory.forget([fact.id], permanent=True)
        assert result.notes is not None
        names[with_index] = result.notes.paths
        if not with_index:
            assert vault.search.last_refresh is None  # no index was built to answer
    assert names[False] == names[True] == ["Accents.md", "Daily.md",
                                           "Pilot/Journal/2026-11-30.md", "Split.md"]
