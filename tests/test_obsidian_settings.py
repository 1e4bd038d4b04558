"""What memvault takes from Obsidian's own settings in `.obsidian/`, which it never writes:
property types (types.json), templates folders (templates.json, Templater's data.json) and
the daily notes folder (daily-notes.json)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memvault import Vault
from memvault.errors import InvalidInput
from tests.conftest import Cli


def _settings(root: Path, name: str, value: object) -> Path:
    path = root / ".obsidian" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value) if not isinstance(value, str) else value)
    return path


def _obsidian_bytes(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in (root / ".obsidian").rglob("*") if p.is_file()}


def test_profile_set_writes_the_type_the_vault_gives_the_property(vault_dir: Path) -> None:
    _settings(vault_dir, "types.json", {"types": {"Languages": "multitext", "height": "number",
                                                  "vegetarian": "checkbox", "born": "date",
                                                  "nickname": "text"}})
    before = _obsidian_bytes(vault_dir)
    vault = Vault.open(vault_dir)
    vault.profile.set("languages", "en")  # one value, but the vault says a list
    vault.profile.set("height", "1.80")
    vault.profile.set("vegetarian", "yes")
    vault.profile.set("born", "1990-04-01")
    vault.profile.set("nickname", "007")  # text: quoted, so YAML keeps it text
    text = (vault_dir / "Pilot" / "Profile.md").read_text()
    assert "languages:\n  - en\n" in text
    assert "height: 1.80\n" in text and "vegetarian: true\n" in text
    assert "born: 1990-04-01\n" in text and 'nickname: "007"\n' in text
    assert _obsidian_bytes(vault_dir) == before, "memvault wrote in .obsidian/"


def test_a_value_not_of_the_vault_type_is_refused_and_nothing_changes(vault_dir: Path) -> None:
    _settings(vault_dir, "types.json", {"types": {"height": "number", "born": "date"}})
    profile = vault_dir / "Pilot" / "Profile.md"
    before = profile.read_bytes()
    vault = Vault.open(vault_dir)
    with pytest.raises(InvalidInput, match=r"'height' is a number property in this vault "
                                           r"\(.obsidian/types.json\); 'tall' is not a number"):
        vault.profile.set("height", "tall")
    with pytest.raises(InvalidInput, match="give a date as YYYY-MM-DD"):
        vault.profile.set("born", "01/04/1990")
    assert profile.read_bytes() == before
    done = Cli(vault_dir)("profile", "set", "height", "tall", expect=1)
    assert "nothing was changed" in done.stderr


def test_a_broken_types_file_leaves_memvault_own_rules_and_doctor_names_it(
        vault_dir: Path) -> None:
    _settings(vault_dir, "types.json", "{not json")
    vault = Vault.open(vault_dir)
    vault.profile.set("height", "tall")
    assert "height: tall\n" in (vault_dir / "Pilot" / "Profile.md").read_text()
    report = json.loads(Cli(vault_dir)("doctor", "--json", expect=None).stdout)
    assert any(f["path"] == ".obsidian/types.json" and "not a JSON object" in f["message"]
               for f in report["findings"])


@pytest.mark.parametrize("settings_file, key", [
    ("templates.json", "folder"),
    ("plugins/templater-obsidian/data.json", "templates_folder"),
])
def test_notes_in_the_templates_folder_are_not_indexed(vault_dir: Path, settings_file: str,
                                                       key: str) -> None:
    (vault_dir / "Templates").mkdir()
    (vault_dir / "Templates" / "Daily.md").write_text("---\ncreated: {{date}}\n---\nzebra plan\n")
    (vault_dir / "Notes.md").write_text("zebra crossing\n")
    cli = Cli(vault_dir)
    first = json.loads(cli("search", "zebra", "--json").stdout)
    assert {h["path"] for h in first["results"]} == {"Notes.md", "Templates/Daily.md"}
    _settings(vault_dir, settings_file, {key: "templates"})  # other case: same folder
    after = json.loads(cli("search", "zebra", "--json").stdout)
    assert [h["path"] for h in after["results"]] == ["Notes.md"]
    (vault_dir / "Templates" / "Weekly.md").write_text("zebra week\n")  # a new one, too
    assert [h["path"] for h in json.loads(cli("search", "zebra", "--json").stdout)
            ["results"]] == ["Notes.md"]


def test_daily_notes_sharing_the_journal_folder_are_reported_by_doctor(vault_dir: Path) -> None:
    cli = Cli(vault_dir)
    _settings(vault_dir, "daily-notes.json", {"folder": "Pilot/Journal", "format": "DD.MM.YYYY"})
    report = json.loads(cli("doctor", "--json", expect=None).stdout)
    found = [f for f in report["findings"] if f["path"] == "Pilot/Journal"]
    assert found and found[0]["severity"] == "warning" and "DD.MM.YYYY" in found[0]["message"]
    _settings(vault_dir, "daily-notes.json", {"folder": "pilot/journal"})
    report = json.loads(cli("doctor", "--json", expect=None).stdout)
    found = [f for f in report["findings"] if f["path"] == "Pilot/Journal"]
    assert found and found[0]["severity"] == "info" and "appends its lines" in found[0]["message"]
    _settings(vault_dir, "daily-notes.json", {"folder": "Daily Notes"})
    report = json.loads(cli("doctor", "--json", expect=None).stdout)
    assert not [f for f in report["findings"] if f["path"] == "Pilot/Journal"]
