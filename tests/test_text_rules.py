"""One rule for new record text at every entry point (CLI, MCP, Python API, import,
extraction): one line, at most 2,000 characters, no Markdown structure at its start.
And one notion of "the same text" (NFKC, case folding, invisible characters removed)
for duplicates and tombstones, old tombstones included."""

from __future__ import annotations

import hashlib
import hmac
import json
import unicodedata
from pathlib import Path

import pytest

from memvault import Vault
from memvault.core.bullets import normalise_text
from memvault.core.records import check_record_text, match_key
from memvault.errors import InvalidInput
from tests.hostile import time_limit, vault_files
from tests.mcp_helpers import in_process, ok, run

STRUCTURE = ["- [ ] task", "- plain list item", "* star item", "+ plus item", "[ ] box",
             "[x] done", "1. numbered", "12) numbered", "# heading", "### heading",
             "> quote", "> [!note] callout", "```python", "~~~", "---", "***", "_ _ _",
             "[ref]: https://example.com", "[^1]: a footnote", "-"]
FINE = ["#tag is how I file notes", "I use - dashes", "C# is my language",
        "3.14 is my favourite number", "[[Project Alpha]] is my main project",
        "I like <b>bold</b> answers?", "x > y when it matters", "- " .strip() + "dash-free"]


@pytest.mark.parametrize("text", STRUCTURE)
def test_markdown_structure_is_refused_by_remember(cli, vault_dir: Path, text: str) -> None:
    before = vault_files(vault_dir)
    result = cli("remember", "--", text, expect=2)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "may not start with" in lines[0], result.stderr
    assert vault_files(vault_dir) == before


@pytest.mark.parametrize("text", FINE)
def test_ordinary_text_is_accepted(vault: Vault, text: str) -> None:
    assert vault.memory.remember(text).created


def test_every_entry_point_refuses_structure_and_size(cli, vault_dir: Path) -> None:
    v = Vault.open(vault_dir)
    cli("remember", "I like green tea")
    fid = v.memory.list()[0].id
    pid = v.proposals.propose("I like black tea").proposal.id
    huge = "x" * 5_000_000
    before = vault_files(vault_dir)
    for text in ("- [ ] task", "# heading", "> quote", huge):
        with time_limit(5):
            for call in (lambda t: v.memory.remember(t),
                         lambda t: v.memory.edit(fid, t),
                         lambda t: v.proposals.propose(t),
                         lambda t: v.proposals.correct(pid, t),
                         lambda t: v.lessons.propose(t, "risk-posture")):
                with pytest.raises(InvalidInput):
                    call(text)
    # through the CLI (an argument is at most 128 KiB on Linux: the largest one that fits)
    long_arg = "y" * 100_000
    for args in (("remember", "--", "> quote"), ("propose", "--", "# heading"),
                 ("remember", long_arg), ("propose", long_arg),
                 ("memory", "edit", fid, "--", "- [ ] x"), ("correct", pid, "--", "> x")):
        result = cli(*args, expect=2)
        assert result.stderr.count("\n") == 1 and "error: " in result.stderr, args[:2]
    assert vault_files(vault_dir) == before


def test_a_5_mb_text_is_refused_over_mcp_and_import_and_extraction(cli, vault_dir,
                                                                   tmp_path) -> None:
    huge = "I prefer " + "very " * 1_000_000 + "short answers"
    before = vault_files(vault_dir)

    async def body() -> tuple:
        import anyio

        with anyio.fail_after(30):
            async with in_process(vault_dir, access="write") as client:
                proposed = await client.call_tool("memory_propose", {"text": huge})
                remembered = await client.call_tool("memory_remember", {"text": huge})
                return proposed, remembered

    proposed, remembered = run(body)
    assert proposed.is_error and "at most 2,000" in proposed.content[0].text
    assert remembered.is_error and "at most 2,000" in remembered.content[0].text
    export = {"format": "memvault", "version": 2, "facts": [],
              "proposals": [{"id": "big001", "text": huge, "category": "other",
                             "meta": {"id": "big001", "kind": "fact"}}]}
    (tmp_path / "big.json").write_text(json.dumps(export))
    with time_limit(20):
        result = cli("import", str(tmp_path / "big.json"), expect=1)
    assert "at most 2,000" in result.stderr
    with time_limit(20):
        result = cli("extract", "-", input=huge, expect=1)
    assert "extraction reads at most" in result.stderr
    assert vault_files(vault_dir) == before
    cli("remember", "I prefer short answers")  # the next command works


def test_extraction_drops_a_candidate_that_breaks_the_rule() -> None:
    from memvault.core.extractor import Candidate
    from memvault.services.extraction import _valid

    long_one = Candidate(text="I prefer " + "very " * 500 + "short answers",
                         category="communication", kind="preference")
    quote = Candidate(text="> I prefer tables", category="presentation", kind="preference")
    fine = Candidate(text="I prefer tables", category="presentation", kind="preference")
    kept, refused = _valid([long_one, quote, fine])
    assert kept == [fine]
    assert [r["status"] for r in refused] == ["refused", "refused"]
    assert "at most 2,000" in refused[0]["reason"] and "quote" in refused[1]["reason"]


# -- the same text, however it is written ------------------------------------------------

