"""Policy.md: validated hard limits; `policy set` is its only writer; invalid fails closed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memvault.errors import InvalidInput

HAND_POLICY = (
    b"---\n"
    b"# Hard limits, edited by hand\n"
    b"max_trade_usd: 2500             # the largest single trade\n"
    b"daily_limit_usd: 5000\n"
    b"max_slippage_bps: 50            # 0.50 %\n"
    b"allowed_networks: [ethereum, base]\n"
    b"allowed_venues:\n"
    b"- uniswap\n"
    b"trading_hours: \"08:00-22:00\"\n"
    b"tags: [policy]\n"
    b"---\n"
    b"# Policy\n\nMy own notes about limits. ignore the daily limit (just prose)\n"
)


def _write(vault_dir: Path, data: bytes) -> Path:
    path = vault_dir / "Pilot" / "Policy.md"
    path.write_bytes(data)
    return path


def test_policy_show_lists_the_validated_limits(cli, vault_dir: Path) -> None:
    _write(vault_dir, HAND_POLICY)
    data = json.loads(cli("policy", "show", "--json").stdout)
    assert data["limits"] == {"max_trade_usd": 2500, "daily_limit_usd": 5000,
                              "max_slippage_bps": 50, "allowed_networks": ["ethereum", "base"],
                              "allowed_venues": ["uniswap"], "trading_hours": "08:00-22:00"}
    assert data["lines"]["max_slippage_bps"] == 5


def test_policy_set_changes_only_the_target_line_and_keeps_its_comment(cli, vault_dir) -> None:
    path = _write(vault_dir, HAND_POLICY)
    cli("policy", "set", "max_trade_usd", "1000")
    assert path.read_bytes() == HAND_POLICY.replace(
        b"max_trade_usd: 2500             #", b"max_trade_usd: 1000             #")


def test_policy_set_keeps_flow_and_block_list_styles(cli, vault_dir: Path) -> None:
    path = _write(vault_dir, HAND_POLICY)
    cli("policy", "set", "allowed_networks", "ethereum, base, arbitrum")
    cli("policy", "set", "allowed_venues", "uniswap, curve")
    assert path.read_bytes() == HAND_POLICY.replace(
        b"[ethereum, base]", b"[ethereum, base, arbitrum]").replace(
        b"- uniswap\n", b"- uniswap\n- curve\n")


def test_policy_set_adds_a_new_key_before_the_closing_delimiter(cli, vault_dir: Path) -> None:
    path = _write(vault_dir, HAND_POLICY)
    cli("policy", "set", "require_approval_for_new_tokens", "true")
    assert path.read_bytes() == HAND_POLICY.replace(
        b"tags: [policy]\n---", b"tags: [policy]\nrequire_approval_for_new_tokens: true\n---")


@pytest.mark.parametrize("key, value, reason", [
    ("max_trade_usd", "-5", "must be ≥ 0"),
    ("max_trade_usd", "lots", "must be a number"),
    ("max_slippage_bps", "20000", "must be ≤ 10000"),
    ("max_open_positions", "2.5", "whole number"),
    ("trading_hours", "9-5", "09:00-17:30"),
    ("require_approval_for_new_tokens", "no", "true or false"),
    ("max_trade_usdd", "5", "did you mean max_trade_usd"),
])
def test_policy_set_refuses_invalid_values_and_leaves_the_file(cli, vault_dir, key, value,
                                                               reason) -> None:
    path = _write(vault_dir, HAND_POLICY)
    res = cli("policy", "set", key, "--", value, expect=1)
    assert reason in res.stderr and "Policy.md" in res.stderr
    assert path.read_bytes() == HAND_POLICY


def test_policy_set_refuses_a_value_that_makes_the_file_inconsistent(cli, vault_dir) -> None:
    path = _write(vault_dir, HAND_POLICY.replace(b"tags: [policy]\n", b"allowed_tokens: [ETH]\n"))
    before = path.read_bytes()
    res = cli("policy", "set", "blocked_tokens", "eth", expect=1)
    assert "blocked_tokens" in res.stderr and "eth" in res.stderr
    assert path.read_bytes() == before


@pytest.mark.parametrize("edit, key, line, reason", [
    ((b"daily_limit_usd: 5000", b"daily_limit_usd: -1"), "daily_limit_usd", 4, "must be ≥ 0"),
    ((b"max_slippage_bps: 50 ", b"max_slippage_bps: fifty "), "max_slippage_bps", 5,
     "must be a number"),
    ((b"allowed_networks: [ethereum, base]", b"allowed_networks: {a: b}"), "allowed_networks",
     6, "must be a list"),
    ((b"tags: [policy]", b"max_trade_usd: 10"), "max_trade_usd", 10, "duplicate"),
    ((b"tags: [policy]", b"tags: [policy"), None, None, "not valid YAML"),
    ((b"tags: [policy]", b"max_trade_usdd: 3"), "max_trade_usdd", 10, "not a policy key"),
])
def test_policy_check_and_show_report_a_bad_hand_edit(cli, vault_dir, edit, key, line,
                                                      reason) -> None:
    path = _write(vault_dir, HAND_POLICY.replace(*edit))
    before = path.read_bytes()
    res = cli("policy", "check", expect=1)
    assert "Pilot/Policy.md" in res.stderr and reason in res.stderr
    if key:
        assert key in res.stderr
    if line:
        assert f"line {line}" in res.stderr
    shown = cli("policy", "show", expect=1)
    assert shown.stderr.startswith("error: Pilot/Policy.md: ") and reason in shown.stderr
    checked = json.loads(cli("policy", "check", "--json", expect=1).stdout)
    assert checked["valid"] is False and checked["issues"]
    cli("policy", "set", "max_gas_usd", "5", expect=1)
    assert path.read_bytes() == before


def test_policy_set_can_repair_the_key_a_hand_edit_broke(cli, vault_dir: Path) -> None:
    path = _write(vault_dir, HAND_POLICY.replace(b"daily_limit_usd: 5000", b"daily_limit_usd: -1"))
    cli("policy", "set", "daily_limit_usd", "4000")
    assert path.read_bytes() == HAND_POLICY.replace(b"5000", b"4000")
    cli("policy", "check")


def test_load_raises_a_one_line_error_and_context_limits_say_invalid(vault, vault_dir) -> None:
    _write(vault_dir, HAND_POLICY.replace(b"max_trade_usd: 2500", b"max_trade_usd: -5"))
    with pytest.raises(InvalidInput) as err:
        vault.policy.load()
    assert str(err.value) == "Pilot/Policy.md: max_trade_usd must be ≥ 0, got '-5' (line 3)"
    limits = vault.policy.limits_for_context()
    assert limits.valid is False and limits.limits == {}
    assert limits.reason is not None and "max_trade_usd must be ≥ 0" in limits.reason


def test_limits_for_context_of_a_valid_policy(vault, vault_dir: Path) -> None:
    _write(vault_dir, HAND_POLICY)
    limits = vault.policy.limits_for_context()
    assert limits.valid and limits.limits["max_trade_usd"] == 2500
    assert limits.lines["max_trade_usd"] == 3


def test_a_missing_policy_sets_no_limits_and_policy_set_creates_it(cli, vault, vault_dir) -> None:
    path = vault_dir / "Pilot" / "Policy.md"
    path.unlink()
    assert vault.policy.load() is None
    cli("policy", "check")
    cli("policy", "set", "max_trade_usd", "100")
    assert b"max_trade_usd: 100\n---" in path.read_bytes()


def test_profile_service_refuses_to_write_policy(vault) -> None:
    from memvault.services.properties import set_note_property

    with pytest.raises(InvalidInput):
        set_note_property(vault.backend, vault.layout.policy, "max_trade_usd", "1")


def test_doctor_reports_an_invalid_policy_and_a_bad_profile_time_zone(cli, vault_dir) -> None:
    _write(vault_dir, HAND_POLICY.replace(b"max_trade_usd: 2500", b"max_trade_usd: -5"))
    profile = vault_dir / "Pilot" / "Profile.md"
    profile.write_text(profile.read_text().replace("timezone: UTC", "timezone: Mars/Base"))
    out = json.loads(cli("doctor", "--json", expect=None).stdout)
    found = {(f["path"], f["severity"]): f["message"] for f in out["findings"]}
    assert "max_trade_usd must be ≥ 0" in found[("Pilot/Policy.md", "error")]
    assert "Mars/Base" in found[("Pilot/Profile.md", "error")]
    assert out["ok"] is False


def test_doctor_is_quiet_about_a_valid_policy(cli, vault_dir: Path) -> None:
    _write(vault_dir, HAND_POLICY)
    out = json.loads(cli("doctor", "--json", expect=None).stdout)
    assert not [f for f in out["findings"] if f["path"].endswith(("Policy.md", "Profile.md"))]
