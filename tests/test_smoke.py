"""The installed command works end to end through a real subprocess."""

from __future__ import annotations

import json

from tests.conftest import run_memvault


def test_version_prints_the_package_version() -> None:
    from memvault import __version__

    out = run_memvault("--version")
    assert out.returncode == 0
    assert out.stdout.strip() == f"memvault {__version__}"


def test_remember_then_list_round_trip_in_a_subprocess(vault_dir) -> None:
    saved = run_memvault("--vault", str(vault_dir), "remember", "I drink tea, not coffee",
                         "--category", "preference", "--json")
    assert saved.returncode == 0, saved.stderr
    fact_id = json.loads(saved.stdout)["fact"]["id"]
    listed = run_memvault("--vault", str(vault_dir), "memory", "list", "--json")
    facts = json.loads(listed.stdout)["facts"]
    assert [f["id"] for f in facts] == [fact_id]
    assert facts[0]["text"] == "I drink tea, not coffee"


def test_unknown_id_is_a_one_line_error_with_exit_1(vault_dir) -> None:
    out = run_memvault("--vault", str(vault_dir), "memory", "show", "nope42")
    assert out.returncode == 1
    assert out.stderr.strip().splitlines() == [
        "error: Pilot/Memory.md: no fact with id 'nope42'"]


def test_usage_error_exits_2(vault_dir) -> None:
    out = run_memvault("--vault", str(vault_dir), "memory", "no-such-command")
    assert out.returncode == 2
