"""Two principals in one vault never see each other: search, the index, context, MCP,
trade records and error messages. Every check runs the real CLI in a subprocess or the
real MCP client against `memvault --scope bob serve`."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from memvault import Vault
from tests.conftest import run_memvault
from tests.mcp_helpers import ok, run
from tests.trade_helpers import START, make_trade

ALICE_WALLET = "0xa11ce0000000000000000000000000000000a11ce"
SECRET = "zebracorn"  # a word only alice's files and one shared note hold


@pytest.fixture
def two_principals(vault_dir: Path) -> Path:
    alice = Vault.open(vault_dir, scope="alice")
    alice.memory.remember(f"My {SECRET} savings account is at Banco Azul", "identity")
    alice.proposals.propose(f"I keep my {SECRET} keys in a drawer", "other")
    alice.profile.set("name", f"Alice {SECRET.title()}")
    alice.policy.set("max_trade_usd", "250")
    alice.trades.record([make_trade(1, START, wallet=ALICE_WALLET, venue=f"{SECRET}swap")])
    Vault.open(vault_dir, scope="bob").memory.remember("I like oolong tea", "preference")
    (vault_dir / "Notes").mkdir()
    (vault_dir / "Notes" / "Zoo.md").write_text(f"# Zoo\n\nA {SECRET} is not a real "
                                                "animal.\n", encoding="utf-8")
    return vault_dir


def _bob(root: Path, *args: str) -> Any:
    proc = run_memvault("--vault", str(root), "--scope", "bob", *args, timeout=120)
    return proc


def _paths(hits: list[dict[str, Any]]) -> list[str]:
    return [h["path"] for h in hits]


def test_bob_search_finds_shared_notes_only(two_principals: Path) -> None:
    proc = _bob(two_principals, "search", SECRET, "--json")
    assert proc.returncode == 0, proc.stderr
    assert _paths(json.loads(proc.stdout)["results"]) == ["Notes/Zoo.md"]
    # a path glob or a tag cannot reach into another principal's home either
    proc = _bob(two_principals, "search", SECRET, "--path", "Pilot/*", "--json")
    assert json.loads(proc.stdout)["results"] == []
    proc = _bob(two_principals, "search", "--memory", SECRET, "--json")
    assert json.loads(proc.stdout)["results"] == []
    # a misspelt name goes through the fuzzy path: still nothing of alice's
    proc = _bob(two_principals, "search", "Alice Zebracorm", "--json")
    assert not [p for p in _paths(json.loads(proc.stdout)["results"]) if "alice" in p.lower()]


def test_default_principal_does_not_see_scoped_homes(two_principals: Path) -> None:
    proc = run_memvault("--vault", str(two_principals), "search", SECRET, "--json")
    assert proc.returncode == 0, proc.stderr
    assert _paths(json.loads(proc.stdout)["results"]) == ["Notes/Zoo.md"]


def test_alice_still_finds_her_own_notes(two_principals: Path) -> None:
    proc = run_memvault("--vault", str(two_principals), "--scope", "alice", "search",
                        SECRET, "--json", "--limit", "20")
    paths = _paths(json.loads(proc.stdout)["results"])
    assert "Notes/Zoo.md" in paths
    assert any(p.startswith("Pilot/scopes/alice/") for p in paths)


def test_bob_context_index_and_doctor_hold_nothing_of_alice(two_principals: Path) -> None:
    (two_principals / "Pilot" / "scopes" / "alice" / "Broken.md").write_bytes(b"\xff\xfe\x00")
    outputs = []
    for args in (("context", "--json"), ("index", "status", "--json"), ("doctor", "--json"),
                 ("memory", "list", "--all", "--json"), ("proposals", "list", "--json"),
                 ("policy", "show", "--json"), ("profile", "show", "--json"),
                 ("trade", "list", "--json")):
        proc = _bob(two_principals, *args)
        assert proc.returncode in (0, 1), (args, proc.stderr)
        outputs.append(proc.stdout + proc.stderr)
    everything = "\n".join(outputs)
    assert SECRET not in everything.lower()
    assert "scopes/alice" not in everything
    assert ALICE_WALLET not in everything
    assert "oolong" in everything  # bob's own memory is there


def test_bob_recording_alices_trade_reveals_nothing(two_principals: Path) -> None:
    mine = make_trade(1, START, wallet="0xb0b000000000000000000000000000000000b0b",
                      venue="Uniswap")
    proc = run_memvault("--vault", str(two_principals), "--scope", "bob", "trade", "record",
                        "-", "--json", input=json.dumps(mine), timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert ALICE_WALLET not in proc.stdout + proc.stderr
    bob_note = two_principals / "Pilot" / "scopes" / "bob" / "Trades" / f"{mine['hash']}.md"
    assert "0xb0b0" in bob_note.read_text()
    # a second, different record of the same hash conflicts with bob's own data only
    again = dict(mine, amount_out="1.00")
    proc = run_memvault("--vault", str(two_principals), "--scope", "bob", "trade", "record",
                        "-", input=json.dumps(again), timeout=120)
    assert proc.returncode == 1
    assert ALICE_WALLET not in proc.stderr and SECRET not in proc.stderr
    assert "1708.35" in proc.stderr  # bob's own earlier amount is what it names
    alice_note = two_principals / "Pilot" / "scopes" / "alice" / "Trades" / f"{mine['hash']}.md"
    assert ALICE_WALLET in alice_note.read_text()  # alice's record is untouched


def _stdio(root: Path, scope: str) -> Any:
    from mcp import StdioServerParameters

    env = dict(os.environ)
    src = str(Path(__file__).resolve().parents[1] / "src")
    env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    return StdioServerParameters(command=sys.executable, env=env, args=[
        "-m", "memvault", "--vault", str(root), "--scope", scope, "serve"])


def test_mcp_server_scoped_to_bob_sees_nothing_of_alice(two_principals: Path) -> None:
    seen: dict[str, Any] = {}

    async def session() -> None:
        import anyio
        from mcp import ClientSession
        from mcp.client.stdio import stdio_client

        with anyio.fail_after(90):
            async with stdio_client(_stdio(two_principals, "bob")) as (read, write):
                async with ClientSession(read, write) as client:
                    await client.initialize()
                    seen["search"] = await ok(client, "memory_search",
                                              {"query": SECRET, "limit": 20})
                    seen["fuzzy"] = await ok(client, "memory_search",
                                             {"query": "Alice Zebracorm", "limit": 20})
                    seen["context"] = await ok(client, "memory_context", {})
                    seen["policy"] = await ok(client, "policy_show", {})
                    seen["profile"] = await ok(client, "profile_show", {})
                    seen["proposals"] = await ok(client, "proposal_list", {})

    run(session)
    assert _paths(seen["search"]["notes"]) == ["Notes/Zoo.md"]
    assert seen["search"]["memory"] == []
    assert "alice" not in json.dumps(seen["fuzzy"]["notes"]).lower()
    for name in ("search", "fuzzy"):
        seen[name].pop("notes")  # the shared note rightly holds the word,
        seen[name].pop("query")  # and so does the query
    dumped = json.dumps(seen)
    assert SECRET not in dumped.lower() and "scopes/alice" not in dumped, dumped
    assert ALICE_WALLET not in dumped
    assert seen["policy"]["limits"] == {}  # alice's 250 is hers
    assert "oolong" in json.dumps(seen["context"])


def test_cached_fuzzy_names_are_per_principal(two_principals: Path) -> None:
    """The titles kept for typo-tolerant search are filtered per principal, also when
    one index connection answers two principals in turn."""
    from memvault.index.query import search_notes

    (two_principals / "Pilot" / "scopes" / "alice" / "Zebracorn Plans.md").write_text(
        "# Plans\n\nnothing to see\n", encoding="utf-8")
    alice = Vault.open(two_principals, scope="alice")
    bob = Vault.open(two_principals, scope="bob")
    alice.search.refresh()
    conn = alice.search.store().connection()
    as_alice = search_notes(conn, "Zebracorn Plams", visible=alice.layout.can_see)
    as_bob = search_notes(conn, "Zebracorn Plams", visible=bob.layout.can_see)
    assert "Pilot/scopes/alice/Zebracorn Plans.md" in _paths([h.to_dict() for h in as_alice])
    assert not [h.path for h in as_bob if "alice" in h.path.lower()]
    again = search_notes(conn, "Zebracorn Plams", visible=alice.layout.can_see)
    assert [h.path for h in again] == [h.path for h in as_alice]


def test_a_misspelt_tag_finds_shared_notes_never_another_principals(vault_dir: Path) -> None:
    """The fuzzy fallback offers tag names; the notes behind a matched tag are read
    then, and only those the asking principal may see."""
    Vault.open(vault_dir, scope="alice").memory.remember("I like rooibos", "preference")
    home = vault_dir / "Pilot" / "scopes" / "alice"
    (home / "Diary.md").write_text("---\ntags: [marmalade2026]\n---\n# Diary\n\nprivate\n",
                                   encoding="utf-8")
    (vault_dir / "Notes").mkdir()
    (vault_dir / "Notes" / "Jam.md").write_text("---\ntags: [marmalade2026]\n---\n# Jam\n\n"
                                                "shared\n", encoding="utf-8")
    proc = _bob(vault_dir, "search", "marmelade2026", "--json")
    assert proc.returncode == 0, proc.stderr
    hits = json.loads(proc.stdout)["results"]
    assert _paths(hits) == ["Notes/Jam.md"]
    assert hits[0]["match"] == "fuzzy tag"
    proc = run_memvault("--vault", str(vault_dir), "--scope", "alice", "search",
                        "marmelade2026", "--json", timeout=120)
    assert sorted(_paths(json.loads(proc.stdout)["results"])) == [
        "Notes/Jam.md", "Pilot/scopes/alice/Diary.md"]
