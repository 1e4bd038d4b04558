"""Two principals recording the same trade hash: each keeps its own `trade` event.

The journal is shared by every principal of a vault, and its readers, `doctor --fix` and
the merges of git clones settle duplicates by event id. A trade's event id comes from its
hash, so the same hash recorded by two principals must still give two different events,
and journals written before event ids were made per principal (both events under the bare
hash) must still read as two events."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from memvault import Vault
from memvault.services.setup import init_vault
from tests.conftest import Cli
from tests.git_helpers import bare_repo, clone, git, use_git_identity
from tests.test_sync_plain_git import plain_sync
from tests.trade_helpers import START, make_trade

ALICE = "0xa11ce0000000000000000000000000000000a11ce"
BOB = "0xb0b000000000000000000000000000000000b0b"
EVENTS = ".memvault/events.jsonl"


def trade_events(root: Path) -> list[dict[str, Any]]:
    lines = (root / EVENTS).read_text("utf-8").splitlines()
    return [ev for ev in map(json.loads, lines) if ev.get("type") == "trade"]


def record(root: Path, scope: str, trade: dict[str, Any]) -> None:
    out = Cli(root)("--scope", scope, "trade", "record", "-", "--json",
                    input=json.dumps(trade))
    assert json.loads(out.stdout)["recorded"] == 1, out.stdout


def observed(root: Path, scope: str) -> list[str]:
    """The trades a principal's inference rests on (read from the journal)."""
    return [ob.event_id for ob in Vault.open(root, scope=scope).learning.observations()]


def test_the_same_hash_as_two_principals_survives_a_merge_of_two_clones(
        tmp_path: Path, monkeypatch) -> None:
    use_git_identity(monkeypatch)
    bare = bare_repo(tmp_path)
    a = clone(bare, tmp_path / "a")
    init_vault(a, trading=True)
    Cli(a)("sync", "--setup")
    Cli(a)("sync")
    b = clone(bare, tmp_path / "b")  # a clone that never ran setup (union merge only)
    h = make_trade(1, START)["hash"]

    record(a, "alice", make_trade(1, START, wallet=ALICE))
    record(b, "bob", make_trade(1, START, wallet=BOB))
    Cli(a)("sync")
    plain_sync(b)  # git's union merge of the two journals
    Cli(a)("sync")  # the merge driver, the other way
    for root in (a, b):
        Cli(root)("doctor", "--fix", expect=None)  # settles what a merge held twice
        events = trade_events(root)
        assert sorted((ev["scope"], ev["trade"]["wallet"]) for ev in events) == [
            ("alice", ALICE), ("bob", BOB)], events
        assert len({ev["id"] for ev in events}) == 2  # one event id per principal
        assert observed(root, "alice") == [h] and observed(root, "bob") == [h]
        every = Vault.open(root).events.events(type_prefix="trade", all_scopes=True)
        assert sorted(ev["scope"] for ev in every) == ["alice", "bob"]
    assert git(a, "rev-parse", "HEAD") == git(b, "rev-parse", "HEAD")


def test_a_journal_written_with_bare_hash_ids_keeps_both_principals(vault_dir: Path) -> None:
    """Before ids were per principal, both events carried the bare hash: readers and
    `doctor --fix` must still see two events, and recording again changes nothing."""
    h = make_trade(1, START)["hash"]
    record(vault_dir, "alice", make_trade(1, START, wallet=ALICE))
    record(vault_dir, "bob", make_trade(1, START, wallet=BOB))
    path = vault_dir / EVENTS
    lines = path.read_text("utf-8").splitlines(keepends=True)
    old = []
    for ln in lines:
        ev = json.loads(ln)
        if ev.get("type") == "trade":
            ln = json.dumps({**ev, "id": h}, ensure_ascii=False, separators=(",", ":")) + "\n"
        old.append(ln)
    path.write_text("".join(old), "utf-8")

    fixed = Cli(vault_dir)("doctor", "--fix", expect=None)
    assert "held twice" not in fixed.stdout + fixed.stderr
    assert sorted(ev["scope"] for ev in trade_events(vault_dir)) == ["alice", "bob"]
    assert observed(vault_dir, "alice") == [h] and observed(vault_dir, "bob") == [h]
    every = Vault.open(vault_dir).events.read_all()
    assert sorted(ev["scope"] for ev in every if ev.get("type") == "trade") == ["alice", "bob"]
    again = Cli(vault_dir)("--scope", "bob", "trade", "record", "-", "--json",
                           input=json.dumps(make_trade(1, START, wallet=BOB)))
    assert json.loads(again.stdout)["recorded"] == 0
    assert len(trade_events(vault_dir)) == 2


def test_an_idempotency_key_is_each_principals_own(vault_dir: Path) -> None:
    """An app passing the same request id as feedback key for two users records both;
    a retry by the same user records nothing new."""
    facts = {}
    for scope in ("alice", "bob"):
        facts[scope] = Vault.open(vault_dir, scope=scope).memory.remember(
            "I prefer short answers", "preference").fact.id
    for scope in ("alice", "bob", "bob"):
        Cli(vault_dir)("--scope", scope, "feedback", facts[scope], "used",
                       "--event-id", "req-1")
    lines = (vault_dir / EVENTS).read_text("utf-8").splitlines()
    feedback = [ev for ev in map(json.loads, lines) if ev.get("type") == "feedback"]
    assert sorted((ev["scope"], ev["record"]) for ev in feedback) == [
        ("alice", facts["alice"]), ("bob", facts["bob"])]
