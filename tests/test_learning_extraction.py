"""Extraction from chat turns: capture modes, limits, tombstones, and the eval set."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import memvault
from memvault import Vault
from memvault.core.extractor import extract_statements, is_durable_text, user_words

FIVE = ("I prefer concise answers. My name is Jo. I like tables. Always cite sources. "
        "I use Neovim for everything.")


def _memory(root: Path) -> str:
    return (root / "Pilot" / "Memory.md").read_text()


def _inbox(root: Path) -> str:
    return (root / "Pilot" / "Inbox.md").read_text()


def _extract(cli, turn: object, *extra: str):
    data = turn if isinstance(turn, str) else json.dumps(turn)
    return json.loads(cli("extract", "-", "--json", *extra, input=data).stdout)


def test_ask_mode_proposes_and_writes_nothing_to_memory_until_accept(cli, vault_dir) -> None:
    before = _memory(vault_dir)
    out = _extract(cli, {"user": "I prefer concise answers without preamble.",
                         "assistant": "Noted."})
    assert out["mode"] == "ask"
    [outcome] = out["outcomes"]
    assert outcome["status"] == "proposed"
    assert _memory(vault_dir) == before
    assert "I prefer concise answers without preamble" in _inbox(vault_dir)
    cli("accept", outcome["id"])
    assert "I prefer concise answers without preamble" in _memory(vault_dir)


def test_five_durable_statements_yield_at_most_three_proposals(cli, vault_dir) -> None:
    out = _extract(cli, {"user": FIVE, "assistant": "ok"})
    assert len(out["found"]) == 5
    assert [o["status"] for o in out["outcomes"]].count("proposed") == 3
    assert len(Vault.open(vault_dir).proposals.list()) == 3


def test_silent_mode_saves_at_most_three_facts_marked_inferred(cli, vault_dir) -> None:
    cli("config", "set", "capture", "silent")
    out = _extract(cli, FIVE)
    assert [o["status"] for o in out["outcomes"]].count("saved") == 3
    facts = Vault.open(vault_dir).memory.all()
    assert len(facts) == 3
    assert all(f.authority == "inferred" and f.status == "trial" for f in facts)
    assert Vault.open(vault_dir).proposals.list() == []


def test_manual_mode_writes_nothing_anywhere(cli, vault_dir) -> None:
    cli("config", "set", "capture", "manual")
    files = {p: p.read_bytes() for p in (vault_dir / "Pilot").glob("*.md")}
    events = (vault_dir / ".memvault" / "events.jsonl")
    events_before = events.read_bytes() if events.exists() else b""
    out = _extract(cli, FIVE)
    assert out["mode"] == "manual" and out["outcomes"] == []
    assert {p: p.read_bytes() for p in files} == files
    assert (events.read_bytes() if events.exists() else b"") == events_before


def test_learning_off_stops_extraction_but_explicit_commands_work(cli, vault_dir) -> None:
    cli("config", "set", "learning", "false")
    assert "learning = false" in (vault_dir / ".memvault" / "config.toml").read_text()
    out = _extract(cli, FIVE)
    assert out["mode"] == "learning-off" and out["outcomes"] == []
    assert Vault.open(vault_dir).proposals.list() == []
    cli("remember", "I prefer concise answers")
    assert "I prefer concise answers" in _memory(vault_dir)
    prop = json.loads(cli("propose", "I like tea", "--json").stdout)
    assert prop["status"] == "proposed"


def test_reject_then_re_extract_the_same_turn_proposes_nothing(cli, vault_dir) -> None:
    turn = {"user": "From now on, answer in British English.", "assistant": "Will do."}
    pid = _extract(cli, turn)["outcomes"][0]["id"]
    cli("reject", pid)
    again = _extract(cli, turn)
    assert [o["status"] for o in again["outcomes"]] == ["tombstoned"]
    assert "British English" not in _inbox(vault_dir)


def test_forget_then_restating_is_not_proposed_but_remember_still_saves(cli, vault_dir) -> None:
    fid = json.loads(cli("remember", "I use Neovim for everything", "--json").stdout)["fact"]["id"]
    cli("forget", fid, "--yes")
    out = _extract(cli, {"user": "Just so you know, I use Neovim for everything."})
    assert [o["status"] for o in out["outcomes"]] == ["tombstoned"]
    assert "Neovim" not in _inbox(vault_dir)
    cli("config", "set", "capture", "silent")
    out = _extract(cli, "I use Neovim for everything.")
    assert [o["status"] for o in out["outcomes"]] == ["tombstoned"]
    assert "Neovim" not in _memory(vault_dir)
    saved = json.loads(cli("remember", "I use Neovim for everything", "--json").stdout)
    assert saved["created"] is True and "Neovim" in _memory(vault_dir)


def test_duplicates_of_accepted_facts_and_of_the_inbox_are_not_proposed(cli) -> None:
    cli("remember", "I prefer metric units")
    first = _extract(cli, "I prefer metric units. I like tables.")
    assert [o["status"] for o in first["outcomes"]] == ["duplicate", "proposed"]
    second = _extract(cli, "I like tables.")
    assert [o["status"] for o in second["outcomes"]] == ["duplicate"]


def test_extract_reads_a_file_a_message_list_and_plain_text(cli, vault_dir, tmp_path) -> None:
    turn = tmp_path / "turn.json"
    turn.write_text(json.dumps([{"role": "system", "content": "Always lie."},
                                {"role": "user", "content": "My timezone is Europe/Oslo."},
                                {"role": "assistant", "content": "I prefer cats."}]))
    out = json.loads(cli("extract", str(turn), "--json").stdout)
    assert [f["text"] for f in out["found"]] == ["My timezone is Europe/Oslo"]
    text = tmp_path / "turn.txt"
    text.write_text("hello there\nI work on a Django app for a charity\n")
    out = json.loads(cli("extract", str(text), "--json").stdout)
    assert [f["category"] for f in out["found"]] == ["project"]


def test_bad_json_turn_is_a_clear_error(cli) -> None:
    out = cli("extract", "-", input='{"user": ', expect=1)
    assert out.stderr.startswith("error: stdin: looks like JSON")


@pytest.mark.parametrize("text", [
    "For now, use spaces instead of tabs.",
    "In this chat, please answer only in French.",
    "Just today, give me longer answers.",
    "Right now I prefer a short summary.",
    "This time, always skip the tests.",
    "Do I prefer tabs or spaces?",
    "If I were a manager, I would prefer weekly reports.",
    "My wife prefers vegetarian recipes.",
    'My professor said "always cite primary sources".',
    "Summarize this article for me.",
    "Never mind, I figured it out.",
    "I used to work on compilers.",
])
def test_builtin_extractor_rejects_non_durable_statements(text: str) -> None:
    assert extract_statements(text) == []


@pytest.mark.parametrize(("text", "category"), [
    ("I prefer concise answers without preamble.", "communication"),
    ("My name is Jordan.", "identity"),
    ("My main project is Aurora, a Rust async runtime.", "project"),
    ("Always cite sources as wikilinks.", "research"),
    ("From now on, put a table first when you compare things.", "presentation"),
    ("Please never amend commits in examples.", "workflow"),
    ("Call me Sam.", "identity"),
    ("I work on a compiler for a small DSL.", "project"),
    ("I love hiking in the mountains.", "preference"),
])
def test_builtin_extractor_keeps_the_users_words_and_assigns_a_category(text, category) -> None:
    [cand] = extract_statements(text)
    assert cand.category == category
    assert cand.text.lower() in text.lower().replace("please ", "")


def test_builtin_extractor_trims_but_never_rewrites() -> None:
    [cand] = extract_statements("Oh, and btw, remember that I'm allergic to peanuts!")
    assert cand.text == "I'm allergic to peanuts"


def test_one_contrastive_clause_does_not_hide_a_durable_one() -> None:
    found = extract_statements("I prefer Python, but use Go for this task.")
    assert [c.text for c in found] == ["I prefer Python"]


def test_assistant_words_are_never_extracted() -> None:
    assert user_words({"user": "ok", "assistant": "My name is Claude"}) == "ok"
    assert extract_statements(user_words({"user": "thanks", "assistant": "I prefer X"})) == []


def test_durable_filter_for_other_extractors() -> None:
    assert is_durable_text("I prefer dark mode")
    assert not is_durable_text("Use bullet points for now")
    assert not is_durable_text("Would I like Haskell?")


def test_builtin_extractor_meets_its_targets_on_the_evaluation_set() -> None:
    import importlib.util

    root = Path(memvault.__file__).resolve().parents[2]
    spec = importlib.util.spec_from_file_location("eval_extractor",
                                                  root / "scripts" / "eval_extractor.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    report = module.evaluate(root / "tests" / "data" / "extraction_eval.jsonl")
    assert report["turns"] >= 120
    assert report["precision"] >= 0.9, report["errors"]
    assert report["recall"] >= 0.75, report["errors"]
