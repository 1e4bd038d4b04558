"""Dedupe: an exact normalised duplicate is a no-op reporting the existing id; a near
duplicate is saved and reported (stderr and --json)."""

from __future__ import annotations

import json
from pathlib import Path

from memvault.services.memory import NEAR_DUPLICATE_THRESHOLD
from tests.golden.support import MEMORY, put_memory, snapshot


def _remember(cli, text: str, *extra: str) -> dict:
    return json.loads(cli("remember", text, "--json", *extra).stdout)


def test_exact_normalised_duplicate_is_a_no_op_reporting_the_existing_id(
        cli, vault_dir: Path) -> None:
    first = _remember(cli, "I drink tea, not coffee", "--category", "preference")
    path = vault_dir / MEMORY
    before = snapshot(path)
    events = (vault_dir / ".memvault/events.jsonl").read_bytes()
    again = _remember(cli, "  i DRINK\ttea,   NOT coffee ", "--category", "identity")
    assert again["created"] is False
    assert again["fact"]["id"] == first["fact"]["id"]
    assert again["fact"]["text"] == "I drink tea, not coffee"
    assert snapshot(path) == before
    assert (vault_dir / ".memvault/events.jsonl").read_bytes() == events
    human = cli("remember", "I DRINK TEA, NOT COFFEE")
    assert human.stdout.startswith(f"already remembered as {first['fact']['id']}")


def test_duplicate_of_a_hand_written_bullet_reports_its_provisional_id(cli,
                                                                      vault_dir: Path) -> None:
    path = put_memory(vault_dir, b"# Memory\n\n- I like green tea [preference]\n")
    before = snapshot(path)
    out = _remember(cli, "i like GREEN tea")
    assert out["created"] is False and out["fact"]["provisional_id"] is True
    assert snapshot(path) == before


def test_near_duplicate_is_saved_and_reported_on_stderr_and_in_json(cli) -> None:
    first = _remember(cli, "I drink tea, not coffee")
    result = cli("remember", "I drink tea and not coffee")
    assert result.stdout.startswith("remembered ")
    assert f"similar to {first['fact']['id']}" in result.stderr
    out = _remember(cli, "Not coffee: I drink tea")
    assert out["created"] is True
    near = out["near_duplicates"]
    assert first["fact"]["id"] in [n["id"] for n in near]
    assert all(set(n) == {"id", "text", "score"} for n in near)
    assert all(NEAR_DUPLICATE_THRESHOLD <= n["score"] <= 100 for n in near)


def test_different_facts_are_not_near_duplicates(cli) -> None:
    _remember(cli, "I drink tea, not coffee")
    result = cli("remember", "My main project is Aurora, a Rust async runtime")
    assert "similar to" not in result.stderr
    out = _remember(cli, "I live in Lisbon since 2019")
    assert out["near_duplicates"] == [] and out["created"] is True