CAFE = "I drink café au lait every morning"
VARIANTS = [unicodedata.normalize("NFD", CAFE), CAFE.replace("café", "ca\u200bfé"),
            CAFE.upper(), CAFE.replace(" ", "\u00a0"), "Ｉ drink café au lait every morning",
            CAFE.replace("lait", "la\u2060it\u202c"), CAFE + "\ufe0f"]


def test_match_key_equates_the_variants_and_nothing_else() -> None:
    assert {match_key(v) for v in VARIANTS} == {match_key(CAFE)}
    assert match_key("I drink cafe au lait every morning") != match_key(CAFE)
    assert match_key("I drink tea") != match_key(CAFE)


def test_forgotten_text_is_refused_in_every_disguise(cli, vault_dir: Path) -> None:
    v = Vault.open(vault_dir)
    fact = v.memory.remember(CAFE, "preference").fact
    v.memory.forget([fact.id])
    for variant in VARIANTS:
        assert v.proposals.propose(variant).status == "tombstoned", ascii(variant)
        result = json.loads(cli("propose", "--json", "--", variant).stdout)
        assert result["status"] == "tombstoned"

    async def body() -> list:
        import anyio

        with anyio.fail_after(30):
            async with in_process(vault_dir) as client:
                return [await ok(client, "memory_propose", {"text": variant})
                        for variant in VARIANTS]

    assert {r["status"] for r in run(body)} == {"tombstoned"}
    v.config.capture = "ask"
    extracted = v.extraction.extract(VARIANTS[0] + ".")
    assert [o["status"] for o in extracted.outcomes] in ([], ["tombstoned"])
    assert v.proposals.list() == [] and v.memory.all() == []


def test_one_text_is_stored_once_whatever_the_path(cli, vault_dir: Path) -> None:
    v = Vault.open(vault_dir)
    pid = v.proposals.propose(CAFE).proposal.id
    cli("remember", VARIANTS[0])  # the NFD form, typed by the user
    assert [f.text for f in v.memory.all()] == [VARIANTS[0]]
    assert v.proposals.list() == []  # the proposal is settled, not left to accept
    cli("accept", pid, expect=1)
    assert len(v.memory.all()) == 1
    # a ticked box for a text that is already remembered does not add it again
    pid2 = v.proposals.propose("I review PRs on Mondays").proposal.id
    memory = vault_dir / "Pilot" / "Memory.md"
    memory.write_text(memory.read_text() + "- I review PRs on mondays\n")
    inbox = vault_dir / "Pilot" / "Inbox.md"
    inbox.write_text(inbox.read_text().replace("- [ ] I review", "- [x] I review"))
    cli("memory", "list")
    texts = [f.text for f in v.memory.all()]
    assert sum(match_key(t) == match_key("I review PRs on Mondays") for t in texts) == 1
    assert all(p.id != pid2 for p in v.proposals.list())
    events = [e for e in v.events.events() if e.get("record") == pid2]
    assert events[-1]["type"] == "proposal.accepted" and "duplicate_of" in events[-1]


def test_a_tombstone_written_by_0_1_0_keeps_working(vault: Vault) -> None:
    salt = vault.tombstones.salt or vault._salt()
    old_key = hmac.new(salt.encode(), normalise_text("I smoke cigars").encode(),
                       hashlib.sha256).hexdigest()[:32]
    stones = vault.root / ".memvault" / "tombstones.jsonl"
    with stones.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps({"key": old_key, "record": "old001", "ts": 1700000000,
                                 "kind": "forgotten", "scope": "default"}) + "\n")
    fresh = Vault.open(vault.root)
    assert fresh.proposals.propose("I smoke cigars").status == "tombstoned"
    assert fresh.proposals.propose("i  SMOKE cigars").status == "tombstoned"
    assert fresh.transfer.plan(b"- I smoke cigars\n").actions == []
    result = fresh.memory.remember("I smoke cigars")  # the user says it again: lifted
    assert result.created and result.lifted_tombstone
    fresh.memory.forget([result.fact.id])
    assert fresh.proposals.propose(unicodedata.normalize("NFD", "I smoke cigârs")).status \
        == "proposed"  # another text entirely
    assert fresh.proposals.propose("I SMOKE CIGARS").status == "tombstoned"


def test_a_0_1_0_tombstone_also_stops_the_disguised_forms(vault: Vault) -> None:
    salt = vault.tombstones.salt or vault._salt()
    old_key = hmac.new(salt.encode(), normalise_text(CAFE).encode(),
                       hashlib.sha256).hexdigest()[:32]
    stones = vault.root / ".memvault" / "tombstones.jsonl"
    with stones.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps({"key": old_key, "record": "old002", "ts": 1700000000,
                                 "kind": "forgotten", "scope": "default"}) + "\n")
    fresh = Vault.open(vault.root)
    for variant in VARIANTS:
        assert fresh.proposals.propose(variant).status == "tombstoned", ascii(variant)


def test_check_record_text_is_fast_on_huge_input() -> None:
    with time_limit(1):
        for size in (10_000, 5_000_000, 50_000_000):
            with pytest.raises(InvalidInput, match="at most 2,000"):
                check_record_text("z" * size)
