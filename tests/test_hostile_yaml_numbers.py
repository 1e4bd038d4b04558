"""Hostile files fail fast: YAML alias bombs and deep nesting in a note, Profile.md or
Policy.md; huge numbers in Policy.md; impossible trade times. Each case runs the real CLI
(or the real MCP client) with a time and memory limit, leaves the vault unchanged, and
the next command works."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from memvault.core.yaml_limits import MAX_ALIAS_NODES, YamlLimitError, check_limits
from tests.hostile import one_line_error, run_limited, time_limit, vault_files
from tests.mcp_helpers import in_process, ok, run
from tests.trade_helpers import START, make_trade


def alias_bomb(levels: int = 9, width: int = 10) -> str:
    """YAML whose last key stands for width**levels values (10**9 by default)."""
    lines = ["l0: &l0 [" + ", ".join(["lol"] * width) + "]"]
    for n in range(1, levels):
        lines.append(f"l{n}: &l{n} [" + ", ".join([f"*l{n - 1}"] * width) + "]")
    return "\n".join(lines) + "\n"


DEEP = "deep: " + "[" * 500 + "]" * 500 + "\n"
BLOCK_DEEP = "deep:\n" + "".join("  " * i + "- \n" for i in range(1, 300)) + "  " * 300 + \
    "- x\n"


def _frontmatter(yaml_text: str, body: str = "") -> str:
    return "---\n" + yaml_text + "---\n" + body


# -- the limits themselves ----------------------------------------------------------------


@pytest.mark.parametrize("text", [alias_bomb(), alias_bomb(levels=30, width=2), DEEP,
                                  BLOCK_DEEP, "a: &a [*a]\n", "x: " + "y" * 300_000])
def test_check_limits_refuses_in_milliseconds(text: str) -> None:
    started = time.monotonic()
    with pytest.raises(YamlLimitError):
        check_limits(text)
    assert time.monotonic() - started < 1.0


def test_ordinary_yaml_and_modest_aliases_pass() -> None:
    check_limits("title: A note\ntags: [a, b]\nbase: &b {x: 1}\nother: *b\n")
    check_limits(alias_bomb(levels=3, width=10))  # 1,110 values: fine
    with pytest.raises(YamlLimitError, match="alias bomb"):
        check_limits(alias_bomb(levels=5, width=10))  # 111,110 values > 10,000
    assert MAX_ALIAS_NODES == 10_000


# -- a bomb in a note ------------------------------------------------------------------------


def test_alias_bomb_in_a_note_never_stalls_search_index_or_doctor(vault_dir: Path) -> None:
    notes = vault_dir / "Notes"
    notes.mkdir()
    (notes / "Bomb.md").write_text(_frontmatter(alias_bomb(levels=5, width=100),
                                                "explosive body text\n"))
    (notes / "Deep.md").write_text(_frontmatter(BLOCK_DEEP, "deeply nested words\n"))
    (notes / "Fine.md").write_text(_frontmatter("tags: [calm]\n", "calm body\n"))
    before = vault_files(vault_dir)
    for args in (("index", "rebuild"), ("search", "explosive", "--json"), ("doctor",),
                 ("search", "calm", "--tag", "calm", "--json"), ("search", "deeply", "--json")):
        proc = run_limited(vault_dir, *args)
        assert proc.returncode in (0, 1) and "Traceback" not in proc.stderr, proc.stderr
    found = json.loads(run_limited(vault_dir, "search", "explosive", "--json").stdout)
    assert [h["path"] for h in found["results"]] == ["Notes/Bomb.md"]  # still searchable
    assert vault_files(vault_dir) == before
    assert run_limited(vault_dir, "remember", "still working").returncode == 0


# -- a bomb or deep nesting in Policy.md or Profile.md ---------------------------------------


@pytest.mark.parametrize("yaml_text", [alias_bomb(), "max_trade_usd: 10\n" + DEEP,
                                       "allowed_tokens: " + "[" * 200 + "]" * 200 + "\n"],
                         ids=["alias-bomb", "deep-flow", "deep-list"])
def test_over_limit_policy_fails_closed_in_one_line(vault_dir: Path, yaml_text: str) -> None:
    policy = vault_dir / "Pilot" / "Policy.md"
    policy.write_text(_frontmatter(yaml_text, "# Policy\n"))
    before = vault_files(vault_dir)
    one_line_error(run_limited(vault_dir, "policy", "show"), "Pilot/Policy.md", "limits")
    check = run_limited(vault_dir, "policy", "check")
    assert check.returncode == 1 and check.stderr.count("\n") == 1, check.stderr
    assert check.stderr.startswith("Pilot/Policy.md: ") and "limits" in check.stderr
    one_line_error(run_limited(vault_dir, "policy", "set", "max_trade_usd", "5"),
                   "Pilot/Policy.md")
    proc = run_limited(vault_dir, "context", "--json")
    assert proc.returncode == 0, proc.stderr
    block = json.loads(proc.stdout)
    assert block["policy"]["state"] == "invalid" and block["policy"]["limits"] is None
    assert "limits are unknown" in block["text"] and len(block["text"]) < 2000
    assert vault_files(vault_dir) == before
    assert run_limited(vault_dir, "remember", "next command works").returncode == 0


def test_over_limit_policy_over_mcp_reports_and_never_hangs(vault_dir: Path) -> None:
    (vault_dir / "Pilot" / "Policy.md").write_text(_frontmatter(alias_bomb()))

    async def body() -> dict:
        import anyio

        with anyio.fail_after(30):
            async with in_process(vault_dir) as client:
                shown = await ok(client, "policy_show")
                context = await ok(client, "memory_context", {})
                return {"policy": shown, "context": context}

    seen = run(body)
    assert seen["policy"]["valid"] is False and seen["policy"]["limits"] == {}
    assert "alias bomb" in seen["policy"]["problem"]
    assert seen["context"]["policy"]["state"] == "invalid"


def test_alias_bomb_in_profile_fails_closed_for_trades(vault_dir: Path) -> None:
    profile = vault_dir / "Pilot" / "Profile.md"
    profile.write_text(_frontmatter("timezone: Europe/Lisbon\n" + alias_bomb(), "Me.\n"))
    before = vault_files(vault_dir)
    proc = run_limited(vault_dir, "profile", "show", "--json")
    assert proc.returncode == 0, proc.stderr
    shown = json.loads(proc.stdout)
    assert shown["properties"] == {} and "alias bomb" in shown["readonly_reason"]
    one_line_error(run_limited(vault_dir, "trade", "record", "-",
                               input=json.dumps(make_trade(1, START))),
                   "Pilot/Profile.md", "time zone")
    one_line_error(run_limited(vault_dir, "profile", "set", "name", "Ana"), "Pilot/Profile.md")
    assert run_limited(vault_dir, "context").returncode == 0
    doctor = run_limited(vault_dir, "doctor", "--json")
    assert any(f["path"] == "Pilot/Profile.md" and f["severity"] == "error"
               for f in json.loads(doctor.stdout)["findings"])
    assert vault_files(vault_dir) == before


# -- numbers ---------------------------------------------------------------------------------


def test_policy_set_refuses_out_of_bounds_numbers(cli, vault_dir: Path) -> None:
    before = vault_files(vault_dir)
    for value in ("1e5000", "1e999999999999", "1" + "0" * 5000, "Infinity", "NaN", "-1",
                  "1000000000001", "1e-40", "0x10"):
        with time_limit(10):
            error = _one_line_cli_error(cli("policy", "set", "--", "max_trade_usd", value,
                                            expect=None))
        assert "max_trade_usd" in error and "nothing was changed" in error, error
        assert len(error) < 300
        assert vault_files(vault_dir) == before


def test_policy_set_accepts_the_documented_bounds(vault_dir: Path) -> None:
    assert run_limited(vault_dir, "policy", "set", "max_trade_usd", "1e12").returncode == 0
    assert run_limited(vault_dir, "policy", "set", "max_gas_usd", "0.005").returncode == 0
    assert run_limited(vault_dir, "policy", "set", "max_trades_per_day",
                       "1000000").returncode == 0
    limits = json.loads(run_limited(vault_dir, "policy", "show", "--json").stdout)["limits"]
    assert limits["max_trade_usd"] == 1_000_000_000_000 and limits["max_gas_usd"] == 0.005


@pytest.mark.parametrize("line", [
    "max_trade_usd: 1e5000", "max_trade_usd: " + "9" * 5001,
    "max_open_positions: " + "1" * 5001, "daily_limit_usd: 1e999999999999",
    "max_slippage_bps: 1e-99999", "max_trades_per_day: 1e30"])
def test_hand_written_huge_value_fails_closed_everywhere(vault_dir: Path, line: str) -> None:
    (vault_dir / "Pilot" / "Policy.md").write_text(_frontmatter(line + "\n"))
    before = vault_files(vault_dir)
    key = line.split(":")[0]
    error = one_line_error(run_limited(vault_dir, "policy", "show"), "Pilot/Policy.md", key)
    assert len(error) < 300
    proc = run_limited(vault_dir, "context", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["policy"]["state"] == "invalid"

    async def body() -> dict:
        import anyio

        with anyio.fail_after(30):
            async with in_process(vault_dir) as client:
                return await ok(client, "policy_show")

    shown = run(body)
    assert shown["valid"] is False and key in shown["problem"] and len(shown["problem"]) < 300
    assert vault_files(vault_dir) == before


# -- trade times ------------------------------------------------------------------------------


BAD_TIMES = ['1e300', 'Infinity', '-Infinity', 'NaN', '1784594521000', '-1', 'true',
             '"0001-01-01T00:00:00Z"', '"0001-01-01T00:30:00+01:00"',
             '"9999-12-31T23:59:59Z"', '"9999-12-31T23:00:00-05:00"', '"1969-12-31T23:59:59Z"',
             '"2100-01-01T00:00:00Z"', '"not a time"', '"2026-11-20T09:00:00"',
             '"' + "9" * 5000 + '"', "9" * 5000]


def _one_line_cli_error(result) -> str:  # type: ignore[no-untyped-def]
    assert result.exit_code == 1, (result.stdout, result.stderr, result.exception)
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


def test_every_invalid_trade_time_is_a_one_line_error(cli, vault_dir: Path) -> None:
    trade = make_trade(1, START)
    before = vault_files(vault_dir)
    for raw in BAD_TIMES:
        text = json.dumps(trade).replace(json.dumps(trade["timestamp"]), raw)
        with time_limit(10):
            error = _one_line_cli_error(cli("trade", "record", "-", input=text, expect=None))
        assert ("nothing was written" in error or "not valid JSON" in error) and \
            len(error) < 300, (raw[:30], error)
        assert vault_files(vault_dir) == before, raw[:30]
    cli("trade", "record", "-", input=json.dumps(trade))  # the next command works


def test_absurd_trade_amounts_are_refused(cli, vault_dir: Path) -> None:
    trade = make_trade(1, START)
    before = vault_files(vault_dir)
    for amount in ('"1e5000"', "1e999999999", '"' + "1" * 100 + '"', "Infinity", "NaN",
                   "1" * 5000):
        text = json.dumps(trade).replace('"amount_in": "0.50"', f'"amount_in": {amount}')
        with time_limit(10):
            error = _one_line_cli_error(cli("trade", "record", "-", input=text, expect=None))
        assert "amount_in" in error or "not valid JSON" in error, error
        assert vault_files(vault_dir) == before
