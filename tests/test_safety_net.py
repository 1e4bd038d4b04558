"""The safety net: doctor notices records that vanished without a forget, and
`memvault memory recover` shows, restores or dismisses them; forgetting leaves no copy."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from memvault import Vault
from memvault.services import safety_net
from memvault.state_paths import SAFETY

MEMORY = "Pilot/Memory.md"


def _delete_line(vault_dir: Path, needle: str, rel: str = MEMORY) -> bytes:
    path = vault_dir / rel
    lines = path.read_bytes().splitlines(keepends=True)
    gone = [ln for ln in lines if needle.encode() in ln]
    path.write_bytes(b"".join(ln for ln in lines if needle.encode() not in ln))
    return b"".join(gone)


def _net_bytes(vault_dir: Path) -> bytes:
    return b"".join(p.read_bytes() for p in (vault_dir / SAFETY).rglob("*") if p.is_file())


def test_a_vanished_fact_is_reported_listed_and_restored_byte_for_byte(cli, vault_dir) -> None:
    cli("remember", "I like green tea", "--category", "preference")
    cli("remember", "I live in Oslo")
    line = _delete_line(vault_dir, "green tea")  # an editor's stale save, say
    doctor = cli("doctor", expect=1)
    assert "Pilot/Memory.md: 1 record(s) vanished without a forget" in doctor.stdout
    listed = json.loads(cli("memory", "recover", "--json").stdout)["lost"]
    assert [(it["text"], it["path"]) for it in listed] == [("I like green tea", MEMORY)]
    cli("remember", "A later fact")  # a later write keeps the lost line in the net
    restored = json.loads(cli("memory", "recover", "--all", "--json").stdout)["restored"]
    assert [it["id"] for it in restored] == [listed[0]["id"]]
    data = (vault_dir / MEMORY).read_bytes()
    assert line in data  # the very same line, id and metadata included
    assert "all good" in cli("doctor").stdout
    assert json.loads(cli("memory", "recover", "--json").stdout)["lost"] == []
    history = json.loads(cli("memory", "show", listed[0]["id"], "--json").stdout)["history"]
    assert history[-1]["type"] == "fact.recovered"


def test_recover_by_id_and_unknown_ids(cli, vault_dir) -> None:
    ids = [json.loads(cli("remember", t, "--json").stdout)["fact"]["id"]
           for t in ("one fact", "two fact", "three fact")]
    _delete_line(vault_dir, "one fact")
    _delete_line(vault_dir, "two fact")
    err = cli("memory", "recover", "zzz999", expect=1).stderr
    assert err.startswith("error: ") and "zzz999" in err and err.count("\n") == 1
    cli("memory", "recover", ids[1])
    texts = (vault_dir / MEMORY).read_text()
    assert "two fact" in texts and "one fact" not in texts
    assert [it["id"] for it in json.loads(cli("memory", "recover", "--json").stdout)["lost"]] \
        == [ids[0]]


def test_dismiss_asks_first_then_drops_the_copy(cli, vault_dir) -> None:
    cli("remember", "Deleted on purpose")
    cli("remember", "Kept")
    _delete_line(vault_dir, "on purpose")
    refused = cli("memory", "recover", "--all", "--dismiss", expect=1)
    assert "confirmation" in refused.stderr
    cli("memory", "recover", "--all", "--dismiss", "--yes")
    assert b"Deleted on purpose" not in _net_bytes(vault_dir)
    assert "all good" in cli("doctor").stdout
    assert "Deleted on purpose" not in (vault_dir / MEMORY).read_text()


def test_forgetting_leaves_no_copy_in_the_net(cli, vault_dir) -> None:
    cli("remember", "My bank PIN hint is sunflower")
    cli("remember", "Another fact")
    assert b"sunflower" in _net_bytes(vault_dir)
    cli("forget", "sunflower", "--permanent", "--yes")
    assert b"sunflower" not in _net_bytes(vault_dir)
    # and a text that vanished first (kept as lost), then is forgotten by a later remember +
    # forget of the same words, leaves no copy either
    cli("remember", "My locker code is K4711Z")
    cli("remember", "Filler")
    _delete_line(vault_dir, "K4711Z")
    cli("remember", "Absorb the loss")  # moves the vanished line into lost.jsonl
    assert b"K4711Z" in _net_bytes(vault_dir)
    cli("remember", "My locker code is K4711Z")
    cli("forget", "K4711Z", "--permanent", "--yes")
    assert b"K4711Z" not in _net_bytes(vault_dir)
    assert json.loads(cli("memory", "recover", "--json").stdout)["lost"] == []


def test_a_text_remembered_again_is_not_offered_twice(cli, vault_dir) -> None:
    cli("remember", "I cycle to work")
    _delete_line(vault_dir, "cycle")
    cli("remember", "I cycle to work")  # the user typed it again: a new id, same words
    assert json.loads(cli("memory", "recover", "--json").stdout)["lost"] == []


def test_lessons_are_covered_and_inbox_deletions_are_not_losses(cli, vault_dir) -> None:
    cli("propose", "Answer in bullet points", "--kind", "lesson", "--category", "risk-posture")
    pid = json.loads(cli("proposals", "list", "--json").stdout)["proposals"][0]["id"]
    cli("accept", pid)
    cli("propose", "I own a boat")
    _delete_line(vault_dir, "bullet points", "Pilot/Lessons.md")
    _delete_line(vault_dir, "boat", "Pilot/Inbox.md")  # a rejection, not an accident
    lost = json.loads(cli("memory", "recover", "--json").stdout)["lost"]
    assert [(it["path"], it["text"]) for it in lost] == [("Pilot/Lessons.md",
                                                          "Answer in bullet points")]


def test_principals_see_only_their_own_lost_records(cli, vault_dir) -> None:
    cli("--scope", "bob", "remember", "Bob's fact")
    cli("remember", "Default fact")
    _delete_line(vault_dir, "Bob's fact", "Pilot/scopes/bob/Memory.md")
    assert json.loads(cli("memory", "recover", "--json").stdout)["lost"] == []
    bob = json.loads(cli("--scope", "bob", "memory", "recover", "--json").stdout)["lost"]
    assert [it["text"] for it in bob] == ["Bob's fact"]


def test_the_net_stays_out_of_git_even_in_an_old_vault(cli, vault_dir) -> None:
    ignore = vault_dir / ".memvault" / ".gitignore"
    ignore.write_text(ignore.read_text().replace("safety/\n", ""))  # made before the net
    cli("remember", "A fact")
    subprocess.run(["git", "init", "-q", str(vault_dir)], check=True, timeout=30)
    listed = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"],
                            cwd=vault_dir, capture_output=True, text=True, timeout=30).stdout
    assert "safety" not in listed and "Pilot/Memory.md" in listed


def test_the_lost_list_is_bounded(vault: Vault, vault_dir, monkeypatch) -> None:
    monkeypatch.setattr(safety_net, "MAX_LOST_BYTES", 4000)
    for i in range(40):
        vault.memory.remember(f"fact number {i} " + "padding " * 10)
    (vault_dir / MEMORY).write_text("# Memory\n\n- hand written\n")
    vault.memory.remember("after the accident")
    lost_file = vault_dir / safety_net.LOST
    assert 0 < lost_file.stat().st_size <= 4000
    kept = [json.loads(line)["text"] for line in lost_file.read_text().splitlines()]
    assert kept and kept[-1].startswith("fact number 39")  # the newest are kept
