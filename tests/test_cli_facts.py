"""The fact commands through the CLI: documented --json shapes, exit codes 0/1/2, help
with examples, and a few runs through a real subprocess."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memvault.core.bullets import parse_bullets
from tests.conftest import run_memvault
from tests.golden.support import MEMORY, golden_bytes, put_memory

FACT_KEYS = {"id", "text", "category", "category_as_written", "updated", "line", "authority",
             "status", "provisional_id", "read_only", "meta"}
FORGET_KEYS = {"forgotten", "permanent", "purged_events"}


def _json(result) -> dict:
    data = json.loads(result.stdout)  # stdout holds exactly one JSON document
    assert isinstance(data, dict)
    return data


def test_every_fact_command_gives_documented_json(cli, vault_dir: Path) -> None:
    out = _json(cli("remember", "I prefer short answers", "-c", "PREFERENCE", "--json"))
    assert set(out) == {"created", "fact", "near_duplicates", "lifted_tombstone"}
    fact = out["fact"]
    assert set(fact) == FACT_KEYS
    assert (fact["category"], fact["category_as_written"], fact["authority"],
            fact["status"]) == ("preference", "preference", "explicit", "proven")
    fid = fact["id"]
    listed = _json(cli("memory", "list", "--json"))
    assert set(listed) == {"facts", "total", "path", "read_only"} and listed["path"] == MEMORY
    assert listed["total"] == 1
    assert [set(f) for f in listed["facts"]] == [FACT_KEYS]
    shown = _json(cli("memory", "show", fid, "--json"))
    assert set(shown) == {"fact", "state", "history"} and shown["state"] == "active"
    assert all({"id", "ts", "type", "scope", "record"} <= set(e) for e in shown["history"])
    edited = _json(cli("memory", "edit", fid, "I prefer very short answers", "--json"))
    assert set(edited) == {"fact", "changed"} and edited["fact"]["id"] == fid
    assert edited["changed"] is True
    assert set(_json(cli("memory", "open", "--json"))) == {"path"}
    deleted = _json(cli("memory", "delete", fid, "--yes", "--json"))
    assert set(deleted) == FORGET_KEYS and deleted["forgotten"] == [
        {"id": fid, "category": "preference"}]
    restored = _json(cli("memory", "restore", fid, "--json"))
    assert set(restored) == {"fact"} and set(restored["fact"]) == FACT_KEYS
    assert set(_json(cli("forget", fid, "--yes", "--json"))) == FORGET_KEYS
    cli("remember", "one more")
    cleared = _json(cli("memory", "clear", "--yes", "--json"))
    assert set(cleared) == FORGET_KEYS and len(cleared["forgotten"]) == 1
    assert _json(cli("memory", "list", "--json"))["facts"] == []


def test_global_json_option_works_before_the_command(cli) -> None:
    out = _json(cli("--json", "remember", "global flag"))
    assert out["created"] is True
    assert len(_json(cli("--json", "memory", "list"))["facts"]) == 1


def test_edit_changes_category_only_and_keeps_the_id(cli, vault_dir: Path) -> None:
    put_memory(vault_dir, "memory_handedited.md")
    out = _json(cli("memory", "edit", "xtra01", "--category", "Workflow", "--json"))["fact"]
    assert (out["id"], out["text"], out["category"]) == ("xtra01", "Extra keys kept",
                                                         "workflow")
    assert out["authority"] == "explicit" and out["meta"]["auth"] == "explicit"
    assert list(out["meta"]) == ["id", "auth", "updated", "src", "supersedes"]
    err = cli("memory", "edit", "xtra01", expect=2).stderr
    assert err == "error: nothing to change: give new text and/or --category\n"


def test_list_shows_newest_eight_unless_all_and_filters_by_category(cli, vault_dir: Path) -> None:
    put_memory(vault_dir, "memory_handedited.md")
    assert len(_json(cli("memory", "list", "--json"))["facts"]) == 8
    everything = _json(cli("memory", "list", "--all", "--json"))["facts"]
    assert len(everything) == len(parse_bullets(golden_bytes("memory_handedited.md")).items)
    updated = [f["updated"] or 0 for f in everything]
    assert updated == sorted(updated, reverse=True)
    prefs = _json(cli("memory", "list", "--all", "-c", "preference", "--json"))["facts"]
    assert "cat002" in {f["id"] for f in prefs}  # [Preference] compares case-insensitively
    assert all((f["category_as_written"] or "").lower() == "preference" for f in prefs)
    moods = _json(cli("memory", "list", "--all", "-c", "MOOD", "--json"))["facts"]
    assert [(f["id"], f["category"]) for f in moods] == [("cat001", "other")]


def test_human_output_of_list_and_show(cli, vault_dir: Path) -> None:
    put_memory(vault_dir, "memory_handedited.md")
    table = cli("memory", "list", "--all").stdout
    assert "k3v9qa" in table and "no id yet" in table and "read-only" in table
    detail = cli("memory", "show", "xtra01").stdout
    assert "Extra keys kept" in detail and "inferred" in detail and "src:chat" in detail


@pytest.mark.parametrize("command", [("remember",), ("forget",), ("memory", "list"),
                                     ("memory", "show"), ("memory", "edit"),
                                     ("memory", "delete"), ("memory", "clear"),
                                     ("memory", "restore"), ("memory", "open"), ("doctor",),
                                     ("init",)])
def test_every_fact_command_has_help_with_an_example(cli, command: tuple[str, ...]) -> None:
    out = cli(*command, "--help").stdout
    assert "Example:" in out and "--json" in out


def test_exit_codes_through_a_real_process(vault_dir: Path) -> None:
    v = ("--vault", str(vault_dir))
    ok = run_memvault(*v, "remember", "subprocess fact", "--json")
    assert ok.returncode == 0 and json.loads(ok.stdout)["created"] is True
    fid = json.loads(ok.stdout)["fact"]["id"]
    edited = run_memvault(*v, "memory", "edit", fid, "subprocess fact, edited", "--json")
    assert edited.returncode == 0 and json.loads(edited.stdout)["fact"]["id"] == fid
    missing = run_memvault(*v, "memory", "edit", "nope42", "x")
    assert (missing.returncode, missing.stdout) == (1, "")
    assert missing.stderr == f"error: {MEMORY}: no record with id 'nope42'\n"
    refused = run_memvault(*v, "forget", "subprocess")  # no terminal, no --yes
    assert refused.returncode == 1 and "pass --yes" in refused.stderr
    usage = run_memvault(*v, "remember", "--category")
    assert usage.returncode == 2 and "Traceback" not in usage.stderr
    assert run_memvault(*v, "memory", "frobnicate").returncode == 2
    verbose = run_memvault(*v, "--verbose", "memory", "edit", "nope42", "x")
    assert verbose.returncode == 1 and "Traceback" in verbose.stderr
    assert verbose.stderr.rstrip().endswith(f"error: {MEMORY}: no record with id 'nope42'")


def test_memory_open_without_a_terminal_prints_the_path(cli, vault_dir: Path,
                                                        monkeypatch) -> None:
    monkeypatch.setenv("EDITOR", "false")
    assert cli("memory", "open").stdout.strip() == str(vault_dir / MEMORY)


def test_list_says_how_many_facts_it_hides(cli) -> None:
    for n in range(14):
        cli("remember", f"fact number {n}")
    out = cli("memory", "list").stdout
    assert "8 of 14 — `--all` for every fact" in out
    assert "of 14" not in cli("memory", "list", "--all").stdout
    listed = _json(cli("memory", "list", "--json"))
    assert len(listed["facts"]) == 8 and listed["total"] == 14


def test_an_identical_edit_changes_nothing_and_logs_nothing(cli, vault_dir: Path) -> None:
    fid = _json(cli("remember", "I prefer short answers", "-c", "preference", "--json"))[
        "fact"]["id"]
    memory = vault_dir / "Pilot" / "Memory.md"
    events = vault_dir / ".memvault" / "events.jsonl"
    before = (memory.read_bytes(), events.read_bytes())
    out = cli("memory", "edit", fid, "I prefer short answers").stdout
    assert out.startswith(f"unchanged {fid}")
    again = _json(cli("memory", "edit", fid, "I prefer short answers", "-c", "Preference",
                      "--json"))
    assert again["changed"] is False
    assert (memory.read_bytes(), events.read_bytes()) == before


def test_a_category_only_edit_logs_the_category_not_the_text(cli) -> None:
    fid = _json(cli("remember", "Tables for numbers", "--json"))["fact"]["id"]
    edited = _json(cli("memory", "edit", fid, "-c", "presentation", "--json"))
    assert edited["changed"] is True and edited["fact"]["category"] == "presentation"
    history = _json(cli("memory", "show", fid, "--json"))["history"]
    event = history[-1]
    assert event["type"] == "fact.edited"
    assert (event["category"], event["previous_category"]) == ("presentation", "other")
    assert "text" not in event and "previous_text" not in event
    shown = cli("memory", "show", fid).stdout
    assert "category other → presentation" in shown
