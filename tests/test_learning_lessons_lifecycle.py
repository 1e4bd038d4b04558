"""Lessons with evidence, authority and lifecycle, feedback, replay, and controls."""

from __future__ import annotations

import json
from pathlib import Path

from memvault import Vault


def _lessons(root: Path) -> str:
    return (root / "Pilot" / "Lessons.md").read_text()


def _event(vault_dir: Path) -> str:
    v = Vault.open(vault_dir)
    v.events.append("trade.recorded", event_id="ev-trade-1", record="0xabc")
    return "ev-trade-1"


def test_lesson_with_missing_evidence_is_refused_naming_the_id(cli, vault_dir) -> None:
    out = cli("lesson", "propose", "Lead with the fill price", "--category",
              "evidence-layout", "--evidence", "ev-nope-42", expect=1)
    assert "ev-nope-42" in out.stderr and len(out.stderr.strip().splitlines()) == 1
    assert "Lead with the fill price" not in (vault_dir / "Pilot" / "Inbox.md").read_text()


def test_lesson_without_evidence_is_refused_except_risk_posture(cli) -> None:
    out = cli("lesson", "propose", "Show more detail", "--category", "response-detail",
              expect=2)
    assert "--evidence" in out.stderr
    ok = json.loads(cli("lesson", "propose", "Prefer conservative analysis", "--category",
                        "risk-posture", "--json").stdout)
    assert ok["status"] == "proposed"


def test_lesson_on_journal_evidence_is_accepted_through_review(cli, vault_dir) -> None:
    eid = _event(vault_dir)
    res = json.loads(cli("lesson", "propose", "Lead with the fill price", "--category",
                         "evidence-layout", "--evidence", eid, "--json").stdout)
    pid = res["proposal"]["id"]
    assert res["proposal"]["kind"] == "lesson" and res["proposal"]["evidence"] == [eid]
    assert json.loads(cli("lesson", "list", "--json").stdout)["lessons"] == []
    cli("accept", pid)
    [lesson] = json.loads(cli("lesson", "list", "--json").stdout)["lessons"]
    assert lesson["id"] == pid and lesson["evidence"] == [eid]
    assert f"evidence:{eid}" in _lessons(vault_dir)
    assert "Lead with the fill price" not in (vault_dir / "Pilot" / "Memory.md").read_text()


def test_lesson_on_a_trade_note_is_accepted(cli, vault_dir) -> None:
    trades = vault_dir / "Pilot" / "Trades"
    trades.mkdir(parents=True, exist_ok=True)
    (trades / "0xfeed.md").write_text("# trade\n")
    out = json.loads(cli("propose", "Compare venues side by side", "--kind", "lesson",
                         "--category", "comparison-emphasis", "--evidence", "0xfeed",
                         "--json").stdout)
    assert out["status"] == "proposed"


def _accepted_inferred(vault_dir: Path, text: str = "I like tables") -> str:
    v = Vault.open(vault_dir)
    pid = v.proposals.propose(text, "presentation").proposal.id
    v.proposals.accept(pid)
    return pid


def test_feedback_used_promotes_trial_to_proven_in_the_markdown(cli, vault_dir) -> None:
    fid = _accepted_inferred(vault_dir)
    assert "status:trial" in (vault_dir / "Pilot" / "Memory.md").read_text()
    out = json.loads(cli("feedback", fid, "used", "--json").stdout)
    assert (out["status_before"], out["status_after"]) == ("trial", "proven")
    line = next(ln for ln in (vault_dir / "Pilot" / "Memory.md").read_text().splitlines()
                if f"id:{fid}" in ln)
    assert "status:proven" in line and "auth:inferred" in line
    events = [json.loads(ln) for ln in
              (vault_dir / ".memvault" / "events.jsonl").read_text().splitlines()]
    assert any(e["type"] == "feedback" and e["record"] == fid and e["outcome"] == "used"
               for e in events)


def test_corrected_and_failed_demote_and_lower_the_rank(cli, vault_dir) -> None:
    fid = _accepted_inferred(vault_dir)
    cli("feedback", fid, "used")
    out = json.loads(cli("feedback", fid, "failed", "--json").stdout)
    assert out["status_after"] == "trial" and out["rank"] < 0
    out = json.loads(cli("feedback", fid, "corrected", "--json").stdout)
    assert out["rank"] < -1


def test_feedback_retry_with_the_same_event_id_counts_once(cli, vault_dir) -> None:
    fid = _accepted_inferred(vault_dir)
    a = json.loads(cli("feedback", fid, "ignored", "--event-id", "fb-1", "--json").stdout)
    b = json.loads(cli("feedback", fid, "ignored", "--event-id", "fb-1", "--json").stdout)
    assert a["rank"] == b["rank"] == -0.1


def test_correction_supersedes_and_superseded_is_never_recallable(cli, vault_dir) -> None:
    from memvault.services.lifecycle import recallable

    fid = _accepted_inferred(vault_dir)
    out = json.loads(cli("feedback", fid, "corrected", "--text", "I like tables with totals",
                         "--json").stdout)
    new = out["replaced_by"]
    assert out["status_after"] == "superseded" and new["authority"] == "explicit"
    assert new["meta"]["supersedes"] == fid
    v = Vault.open(vault_dir)
    assert [f.id for f in recallable(v.memory.all())] == [new["id"]]
    listed = cli("memory", "list").stdout
    assert "superseded" in listed  # kept for history, shown marked


def test_editing_an_inferred_fact_makes_it_explicit(cli, vault_dir) -> None:
    fid = _accepted_inferred(vault_dir)
    fact = json.loads(cli("memory", "edit", fid, "I like compact tables", "--json").stdout)
    assert fact["fact"]["authority"] == "explicit"


def test_replay_rebuilds_lifecycle_from_the_journal(cli, vault_dir) -> None:
    fid = _accepted_inferred(vault_dir)
    cli("feedback", fid, "used")
    path = vault_dir / "Pilot" / "Memory.md"
    proven = path.read_text()
    path.write_text(proven.replace("status:proven", "status:trial"))  # drifted by hand
    drift = json.loads(cli("replay", "--json", expect=None).stdout)
    assert drift["drift"] == [{"id": fid, "file": "Pilot/Memory.md", "markdown": "trial",
                               "journal": "proven"}]
    cli("replay", "--fix")
    assert path.read_text() == proven
    assert json.loads(cli("replay", "--json").stdout)["ranks"] == {fid: 1.0}


def test_config_set_edits_only_that_line_and_validates(cli, vault_dir) -> None:
    cfg = vault_dir / ".memvault" / "config.toml"
    before = cfg.read_text().splitlines()
    cli("config", "set", "retrieval", "off")
    after = cfg.read_text().splitlines()
    changed = [(a, b) for a, b in zip(before, after, strict=True) if a != b]
    assert changed == [("retrieval = true", "retrieval = false")]
    assert cli("config", "get", "retrieval").stdout.strip() == "false"
    bad = cli("config", "set", "capture", "sometimes", expect=1)
    assert "capture must be one of" in bad.stderr
    assert cli("config", "set", "tombstone_salt", "x", expect=1).exit_code == 1
    assert json.loads(cli("config", "get", "--json").stdout) == {
        "learning": True, "retrieval": False, "capture": "ask"}
