"""`memvault trade record`: validated executions become notes, all or nothing."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
import yaml

from memvault.core.frontmatter import parse_frontmatter
from tests.trade_helpers import START, fifty_trades, make_trade, snapshot, trade_hash


def _no_learning(vault_dir: Path) -> None:
    cfg = vault_dir / ".memvault" / "config.toml"
    cfg.write_text(cfg.read_text().replace("learning = true", "learning = false"))


def test_fifty_trades_over_ten_days_make_fifty_notes_and_ten_journal_days(cli, vault_dir,
                                                                          tmp_path) -> None:
    for i, trade in enumerate(fifty_trades()):
        src = tmp_path / f"t{i}.json"
        src.write_text(json.dumps(trade))
        cli("trade", "record", str(src))
    home = vault_dir / "Pilot"
    assert len(list((home / "Trades").glob("*.md"))) == 50
    assert len(list((home / "Reflections").glob("*.md"))) == 50
    days = sorted((home / "Journal").glob("*.md"))
    assert [d.stem for d in days] == [f"2026-11-{d:02d}" for d in range(20, 30)]
    lines = [ln for d in days for ln in d.read_text().split("\n") if "[[Trades/" in ln]
    assert len(lines) == 50
    events = [json.loads(ln) for ln in (vault_dir / ".memvault/events.jsonl").read_text()
              .splitlines() if '"type":"trade"' in ln]
    assert sorted(e["id"] for e in events) == sorted(t["hash"] for t in fifty_trades())
    before = snapshot(vault_dir)
    for i in range(50):
        res = cli("trade", "record", str(tmp_path / f"t{i}.json"))
        assert "already recorded" in res.stdout
    assert snapshot(vault_dir) == before


def test_a_batch_as_json_array_or_json_lines_is_one_unit(cli, vault_dir) -> None:
    trades = fifty_trades()[:10]
    out = json.loads(cli("trade", "record", "-", "--json", input=json.dumps(trades)).stdout)
    assert out["recorded"] == 10
    before = snapshot(vault_dir)
    lines = "\n".join(json.dumps(t) for t in trades) + "\n"
    out = json.loads(cli("trade", "record", "-", "--json", input=lines).stdout)
    assert out["recorded"] == 0 and out["already_recorded"] == 10
    assert snapshot(vault_dir) == before


def test_a_missing_metric_is_unavailable_and_nothing_else_is(cli, vault_dir, tmp_path) -> None:
    trade = make_trade(1, START, fill_price=None)
    src = tmp_path / "t.json"
    src.write_text(json.dumps(trade))
    cli("trade", "record", str(src))
    note = (vault_dir / "Pilot" / "Trades" / f"{trade['hash']}.md").read_bytes()
    values = parse_frontmatter(note).values
    assert values["fill_price"] == "unavailable"
    assert [k for k, v in values.items() if v == "unavailable"] == ["fill_price"]
    assert values["amount_in"] == "0.50" and values["slippage_bps"] == "12"
    assert b"- Fill price: unavailable" in note
    refl = (vault_dir / "Pilot" / "Reflections" / f"{trade['hash']}.md").read_bytes()
    assert parse_frontmatter(refl).values["unavailable"] == ["fill_price"]
    assert b"Unavailable: fill price." in refl


def test_trade_note_frontmatter_is_yaml_safe_for_1_1_readers_too(cli, vault_dir, tmp_path):
    trade = make_trade(2, START, hash="0x" + "0" * 8 + "1e3" + "5" * 53, asset_in="NO",
                       amount_in="1.10")
    src = tmp_path / "t.json"
    src.write_text(json.dumps(trade))
    cli("trade", "record", str(src))
    note = (vault_dir / "Pilot" / "Trades" / f"{trade['hash']}.md").read_text()
    loaded = yaml.safe_load(note.split("---\n")[1])  # a YAML 1.1 reader
    assert loaded["hash"] == trade["hash"] and loaded["wallet"] == trade["wallet"]
    assert loaded["amount_in"] == "1.10" and loaded["asset_in"] == "NO"
    assert loaded["date"] == dt.date(2026, 11, 20)
    assert "date: 2026-11-20\n" in note


def test_links_use_safe_names_for_tokens_and_venues(cli, vault_dir, tmp_path) -> None:
    trade = make_trade(3, START, asset_out="CON", venue="Curve: 3pool?")
    src = tmp_path / "t.json"
    src.write_text(json.dumps(trade))
    cli("trade", "record", str(src))
    note = (vault_dir / "Pilot" / "Trades" / f"{trade['hash']}.md").read_text()
    assert "[[Tokens/CON-|CON]]" in note and "[[Tokens/ETH]]" in note
    assert "[[Venues/Curve- 3pool|Curve: 3pool?]]" in note
    assert "[[Journal/2026-11-20]]" in note


@pytest.mark.parametrize("bad", ["../../etc/passwd", "CON", "a/b", "0x12", "0xZZ" + "1" * 20,
                                 "", "0x" + "a" * 200, "..\\..\\x" + "a" * 10])
def test_bad_hashes_are_refused_and_nothing_is_written(cli, vault_dir, bad) -> None:
    before = snapshot(vault_dir)
    res = cli("trade", "record", "-", input=json.dumps(make_trade(1, START, hash=bad)),
              expect=1)
    assert "hash" in res.stderr and "nothing was written" in res.stderr
    assert snapshot(vault_dir) == before


@pytest.mark.parametrize("status", ["pending", "failed", "confirmed", "", None])
def test_a_trade_that_is_not_validated_is_refused(cli, vault_dir, status) -> None:
    before = snapshot(vault_dir)
    res = cli("trade", "record", "-", input=json.dumps(make_trade(1, START, status=status)),
              expect=1)
    assert "status" in res.stderr
    assert snapshot(vault_dir) == before


def test_one_invalid_trade_in_a_batch_refuses_the_whole_batch(cli, vault_dir) -> None:
    trades = fifty_trades()[:3]
    trades[2]["fill_prise"] = "1"  # a typo is refused, not silently "unavailable"
    before = snapshot(vault_dir)
    res = cli("trade", "record", "-", input=json.dumps(trades), expect=1)
    assert "trade 3 of 3: fill_prise" in res.stderr
    assert snapshot(vault_dir) == before


def test_same_hash_with_different_data_is_an_error(cli, vault_dir) -> None:
    cli("trade", "record", "-", input=json.dumps(make_trade(1, START)))
    before = snapshot(vault_dir)
    res = cli("trade", "record", "-", input=json.dumps(make_trade(1, START, amount_out="1")),
              expect=1)
    assert "different data" in res.stderr and "amount_out" in res.stderr
    assert snapshot(vault_dir) == before


def test_a_failure_part_way_leaves_none_of_the_notes(cli, vault_dir) -> None:
    refl = vault_dir / "Pilot" / "Reflections"
    refl.rmdir()
    refl.write_text("I am a file, not a folder\n")
    before = snapshot(vault_dir)
    trade = make_trade(1, START)
    res = cli("trade", "record", "-", input=json.dumps(trade), expect=1)
    assert "Reflections" in res.stderr
    assert snapshot(vault_dir) == before
    assert not list((vault_dir / "Pilot").rglob(f"{trade['hash']}*"))
    assert not (vault_dir / "Pilot" / "Journal" / "2026-11-20.md").exists()


def test_a_failure_part_way_in_the_journal_keeps_the_users_day_note(cli, vault_dir) -> None:
    day = vault_dir / "Pilot" / "Journal" / "2026-11-20.md"
    day.write_bytes(b"my own notes\r\n")
    (vault_dir / "Pilot" / "Trades").rmdir()
    (vault_dir / "Pilot" / "Trades").write_text("file")
    before = snapshot(vault_dir)
    cli("trade", "record", "-", input=json.dumps(make_trade(1, START)), expect=1)
    assert snapshot(vault_dir) == before


def test_the_users_journal_lines_are_untouched(cli, vault_dir) -> None:
    day = vault_dir / "Pilot" / "Journal" / "2026-11-20.md"
    original = b"---\r\nmood: calm\r\n---\r\n# My day\r\n\r\nWrote this myself.\r\n\r\n- a todo"
    day.write_bytes(original)
    cli("trade", "record", "-", input=json.dumps(make_trade(1, START)))
    after = day.read_bytes()
    assert after.startswith(original + b"\r\n- 09:00 \xc2\xb7 0.50 ETH")
    assert after.count(b"\n") == original.count(b"\n") + 1 and not after.endswith(b"\n")


def test_dates_follow_the_profile_time_zone(cli, vault_dir) -> None:
    cli("profile", "set", "timezone", "America/New_York")
    trade = make_trade(1, dt.datetime(2026, 11, 25, 3, 30, tzinfo=dt.UTC))
    cli("trade", "record", "-", input=json.dumps(trade))
    note = (vault_dir / "Pilot" / "Trades" / f"{trade['hash']}.md").read_text()
    assert "date: 2026-11-24\n" in note and "local_time: 2026-11-24T22:30:00\n" in note
    assert "timestamp: \"2026-11-25T03:30:00Z\"" in note
    journal = (vault_dir / "Pilot" / "Journal" / "2026-11-24.md").read_text()
    assert "- 22:30 · 0.50 ETH" in journal


def test_trade_show_list_and_journal_show(cli, vault_dir) -> None:
    _no_learning(vault_dir)
    cli("trade", "record", "-", input=json.dumps(fifty_trades()[:10]))
    h = trade_hash(7)
    shown = json.loads(cli("trade", "show", h[:10], "--json").stdout)
    assert shown["hash"] == h and shown["properties"]["status"] == "validated"
    listed = json.loads(cli("trade", "list", "--since", "2026-11-21", "--json").stdout)
    assert [t["hash"] for t in listed["trades"]] == [trade_hash(n) for n in range(5, 10)]
    day = json.loads(cli("journal", "show", "2026-11-20", "--json").stdout)
    assert day["trades"] == [trade_hash(n) for n in range(5)]
    assert "09:00" in cli("journal", "show", "2026-11-20").stdout
    cli("trade", "show", "0xdeadbeef00", expect=1)
    cli("trade", "show", "../../etc/passwd", expect=1)
    cli("journal", "show", "yesterday", expect=1)


def test_an_unknown_profile_time_zone_fails_closed_naming_the_line(cli, vault_dir) -> None:
    profile = vault_dir / "Pilot" / "Profile.md"
    profile.write_text(profile.read_text().replace("timezone: UTC", "timezone: Mars/Base"))
    before = snapshot(vault_dir)
    res = cli("trade", "record", "-", input=json.dumps(make_trade(1, START)), expect=1)
    assert "Pilot/Profile.md" in res.stderr and "Mars/Base" in res.stderr
    assert "(line 3)" in res.stderr
    assert snapshot(vault_dir) == before


def test_two_processes_recording_at_once_lose_no_journal_line(vault_dir) -> None:
    from concurrent.futures import ThreadPoolExecutor

    from tests.conftest import run_memvault

    batches = [[make_trade(100 * p + n, START + dt.timedelta(minutes=7 * n + p))
                for n in range(5)] for p in range(2)]

    def record(batch):  # type: ignore[no-untyped-def]
        return run_memvault("--vault", str(vault_dir), "trade", "record", "-", "--no-learn",
                            input=json.dumps(batch))

    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(record, batches))
    assert all(r.returncode == 0 for r in results), [r.stderr for r in results]
    journal = (vault_dir / "Pilot" / "Journal" / "2026-11-20.md").read_text()
    assert journal.count("[[Trades/") == 10
    events = (vault_dir / ".memvault" / "events.jsonl").read_text()
    assert events.count('"type":"trade"') == 10


def test_a_binary_day_note_is_refused_and_nothing_is_written(cli, vault_dir) -> None:
    day = vault_dir / "Pilot" / "Journal" / "2026-11-20.md"
    day.write_bytes(b"\xff\xfe# d\x00a\x00y\x00")  # UTF-16
    before = snapshot(vault_dir)
    res = cli("trade", "record", "-", input=json.dumps(make_trade(1, START)), expect=1)
    assert "Journal/2026-11-20.md" in res.stderr and "UTF-16" in res.stderr
    assert snapshot(vault_dir) == before
