"""`memvault profile show|set`: only the target property's lines change."""

from __future__ import annotations

import json
from pathlib import Path

HAND_PROFILE = (
    b"---\n"
    b"# my profile, edited in Obsidian\n"
    b"name: \"Sam Rivera\"      # as I like to be called\n"
    b"timezone: UTC\n"
    b"tags: [me, profile]\n"
    b"languages:\n"
    b"  - en\n"
    b"  - pt\n"
    b"reply: no\n"
    b"favourite_number: 010\n"
    b"---\n"
    b"# Profile\n\nI trade small amounts. Prose with `code` and a [[link]].\n"
)


def _write(vault_dir: Path, data: bytes) -> Path:
    path = vault_dir / "Pilot" / "Profile.md"
    path.write_bytes(data)
    return path


def test_profile_set_changes_only_the_target_line(cli, vault_dir: Path) -> None:
    path = _write(vault_dir, HAND_PROFILE)
    cli("profile", "set", "timezone", "Europe/Lisbon")
    assert path.read_bytes() == HAND_PROFILE.replace(b"timezone: UTC\n",
                                                     b"timezone: Europe/Lisbon\n")


def test_profile_set_keeps_block_list_style(cli, vault_dir: Path) -> None:
    path = _write(vault_dir, HAND_PROFILE)
    cli("profile", "set", "Languages", "en, pt, es")
    assert path.read_bytes() == HAND_PROFILE.replace(b"  - pt\n", b"  - pt\n  - es\n")


def test_profile_set_keeps_flow_list_style_and_quotes_hashes(cli, vault_dir: Path) -> None:
    path = _write(vault_dir, HAND_PROFILE)
    cli("profile", "set", "tags", "me, #trader")
    assert path.read_bytes() == HAND_PROFILE.replace(b"[me, profile]", b'[me, "#trader"]')


def test_profile_set_new_key_goes_before_the_closing_delimiter(cli, vault_dir: Path) -> None:
    path = _write(vault_dir, HAND_PROFILE)
    cli("profile", "set", "answer_style", "yes")
    assert path.read_bytes() == HAND_PROFILE.replace(b"010\n---\n",
                                                     b'010\nanswer_style: "yes"\n---\n')


def test_profile_show_reads_values_without_retyping(cli, vault_dir: Path) -> None:
    _write(vault_dir, HAND_PROFILE)
    data = json.loads(cli("profile", "show", "--json").stdout)
    props = data["properties"]
    assert props["reply"] == "no" and props["favourite_number"] == "010"
    assert props["languages"] == ["en", "pt"]
    assert data["lines"]["timezone"] == 4
    assert "I trade small amounts" in data["prose"]


def test_an_unknown_timezone_is_refused_and_the_file_is_unchanged(cli, vault_dir: Path) -> None:
    path = _write(vault_dir, HAND_PROFILE)
    res = cli("profile", "set", "timezone", "Mars/Olympus", expect=1)
    assert "Mars/Olympus" in res.stderr and "Profile.md" in res.stderr
    assert path.read_bytes() == HAND_PROFILE


def test_profile_set_refuses_a_profile_with_duplicate_keys(cli, vault_dir: Path) -> None:
    bad = b"---\nname: a\nName: b\n---\n"
    path = _write(vault_dir, bad)
    res = cli("profile", "set", "name", "c", expect=1)
    assert "duplicate" in res.stderr
    assert path.read_bytes() == bad


def test_profile_timezone_defaults_to_utc(vault, vault_dir: Path) -> None:
    _write(vault_dir, b"# no properties\n")
    assert vault.profile.timezone().utcoffset(None).total_seconds() == 0
