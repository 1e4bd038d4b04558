"""Folders already on disk are reused whatever their case or Unicode form.

A vault made on a Mac and opened on Linux (or checked out by git) may hold `pilot/`,
`journal/` or a folder name stored decomposed (NFD), while memvault's layout says
`Pilot/`, `Journal/` or the composed (NFC) name. On this case-sensitive disk memvault
must read and write the folder that exists, never create a twin beside it.
"""

from __future__ import annotations

import json
import os
import unicodedata
from pathlib import Path

from memvault import Vault
from memvault.services.setup import init_vault
from tests.conftest import Cli
from tests.trade_helpers import START, make_trade


def _entries(folder: Path) -> list[str]:
    return sorted(os.listdir(folder))


def test_a_lowercase_home_folder_is_used_for_reading_writing_and_search(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    init_vault(root)
    (root / "Pilot").rename(root / "pilot")  # renamed on a Mac, synced here
    cli = Cli(root)
    cli("remember", "I prefer concise answers", "-c", "preference")
    assert "Pilot" not in _entries(root), "a second home folder was created"
    assert b"I prefer concise answers" in (root / "pilot" / "Memory.md").read_bytes()
    listed = json.loads(cli("memory", "list", "--json").stdout)
    assert [f["text"] for f in listed["facts"]] == ["I prefer concise answers"]
    (root / "Notes.md").write_text("concise notes\n")
    found = json.loads(cli("search", "concise", "--json").stdout)
    # the index knows pilot/Memory.md is the memory file, not a note to search
    assert [hit["path"] for hit in found["results"]] == ["Notes.md"]
    assert "I prefer concise answers" in cli("context").stdout
    init_vault(root)  # init again: keeps the person's folder
    assert "Pilot" not in _entries(root)


def test_an_nfd_home_folder_is_reused_for_an_nfc_configured_home(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    init_vault(root)
    config = root / ".memvault" / "config.toml"
    composed = unicodedata.normalize("NFC", "Mémoire")
    decomposed = unicodedata.normalize("NFD", composed)
    config.write_text(config.read_text().replace('home = "Pilot"', f'home = "{composed}"'))
    (root / "Pilot").rename(root / decomposed)  # how macOS stored the name
    vault = Vault.open(root)
    vault.memory.remember("I live in Oslo", "identity")
    assert composed not in _entries(root) and decomposed in _entries(root)
    assert b"I live in Oslo" in (root / decomposed / "Memory.md").read_bytes()
    assert [f.text for f in Vault.open(root).memory.all()] == ["I live in Oslo"]


def test_a_trade_day_note_goes_into_the_journal_folder_the_person_has(vault_dir: Path,
                                                                      tmp_path: Path) -> None:
    home = vault_dir / "Pilot"
    (home / "Journal").rename(home / "journal")
    (home / "journal" / "my own note.md").write_text("written by hand\n")
    (home / "Trades").rmdir()
    (home / "TRADES").mkdir()
    source = tmp_path / "trade.json"
    source.write_text(json.dumps(make_trade(1, START)))
    Cli(vault_dir)("trade", "record", str(source))
    assert "Journal" not in _entries(home) and "Trades" not in _entries(home)
    assert _entries(home / "journal") == ["2026-11-20.md", "my own note.md"]
    assert len(_entries(home / "TRADES")) == 1
    assert (home / "journal" / "my own note.md").read_text() == "written by hand\n"


def test_an_exact_spelling_wins_over_a_twin(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    init_vault(root)
    (root / "pilot").mkdir()  # both exist on this case-sensitive disk
    Vault.open(root).memory.remember("I use Linux", "identity")
    assert b"I use Linux" in (root / "Pilot" / "Memory.md").read_bytes()
    assert _entries(root / "pilot") == []
