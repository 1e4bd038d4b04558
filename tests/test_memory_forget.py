"""Forgetting: text leaves every Markdown file, tombstones are content-free,
history can restore, `--permanent` leaves no copy anywhere, confirmation is required."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memvault import Vault
from tests.golden.support import MEMORY, put_memory, snapshot

UNIQUE = "quetzalcoatlfig"
FACT = f"My cat is called {UNIQUE.capitalize()}"


def _grep_vault(root: Path, word: str) -> list[str]:
    """Every file under the vault (including .memvault/) whose bytes contain `word`."""
    needles = {word.encode(), word.capitalize().encode(), word.upper().encode()}
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")
                  if p.is_file() and any(n in p.read_bytes() for n in needles))


def _remember(cli, text: str = FACT, *extra: str) -> str:
    return json.loads(cli("remember", text, "--json", *extra).stdout)["fact"]["id"]


def test_forget_removes_the_text_from_memory_inbox_and_lessons(cli, vault_dir: Path) -> None:
    fact_id = _remember(cli)
    keep_id = _remember(cli, "I live in Lisbon")
    (vault_dir / "Pilot/Inbox.md").write_text(
        "# Inbox\n\n"
        f"- [ ] {FACT.lower()}  [identity] <!-- id:prop01 kind:fact -->\n"
        "- [ ] Another proposal [other] <!-- id:prop02 kind:fact -->\n")
    (vault_dir / "Pilot/Lessons.md").write_text(
        f"# Lessons\n\n- {FACT} [risk-posture] <!-- id:les001 updated:1 -->\n")
    out = cli("forget", UNIQUE, "--yes", "--json")
    assert json.loads(out.stdout)["forgotten"] == [{"id": fact_id, "category": "other"}]
    for name in ("Memory.md", "Inbox.md", "Lessons.md"):
        assert UNIQUE not in (vault_dir / "Pilot" / name).read_text().casefold(), name
    assert "Another proposal" in (vault_dir / "Pilot/Inbox.md").read_text()
    assert "# Lessons" in (vault_dir / "Pilot/Lessons.md").read_text()
    assert [f["id"] for f in json.loads(cli("memory", "list", "--json").stdout)["facts"]] == [
        keep_id]


def test_forget_writes_a_content_free_tombstone(cli, vault_dir: Path, vault: Vault) -> None:
    fact_id = _remember(cli)
    cli("forget", fact_id, "--yes")
    raw = (vault_dir / ".memvault/tombstones.jsonl").read_bytes()
    assert UNIQUE.encode() not in raw.lower() and b"cat is called" not in raw
    stones = [json.loads(line) for line in raw.splitlines()]
    assert len(stones) == 1
    assert set(stones[0]) == {"key", "record", "ts", "kind", "scope"}
    assert stones[0]["record"] == fact_id and stones[0]["kind"] == "forgotten"
    assert vault.tombstones.is_tombstoned(f"  my CAT is called   {UNIQUE} ")


def test_show_of_a_forgotten_fact_shows_its_history(cli) -> None:
    fact_id = _remember(cli)
    cli("memory", "edit", fact_id, FACT + " the second")
    cli("memory", "delete", fact_id, "--yes")
    shown = json.loads(cli("memory", "show", fact_id, "--json").stdout)
    assert shown["state"] == "forgotten" and shown["fact"] is None
    assert [e["type"] for e in shown["history"]] == ["fact.remembered", "fact.edited",
                                                     "fact.forgotten"]
    assert shown["history"][0]["text"] == FACT
    human = cli("memory", "show", fact_id).stdout
    assert "was forgotten" in human and "fact.remembered" in human


def test_forget_permanent_leaves_no_copy_anywhere_in_the_vault(cli, vault_dir: Path,
                                                                vault: Vault) -> None:
    first = _remember(cli)
    cli("forget", first, "--yes")  # forgotten once: history and tombstone kept
    second = _remember(cli)  # remembered again under a new id
    cli("memory", "edit", second, FACT + " indeed")
    _remember(cli, "An unrelated fact that stays")
    vault.search.refresh()  # the search index holds the text too
    assert ".memvault/index.sqlite" in _grep_vault(vault_dir, UNIQUE)
    out = cli("forget", UNIQUE, "--permanent", "--yes", "--json")
    assert json.loads(out.stdout)["purged_events"] >= 3
    assert _grep_vault(vault_dir, UNIQUE) == []
    shown = json.loads(cli("memory", "show", second, "--json").stdout)
    assert shown["state"] == "forgotten"
    assert [e["type"] for e in shown["history"]] == ["fact.forgotten"]  # content-free
    assert cli("memory", "restore", second, expect=1).stderr.startswith("error: ")
    assert "An unrelated fact that stays" in (vault_dir / MEMORY).read_text()


def test_remember_of_forgotten_text_works_and_lifts_the_tombstone(cli, vault: Vault) -> None:
    fact_id = _remember(cli)
    cli("forget", fact_id, "--yes")
    assert vault.tombstones.is_tombstoned(FACT)
    out = json.loads(cli("remember", FACT, "--json").stdout)
    assert out["created"] is True and out["lifted_tombstone"] is True
    assert not vault.tombstones.is_tombstoned(FACT)
    human = cli("remember", "Another one", "--category", "project").stderr
    assert "tombstone" not in human


def test_restore_brings_back_the_fact_with_the_same_id(cli, vault: Vault,
                                                       vault_dir: Path) -> None:
    fact_id = _remember(cli, FACT, "--category", "identity")
    cli("forget", fact_id, "--yes")
    restored = json.loads(cli("memory", "restore", fact_id, "--json").stdout)["fact"]
    assert (restored["id"], restored["text"], restored["category"]) == (fact_id, FACT,
                                                                         "identity")
    assert not vault.tombstones.is_tombstoned(FACT)
    assert cli("memory", "restore", fact_id, expect=1).stderr.startswith(
        f"error: {MEMORY}: fact {fact_id!r} is not forgotten")
    assert cli("memory", "restore", "nosuch", expect=1).stderr.count("\n") == 1


def test_forget_matches_substrings_case_insensitively_and_by_id(cli) -> None:
    a = _remember(cli, "Alpha likes TEA")
    b = _remember(cli, "Beta likes tea too")
    c = _remember(cli, "Gamma likes coffee")
    out = json.loads(cli("forget", "tea", "--yes", "--json").stdout)
    assert sorted(f["id"] for f in out["forgotten"]) == sorted([a, b])
    assert json.loads(cli("forget", c, "--yes", "--json").stdout)["forgotten"][0]["id"] == c
    err = cli("forget", "nothing like this", "--yes", expect=1).stderr
    assert err == f"error: {MEMORY}: no fact matches 'nothing like this'\n"


@pytest.mark.parametrize("args", [("forget", "tea"), ("memory", "delete", "{id}"),
                                  ("memory", "clear"), ("memory", "clear", "--permanent")])
def test_destructive_commands_refuse_without_yes_and_a_terminal(cli, vault_dir: Path,
                                                                args: tuple[str, ...]) -> None:
    fact_id = _remember(cli, "I like tea")
    path = vault_dir / MEMORY
    before = snapshot(path)
    events = (vault_dir / ".memvault/events.jsonl").read_bytes()
    result = cli(*[a.format(id=fact_id) for a in args], expect=1)
    assert "pass --yes" in result.stderr and result.stderr.startswith("error: ")
    assert snapshot(path) == before
    assert (vault_dir / ".memvault/events.jsonl").read_bytes() == events
    assert not (vault_dir / ".memvault/tombstones.jsonl").exists()


def test_clear_forgets_every_fact_and_keeps_everything_else(cli, vault_dir: Path) -> None:
    path = put_memory(vault_dir, "memory_handedited.md")
    # The copied line that shares id dup001 is read as a fact of its own (a derived id),
    # so clearing forgets both copies.
    out = json.loads(cli("memory", "clear", "--yes", "--json").stdout)
    assert len(out["forgotten"]) > 25
    text = path.read_text()
    assert text.startswith("---\ntags:\n- memory\n")
    for kept in ("```markdown", "%%", "> [!note] A callout", "Open comment",
                 "Text after comment", "Two comments"):
        assert kept in text  # blocks and read-only or ambiguous items stay
    for gone in ("I like tea", "Plus marker fact", "Copied line", "I prefer concise"):
        assert gone not in text
