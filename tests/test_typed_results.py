"""The CLI, the MCP server and Python callers share the services' typed results: what a
program reads from `--json` is the result's `to_dict()`, and Python gets the same values
as attributes."""

from __future__ import annotations

import json
from pathlib import Path

from memvault import Vault
from memvault.services.doctor import registered_checks
from memvault.services.memory import FactListing
from memvault.services.policy import PolicyView
from memvault.services.profile import ProfileView
from memvault.services.records import ShownRecord


def test_memory_list_json_is_the_listing_python_gets(cli, vault_dir: Path) -> None:
    for i in range(10):
        cli("remember", f"I own {i} bicycles", "--category", "identity")
    listing = Vault.open(vault_dir).memory.listing()
    assert isinstance(listing, FactListing) and listing.total == 10 and len(listing.facts) == 8
    assert json.loads(cli("memory", "list", "--json").stdout) == listing.to_dict()


def test_a_read_only_memory_file_is_reported_by_the_listing_not_a_later_read(
        cli, vault_dir: Path) -> None:
    memory = vault_dir / "Pilot" / "Memory.md"
    memory.write_bytes(memory.read_bytes() + b"- I like tea\x00 <!-- id:aaa111 -->\n")
    vault = Vault.open(vault_dir)
    listing = vault.memory.listing()
    assert listing.read_only and "NUL" in listing.read_only
    out = cli("memory", "list", "--json")
    assert json.loads(out.stdout)["read_only"] == listing.read_only
    assert "read-only for memvault" in out.stderr


def test_profile_and_policy_views_are_typed_and_match_the_cli(cli, vault_dir: Path) -> None:
    cli("profile", "set", "timezone", "Europe/Lisbon")
    vault = Vault.open(vault_dir)
    view = vault.profile.show()
    assert isinstance(view, ProfileView) and view.properties["timezone"] == "Europe/Lisbon"
    assert json.loads(cli("profile", "show", "--json").stdout) == view.to_dict()
    cli("policy", "set", "max_trade_usd", "2500")
    policy = Vault.open(vault_dir).policy.limits_for_context()
    assert isinstance(policy, PolicyView) and policy.valid
    assert policy.limits["max_trade_usd"] == 2500 and policy.reason is None


def test_a_record_of_any_kind_is_shown_by_id(vault_dir: Path) -> None:
    vault = Vault.open(vault_dir)
    fact = vault.memory.remember("I live in Lisbon").fact
    proposal = vault.proposals.propose("I prefer tea", "preference").proposal
    lesson = vault.lessons.propose("Keep positions small", "risk-posture").proposal
    assert proposal is not None and lesson is not None
    accepted = vault.proposals.accept(lesson.id)
    shown = {rid: vault.records.show(rid) for rid in (fact.id, proposal.id, accepted.id)}
    assert all(isinstance(s, ShownRecord) for s in shown.values())
    assert [(s.kind, s.state) for s in shown.values()] == [
        ("fact", "active"), ("proposal", "proposed"), ("lesson", "active")]
    vault.memory.forget([fact.id])
    gone = Vault.open(vault_dir).records.show(fact.id)
    assert gone.state == "forgotten" and gone.record is None
    assert "Lisbon" not in json.dumps(gone.to_dict())  # a forgotten text is not shown


def test_doctor_runs_every_registered_check(vault_dir: Path) -> None:
    checks, repairs = registered_checks()
    assert len(checks) >= 5 and repairs
    service = Vault.open(vault_dir).doctor
    assert len(service.checks) == len(checks) and len(service.fixers) == len(repairs)
    profile = vault_dir / "Pilot" / "Profile.md"
    profile.write_bytes(b"---\nname: [unclosed\n---\n")  # a contributed check reports it
    report = Vault.open(vault_dir).doctor.check()
    assert any(f.path == "Pilot/Profile.md" for f in report.findings)
