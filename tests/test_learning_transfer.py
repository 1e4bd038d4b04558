"""Export and import: round trip, version 1, plain bullet lists, tombstones, idempotence."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from memvault import Vault
from memvault.services.setup import init_vault
from tests.conftest import Cli


def _populate(cli: Cli, vault_dir: Path) -> None:
    cli("remember", "My name is Ada", "--category", "identity")
    cli("remember", "I prefer concise answers", "--category", "communication")
    v = Vault.open(vault_dir)
    v.events.append("trade.recorded", event_id="ev-1", record="0x1")
    pid = v.lessons.propose("Lead with the fill price", "evidence-layout", ["ev-1"]).proposal.id
    v.proposals.accept(pid)
    v.proposals.propose("I like tables", "presentation")
    v.proposals.propose("Prefer conservative analysis", "risk-posture", kind="lesson")
    cli("config", "set", "capture", "silent")
    cli("config", "set", "retrieval", "false")


def _without_time(data: dict) -> dict:
    data = dict(data)
    data.pop("exported_at")
    data.pop("tombstones")
    return data


def test_export_wipe_import_round_trips_everything_exactly(cli, vault_dir, tmp_path) -> None:
    _populate(cli, vault_dir)
    exported = tmp_path / "backup.json"
    cli("export", "--output", str(exported))
    original = json.loads(exported.read_text())
    assert original["version"] == 2 and original["controls"] == {
        "learning": True, "retrieval": False, "capture": "silent"}
    shutil.rmtree(vault_dir)
    init_vault(vault_dir)
    fresh = Cli(vault_dir)
    out = json.loads(fresh("import", str(exported), "--with-controls", "--json").stdout)
    assert out["applied"] is True
    again = json.loads(fresh("export").stdout)
    assert _without_time(again) == _without_time(original)
    # The inbox still works after import: deleting a restored proposal rejects it.
    assert {p["text"] for p in json.loads(fresh("proposals", "list", "--json").stdout)[
        "proposals"]} == {"I like tables", "Prefer conservative analysis"}


def test_reimporting_the_same_file_changes_nothing(cli, vault_dir, tmp_path) -> None:
    _populate(cli, vault_dir)
    exported = tmp_path / "backup.json"
    cli("export", "--output", str(exported))
    files = {p: p.read_bytes() for p in vault_dir.rglob("*") if p.is_file()}
    out = json.loads(cli("import", str(exported), "--json").stdout)
    assert out["changes"] == 0
    assert {p: p.read_bytes() for p in vault_dir.rglob("*") if p.is_file()} == files


def test_version_1_items_arrive_as_proposals(cli, vault_dir, tmp_path) -> None:
    v1 = tmp_path / "v1.json"
    v1.write_text(json.dumps([{"content": "I prefer dark mode", "category": "preference"},
                              {"content": "My dog is called Rex", "category": "weird"}]))
    before = (vault_dir / "Pilot" / "Memory.md").read_bytes()
    out = json.loads(cli("import", str(v1), "--json").stdout)
    assert out["format"] == "v1" and out["added"] == {"inbox": 2}
    assert (vault_dir / "Pilot" / "Memory.md").read_bytes() == before
    props = json.loads(cli("proposals", "list", "--json").stdout)["proposals"]
    assert [(p["text"], p["category"], p["authority"]) for p in props] == [
        ("I prefer dark mode", "preference", "inferred"),
        ("My dog is called Rex", "other", "inferred")]


def test_plain_markdown_bullet_list_imports_as_proposals(cli, vault_dir, tmp_path) -> None:
    note = tmp_path / "Saved memories.md"
    note.write_text("# Saved memories\n\nFrom another tool.\n\n"
                    "- Prefers Python for scripting\n"
                    "* Works at Acme [project]\n"
                    "- [ ] Lives in Oslo <!-- id:abc123 -->\n"
                    "  - a nested detail\n")
    preview = cli("import", str(note), "--dry-run").stdout
    assert "would add 3" in preview
    assert "Prefers Python" not in (vault_dir / "Pilot" / "Inbox.md").read_text()
    cli("import", str(note))
    texts = [p["text"] for p in json.loads(cli("proposals", "list", "--json").stdout)[
        "proposals"]]
    assert texts == ["Prefers Python for scripting", "Works at Acme", "Lives in Oslo"]


def test_tombstoned_text_is_not_resurrected_by_import(cli, vault_dir, tmp_path) -> None:
    cli("remember", "I use Emacs")
    backup = tmp_path / "backup.json"
    cli("export", "--output", str(backup))
    cli("forget", "Emacs", "--yes")
    out = json.loads(cli("import", str(backup), "--json").stdout)
    assert out["changes"] == 0 and out["skipped"][0]["text"] is None
    assert "Emacs" not in (vault_dir / "Pilot" / "Memory.md").read_text()
    v1 = tmp_path / "v1.json"
    v1.write_text(json.dumps([{"content": "i use   EMACS", "category": "preference"}]))
    cli("import", str(v1))
    assert "EMACS" not in (vault_dir / "Pilot" / "Inbox.md").read_text()


def test_export_never_contains_forgotten_text(cli, tmp_path) -> None:
    cli("remember", "My secret hobby is falconry")
    cli("forget", "falconry", "--yes")
    data = cli("export").stdout
    assert "falconry" not in data
    assert len(json.loads(data)["tombstones"]["keys"]) == 1


def test_tombstones_of_an_export_block_its_texts_in_another_vault(cli, vault_dir,
                                                                   tmp_path) -> None:
    cli("remember", "I use Emacs")
    cli("forget", "Emacs", "--yes")
    backup = tmp_path / "backup.json"
    cli("export", "--output", str(backup))
    data = json.loads(backup.read_text())
    data["proposals"] = [{"id": "zz0001", "text": "I use Emacs", "category": "preference",
                          "meta": {"id": "zz0001", "kind": "fact"}, "task": " "}]
    backup.write_text(json.dumps(data))
    other = tmp_path / "other"
    init_vault(other)
    out = json.loads(Cli(other)("import", str(backup), "--json").stdout)
    assert out["added"] == {} and "Emacs" not in (other / "Pilot" / "Inbox.md").read_text()


def test_unreviewed_inferred_facts_arrive_as_proposals(cli, vault_dir, tmp_path) -> None:
    cli("config", "set", "capture", "silent")
    cli("extract", "-", input="I prefer metric units.")
    backup = tmp_path / "b.json"
    cli("export", "--output", str(backup))
    other = tmp_path / "other"
    init_vault(other)
    Cli(other)("import", str(backup))
    assert "metric" not in (other / "Pilot" / "Memory.md").read_text()
    assert "I prefer metric units" in (other / "Pilot" / "Inbox.md").read_text()


def test_invalid_import_is_refused_and_writes_nothing(cli, vault_dir, tmp_path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"content": "ok fact"}, {"content": "two\nlines"}]))
    before = (vault_dir / "Pilot" / "Inbox.md").read_bytes()
    out = cli("import", str(bad), expect=1)
    assert "item 2" in out.stderr and "bad.json" in out.stderr
    assert (vault_dir / "Pilot" / "Inbox.md").read_bytes() == before
    v9 = tmp_path / "v9.json"
    v9.write_text('{"version": 9}')
    assert "unsupported export version" in cli("import", str(v9), expect=1).stderr


def test_imported_inference_never_overwrites_an_explicit_fact(cli, vault_dir, tmp_path) -> None:
    fid = json.loads(cli("remember", "I live in Oslo", "--json").stdout)["fact"]["id"]
    before = (vault_dir / "Pilot" / "Memory.md").read_bytes()
    data = {"format": "memvault", "version": 2, "facts": [
        {"id": fid, "text": "I live in Bergen", "category": "identity",
         "meta": {"id": fid, "updated": "1", "auth": "inferred", "status": "trial"}}]}
    path = tmp_path / "clash.json"
    path.write_text(json.dumps(data))
    out = json.loads(cli("import", str(path), "--json").stdout)
    assert out["changes"] == 0 and "kept yours" in out["skipped"][0]["reason"]
    assert (vault_dir / "Pilot" / "Memory.md").read_bytes() == before
