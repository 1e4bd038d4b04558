"""The context block at scale: a bounded manifest with counts and paging, selection by
relevance to the request, a small MCP result at 10,000 facts, and feedback ranks read
incrementally from the journal."""

from __future__ import annotations

import json
from pathlib import Path

from memvault import Vault
from tests.mcp_helpers import in_process, ok, run

T0 = 1_784_000_000
CATS = ("identity", "project", "instruction", "other", "communication", "presentation")
TOPICS = ("kayak", "ledger", "violin", "sourdough", "compiler", "orchid", "marathon",
          "telescope", "pottery", "chess", "beekeeping", "origami")


def write_facts(root: Path, count: int, extra: list[str] = ()) -> None:
    lines = [f"- Fact {i} about the {TOPICS[i % len(TOPICS)]} club and weekly plans "
             f"[{CATS[i % len(CATS)]}] <!-- id:f{i:05d} updated:{T0 + i} -->"
             for i in range(count)]
    (root / "Pilot" / "Memory.md").write_text("# Memory\n\n" + "\n".join([*lines, *extra])
                                              + "\n", encoding="utf-8")


def context(cli, *args: str) -> dict:
    return json.loads(cli("context", "--json", *args).stdout)


def test_manifest_is_one_bounded_page_with_counts_and_paging_reaches_every_record(
        cli, vault_dir):
    write_facts(vault_dir, 2000)
    block = context(cli)
    counts = block["counts"]
    assert sum(c["shown"] + c["not_shown"] + c["skipped"] for c in counts.values()) == 2000
    assert len(block["manifest"]) == 20 and block["manifest_total"] == sum(
        c["not_shown"] for c in counts.values())
    assert block["manifest_next"] == 20
    assert len(block["skipped"]) <= 20 and block["skipped_total"] == sum(
        block["skipped_counts"].values())
    # the text names the counts and how to page, and stays within its budgets
    assert "Not shown for space" in block["text"] and "--manifest-offset" in block["text"]
    assert len(block["text"]) < 4000 + 1000 + 1000
    # paging walks every record that was not shown exactly once
    seen, offset = [], 0
    while offset is not None:
        page = context(cli, "--manifest-offset", str(offset))
        seen += [m["id"] for m in page["manifest"]]
        offset = page["manifest_next"]
        if len(seen) > 200:  # enough to prove paging; the last page is checked below
            break
    last = context(cli, "--manifest-offset", str(block["manifest_total"] - 5))
    assert len(last["manifest"]) == 5 and last["manifest_next"] is None
    assert len(seen) == len(set(seen))
    shown = {r["id"] for r in block["selected"]}
    assert not shown & set(seen)


def test_a_relevant_old_inferred_fact_is_chosen_over_newer_explicit_ones(cli, vault_dir):
    target = ("- The dentist appointment is on the third Thursday [other] "
              "<!-- id:dent01 updated:1700000000 auth:inferred -->")
    write_facts(vault_dir, 1500, [target])
    plain = context(cli)
    assert "dent01" not in {r["id"] for r in plain["selected"]}
    block = context(cli, "--request", "when is my dentist appointment?")
    chosen = {r["id"]: r for r in block["selected"]}
    assert "dent01" in chosen
    assert chosen["dent01"]["whyApplied"].startswith("shares words with")
    assert block["selected"][0]["id"] == "dent01"  # relevance before authority and recency


def test_mcp_memory_context_result_stays_small_at_ten_thousand_facts(vault_dir, monkeypatch):
    from memvault.index import vectors

    # the first embedding of 10,500 texts is spread over calls (80 s on one core); a
    # short budget keeps this test quick, and its pages must not overlap meanwhile
    monkeypatch.setattr(vectors, "EMBED_BUDGET", 0.5)
    write_facts(vault_dir, 10_000)
    lessons = [f"- Lesson {i}: tables first [evidence-layout] <!-- id:l{i:05d} "
               f"updated:{T0 + i} evidence:ev{i} -->" for i in range(500)]
    (vault_dir / "Pilot" / "Lessons.md").write_text("# Lessons\n\n" + "\n".join(lessons)
                                                    + "\n", encoding="utf-8")

    async def go() -> None:
        async with in_process(vault_dir) as client:
            result = await client.call_tool("memory_context",
                                            {"request": "what are my kayak club plans?"})
            assert not result.is_error
            structured = json.dumps(result.structured_content, ensure_ascii=False,
                                    separators=(",", ":"))
            assert len(structured.encode()) <= 16_000
            assert len(result.content[0].text.encode()) <= 16_000
            data = result.structured_content
            assert data["counts"]["fact"]["not_shown"] > 6000  # a third are capped preferences
            assert len(data["manifest"]) == 20 and data["manifest_next"] == 20
            whys = [g["whyApplied"] for g in data["selected"]]
            assert any(w.startswith(("shares words with", "close in meaning")) for w in whys)
            nxt = await ok(client, "memory_context", {"request": "what are my kayak club plans?",
                                                      "manifest_offset": 20})
            assert {m["id"] for m in nxt["manifest"]}.isdisjoint(
                {m["id"] for m in data["manifest"]})
            shown = await ok(client, "memory_show", {"id": data["manifest"][0]["id"]})
            assert shown["kind"] == "fact"

    run(go)


def test_feedback_ranks_follow_appends_and_rewrites_of_the_journal(vault_dir):
    write_facts(vault_dir, 3)
    vault = Vault.open(vault_dir)
    assert vault.lifecycle.ranks() == {}
    vault.lifecycle.feedback("f00001", "used")
    assert Vault.open(vault_dir).lifecycle.ranks() == {"f00001": 1.0}
    vault.lifecycle.feedback("f00001", "used")
    vault.lifecycle.feedback("f00002", "failed")
    assert Vault.open(vault_dir).lifecycle.ranks() == {"f00001": 2.0, "f00002": -2.0}
    # a rewrite of the journal (as forget --permanent or a merge does) is noticed
    events = vault_dir / ".memvault" / "events.jsonl"
    kept = [ln for ln in events.read_text().splitlines() if '"f00001"' not in ln]
    events.write_text("\n".join(kept) + "\n")
    assert Vault.open(vault_dir).lifecycle.ranks() == {"f00002": -2.0}
    # a last line without its newline counts once, and again once it is completed
    with open(events, "a") as fh:
        fh.write('{"id":"ev-x","ts":1,"type":"feedback","scope":"default",'
                 '"record":"f00000","outcome":"used"}')
    assert Vault.open(vault_dir).lifecycle.ranks()["f00000"] == 1.0
    with open(events, "a") as fh:
        fh.write("\n")
    assert Vault.open(vault_dir).lifecycle.ranks()["f00000"] == 1.0
