"""Inference from validated trades: thresholds hold exactly at their edges."""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path

import pytest

from memvault import Vault
from memvault.core.inference import Observation, count_windows, infer_candidates
from tests.trade_helpers import make_trade

UTC = dt.UTC


def _at(day: int, hour: int, minute: int = 0) -> dt.datetime:
    return dt.datetime(2026, 11, day, hour, minute, tzinfo=UTC)


def _record(vault: Vault, times: list[dt.datetime], base: int = 1000, **over) -> None:  # type: ignore[no-untyped-def]
    for n, when in enumerate(times):
        vault.trades.record([make_trade(base + n, when, **over)])


def _inbox_texts(vault: Vault) -> list[str]:
    return [p.text for p in vault.proposals.list()]


def test_windows_are_anchored_ten_minutes() -> None:
    assert count_windows([0, 9 * 60]) == 1
    assert count_windows([0, 10 * 60]) == 2
    assert count_windows([0, 11 * 60]) == 2
    assert count_windows([0, 5 * 60, 9 * 60, 14 * 60]) == 2  # anchored, not chained
    assert count_windows([]) == 0


def test_two_trades_are_not_enough_and_three_are(vault: Vault) -> None:
    _record(vault, [_at(20, 9), _at(21, 9)])
    assert _inbox_texts(vault) == []
    _record(vault, [_at(20, 9), _at(21, 9), _at(22, 9)])
    assert _inbox_texts(vault) == ["Frequently trades ETH/USDC"]
    proposal = vault.proposals.list()[0]
    assert proposal.meta["src"] == "inference" and proposal.authority == "inferred"
    assert len(proposal.meta["evidence"].split(",")) == 3


def test_trades_nine_minutes_apart_count_once(vault: Vault) -> None:
    _record(vault, [_at(20, 23, 50), _at(20, 23, 59), _at(21, 0, 8)])  # 2 windows
    assert _inbox_texts(vault) == []


def test_trades_eleven_minutes_apart_count_separately(vault: Vault) -> None:
    _record(vault, [_at(20, 23, 45), _at(20, 23, 56), _at(21, 0, 7)])  # 3 windows, 2 days
    assert _inbox_texts(vault) == ["Frequently trades ETH/USDC"]


def test_one_calendar_day_is_not_enough_and_two_are(vault: Vault) -> None:
    _record(vault, [_at(20, 9), _at(20, 12), _at(20, 15)])
    assert _inbox_texts(vault) == []
    _record(vault, [_at(21, 9)], base=1100)  # the same trades plus a second day
    assert _inbox_texts(vault) == ["Frequently trades ETH/USDC"]


def test_calendar_days_follow_the_profile_time_zone(vault: Vault) -> None:
    vault.profile.set("timezone", "Asia/Tokyo")  # UTC+9: 23:50 and 00:10 UTC are one day
    _record(vault, [_at(20, 23, 30), _at(21, 0, 10), _at(21, 5)])
    assert _inbox_texts(vault) == []


def test_duplicate_event_ids_count_once(vault: Vault, vault_dir: Path) -> None:
    _record(vault, [_at(20, 9), _at(21, 9)])
    events = vault_dir / ".memvault" / "events.jsonl"
    lines = events.read_text().splitlines()
    trade_line = next(ln for ln in lines if '"type":"trade"' in ln)
    events.write_text("\n".join(lines + [trade_line, trade_line]) + "\n")  # a bad merge
    assert vault.learning.run() == []
    assert _inbox_texts(vault) == []


def test_a_rejected_candidate_is_never_proposed_again(vault: Vault) -> None:
    _record(vault, [_at(20, 9), _at(21, 9), _at(22, 9)])
    (proposal,) = vault.proposals.list()
    vault.proposals.reject(proposal.id)
    _record(vault, [_at(23, 9), _at(24, 9)], base=1100)
    results = vault.learning.run()
    assert [r.status for r in results] == ["tombstoned"]
    assert _inbox_texts(vault) == []


def test_a_candidate_the_user_contradicted_is_not_proposed(vault: Vault) -> None:
    vault.memory.remember("I no longer trade ETH for USDC", category="other")
    _record(vault, [_at(20, 9), _at(21, 9), _at(22, 9)])
    assert _inbox_texts(vault) == []


def test_learning_off_proposes_nothing(vault: Vault, vault_dir: Path, cli) -> None:
    cfg = vault_dir / ".memvault" / "config.toml"
    cfg.write_text(cfg.read_text().replace("learning = true", "learning = false"))
    off = Vault.open(vault_dir)
    _record(off, [_at(20, 9), _at(21, 9), _at(22, 9)])
    assert _inbox_texts(off) == []
    assert json.loads(cli("learn", "--json").stdout) == {"learning": False, "results": []}


def test_learn_command_reports_and_is_idempotent(vault: Vault, vault_dir: Path, cli) -> None:
    cfg = vault_dir / ".memvault" / "config.toml"
    cfg.write_text(cfg.read_text().replace("learning = true", "learning = false"))
    _record(Vault.open(vault_dir), [_at(20, 9), _at(21, 9), _at(22, 9)])
    cfg.write_text(cfg.read_text().replace("learning = false", "learning = true"))
    out = json.loads(cli("learn", "--json").stdout)
    assert [r["status"] for r in out["results"]] == ["proposed"]
    inbox = (vault_dir / "Pilot" / "Inbox.md").read_bytes()
    out = json.loads(cli("learn", "--json").stdout)
    assert [r["status"] for r in out["results"]] == ["duplicate"]
    assert (vault_dir / "Pilot" / "Inbox.md").read_bytes() == inbox


def test_an_asset_is_proposed_when_it_spans_several_pairs() -> None:
    obs = [Observation(f"e{i}", 86400 * i, f"d{i}", "ETH", quote)
           for i, quote in enumerate(["USDC", "DAI", "USDT", "WBTC"])]
    texts = [c.text for c in infer_candidates(obs)]
    assert texts == ["Often trades ETH"]


def test_risk_profit_and_venue_preference_are_never_inferred(vault: Vault,
                                                            vault_dir: Path) -> None:
    journal = vault_dir / "Pilot" / "Journal" / "2026-11-20.md"
    journal.write_text("Huge profit again! I love risk. Uniswap is my favourite venue.\n")
    times = [_at(20 + d, h) for d in range(5) for h in (3, 9, 15, 21)]
    for n, when in enumerate(times):
        vault.trades.record([make_trade(
            2000 + n, when, venue="Uniswap", slippage_bps="450", value_usd="250000",
            amount_in="1", asset_in="USDC" if n % 2 else "ETH",
            asset_out="ETH" if n % 2 else "USDC", amount_out="99999")])
    texts = _inbox_texts(vault)
    assert texts == ["Frequently trades ETH/USDC"]
    for text in texts:
        assert re.fullmatch(r"(Frequently|Often) trades [A-Z0-9/]+", text)
        assert not re.search(r"risk|profit|uniswap|venue|slippage|large|conservative",
                             text, re.I)


@pytest.mark.parametrize("n", [2, 3])
def test_thresholds_on_pure_observations(n: int) -> None:
    obs = [Observation(f"e{i}", 3600 * 24 * i, f"2026-11-{20 + i}", "ETH", "USDC")
           for i in range(n)]
    assert len(infer_candidates(obs)) == (1 if n == 3 else 0)
