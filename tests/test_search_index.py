"""`memvault search` and the index over small hand-made vaults: what is indexed and how,
incremental refresh, filters, memory search, doctor, and forgetting leaving no trace."""

from __future__ import annotations

import json
import os
import sqlite3
import time
from pathlib import Path

import pytest

from memvault import Vault


def note(root: Path, rel: str, text: str | bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def search(cli, *args: str) -> dict:
    return json.loads(cli("search", "--json", *args).stdout)


def paths(result: dict) -> list[str]:
    return [r["path"] for r in result["results"]]


@pytest.fixture
def notes_vault(vault_dir: Path) -> Path:
    note(vault_dir, "Venues/Uniswap.md",
         "---\naliases: [Uni, UNI exchange]\ntags: [defi, venue/dex]\nrating: 4\n---\n"
         "# Uniswap\nAn automated market maker on [[Ethereum]] and [[Base|Base chain]].\n"
         "Fees are paid to liquidity providers. #research/fees\n")
    note(vault_dir, "Tokens/ETH.md", "# Ether\nThe native token of Ethereum. #token\n")
    note(vault_dir, "Journal/2026-01-02.md", "Swapped on the zebra venue today.\n")
    note(vault_dir, "日本語/設定.md", "設定を開きます。テーマを変更できます。\n")
    note(vault_dir, "ru/Заметка.md", "Горячие клавиши помогают работать быстрее.\n")
    note(vault_dir, "ar/ملاحظة.md", "تفتح الملاحظات اليومية مذكرة جديدة\n")
    note(vault_dir, ".obsidian/workspace.md", "zebra hidden settings\n")
    note(vault_dir, ".trash/old.md", "zebra in the trash\n")
    note(vault_dir, "Attachments/data.txt", "zebra plain text file\n")
    return vault_dir


def test_finds_notes_by_word_title_alias_tag_and_phrase(cli, notes_vault):
    assert paths(search(cli, "liquidity providers"))[0] == "Venues/Uniswap.md"
    assert paths(search(cli, '"liquidity providers"')) == ["Venues/Uniswap.md"]
    hit = search(cli, "UNI exchange")["results"][0]
    assert hit["path"] == "Venues/Uniswap.md" and "UNI exchange" in hit["aliases"]
    assert paths(search(cli, "dex")) == ["Venues/Uniswap.md"]  # nested tag part
    assert "**liquidity**" in search(cli, "liquidity")["results"][0]["snippet"]
    assert paths(search(cli, "rating")) == ["Venues/Uniswap.md"]  # frontmatter property
    assert paths(search(cli, "Ethereum", "--tag", "token")) == ["Tokens/ETH.md"]


def test_title_match_ranks_first(cli, notes_vault):
    note(notes_vault, "Notes/About uniswap history.md", "uniswap " * 30)
    assert paths(search(cli, "Uniswap"))[0] == "Venues/Uniswap.md"


def test_tag_filter_includes_nested_tags_and_path_glob_filters(cli, notes_vault):
    assert paths(search(cli, "fees", "--tag", "research")) == ["Venues/Uniswap.md"]
    assert paths(search(cli, "fees", "--tag", "#research/fees")) == ["Venues/Uniswap.md"]
    assert paths(search(cli, "fees", "--tag", "resea")) == []
    assert paths(search(cli, "Ethereum", "--path", "Tokens/*")) == ["Tokens/ETH.md"]


def test_query_syntax_exclusion_or_and_prefix(cli, notes_vault):
    assert paths(search(cli, "Ethereum -token")) == ["Venues/Uniswap.md"]
    assert set(paths(search(cli, "zebra OR native"))) == {"Journal/2026-01-02.md",
                                                         "Tokens/ETH.md"}
    assert paths(search(cli, "liquid*")) == ["Venues/Uniswap.md"]
    assert "results" in search(cli, 'AND ( NEAR * " col:x')  # literal words, no syntax error
    assert search(cli, "(((")["results"] == []


def test_non_ascii_scripts_are_searchable(cli, notes_vault):
    assert paths(search(cli, "テーマ")) == ["日本語/設定.md"]
    assert paths(search(cli, "設定")) == ["日本語/設定.md"]
    assert "**テーマ**" in search(cli, "テーマ")["results"][0]["snippet"]
    assert paths(search(cli, "клавиши")) == ["ru/Заметка.md"]
    assert paths(search(cli, "اليومية")) == ["ar/ملاحظة.md"]


def test_hidden_folders_and_non_markdown_files_are_skipped(cli, notes_vault):
    assert paths(search(cli, "zebra")) == ["Journal/2026-01-02.md"]


def test_typo_in_title_alias_or_tag_still_finds_the_note(cli, notes_vault):
    assert paths(search(cli, "Uniswpa"))[0] == "Venues/Uniswap.md"
    hit = search(cli, "Uniswpa")["results"][0]
    assert hit["match"] == "typo corrected"  # the title's word, from the index's vocabulary
    assert search(cli, "Grpah veiw")["results"] == []  # no such note here: nothing invented


def test_refresh_rereads_only_changed_files_and_drops_deleted(vault, notes_vault):
    first = vault.search.refresh()
    assert first.added >= 6
    assert vault.search.refresh().changed == 0
    eth = notes_vault / "Tokens/ETH.md"
    eth.write_text("# Ether\nNow about staking.\n", encoding="utf-8")
    os.utime(eth, ns=(time.time_ns(), time.time_ns() + 10_000_000))
    (notes_vault / "Journal/2026-01-02.md").unlink()
    result = vault.search.refresh()
    assert (result.added, result.updated, result.removed) == (0, 1, 1)
    assert [h.path for h in vault.search.search("staking")] == ["Tokens/ETH.md"]
    assert vault.search.search("zebra") == []


def test_indexing_never_writes_a_note(cli, notes_vault):
    before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in notes_vault.rglob("*")
              if p.is_file() and ".memvault" not in p.parts}
    search(cli, "Uniswap")
    cli("index", "rebuild")
    after = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in notes_vault.rglob("*")
             if p.is_file() and ".memvault" not in p.parts}
    assert before == after


def test_binary_and_invalid_files_are_reported_by_doctor_and_never_crash(cli, notes_vault):
    note(notes_vault, "Broken/binary.md", b"\x00\x01\x02PNG\x00")
    note(notes_vault, "Broken/latin1.md", "caf\xe9 zebra".encode("latin-1"))
    locked = note(notes_vault, "Broken/locked.md", "secret zebra")
    locked.chmod(0)
    try:
        found = paths(search(cli, "zebra"))
        assert found == ["Journal/2026-01-02.md"] or (os.geteuid() == 0 and "Broken/locked.md"
                                                      in found)
        report = json.loads(cli("doctor", "--json", expect=None).stdout)
        problems = {f["path"]: f["message"] for f in report["findings"]}
        assert "binary" in problems["Broken/binary.md"]
        assert "UTF-8" in problems["Broken/latin1.md"]
        if os.geteuid() != 0:  # root reads anything
            assert "permission" in problems["Broken/locked.md"]
        status = json.loads(cli("index", "status", "--json").stdout)
        assert {s["path"] for s in status["skipped"]} >= {"Broken/binary.md", "Broken/latin1.md"}
    finally:
        locked.chmod(0o644)


def test_memory_search_finds_facts_lessons_and_proposals_with_ids(cli, vault_dir):
    fid = json.loads(cli("remember", "I keep a ledger of gas fees", "--json").stdout)
    fid = fid["fact"]["id"]
    (vault_dir / "Pilot/Lessons.md").write_text(
        "# Lessons\n\n- Show gas fees in a table [evidence-layout] "
        "<!-- id:les001 updated:1784000000 evidence:ev1 -->\n", encoding="utf-8")
    (vault_dir / "Pilot/Inbox.md").write_text(
        "# Inbox\n\n- [ ] I compare gas fees weekly [research] "
        "<!-- id:pro001 kind:fact proposed:1784000000 -->\n", encoding="utf-8")
    found = search(cli, "gas fees", "--memory")["results"]
    assert {(r["id"], r["kind"]) for r in found} == {
        (fid, "fact"), ("les001", "lesson"), ("pro001", "proposal (fact)")}
    # memory files are not returned as notes
    assert paths(search(cli, "ledger")) == []


def test_memory_search_is_scoped_to_the_principal(cli, vault_dir):
    cli("remember", "Wallet A likes zebras")
    cli("--scope", "walletb", "remember", "Wallet B likes zebras")
    texts = [r["text"] for r in search(cli, "zebras", "--memory")["results"]]
    assert texts == ["Wallet A likes zebras"]
    other = json.loads(cli("--scope", "walletb", "search", "--json", "--memory", "zebras").stdout)
    assert [r["text"] for r in other["results"]] == ["Wallet B likes zebras"]


def test_forget_permanent_leaves_no_text_in_the_index_file(cli, vault_dir):
    secret = "quetzalcoatl-unicornfish"
    fid = json.loads(cli("remember", f"My recovery word is {secret}", "--json").stdout)
    fid = fid["fact"]["id"]
    cli("remember", "An unrelated fact to keep")
    assert search(cli, "quetzalcoatl", "--memory")["results"][0]["id"] == fid
    index = vault_dir / ".memvault" / "index.sqlite"
    assert secret.encode() in b"".join(p.read_bytes() for p in index.parent.glob("index.sqlite*")
                                       if p.is_file())
    cli("forget", fid, "--permanent", "--yes")
    assert search(cli, "quetzalcoatl", "--memory")["results"] == []
    data = b"".join(p.read_bytes() for p in index.parent.glob("index.sqlite*") if p.is_file())
    assert secret.encode() not in data and b"quetzalcoatl" not in data
    assert b"unicornfish" not in data
    assert search(cli, "unrelated", "--memory")["results"]


def test_deleting_the_index_loses_nothing(cli, notes_vault):
    first = search(cli, "liquidity")
    (notes_vault / ".memvault/index.sqlite").unlink()
    again = search(cli, "liquidity")
    assert paths(again) == paths(first)


def test_search_on_a_store_with_no_copy_on_this_machine_says_so(vault_dir):
    from memvault.backends.base import Capabilities
    from memvault.backends.fs import FsBackend

    class RemoteLike(FsBackend):  # no folder here, and no cache folder either
        capabilities = Capabilities(remote_history=True)

    vault = Vault.open(vault_dir, backend=RemoteLike(vault_dir))
    from memvault.errors import InvalidInput

    with pytest.raises(InvalidInput, match="keeps no copy of them here"):
        vault.search.search("anything")
    assert not (vault_dir / ".memvault/index.sqlite").exists()


def test_schema_migrations_are_ordered_named_functions(tmp_path):
    from memvault.index import schema

    conn = sqlite3.connect(tmp_path / "x.sqlite", isolation_level=None)
    assert schema.migrate(conn) == len(schema.MIGRATIONS) == schema.SCHEMA_VERSION
    assert [m.__name__ for m in schema.MIGRATIONS] == sorted(m.__name__
                                                             for m in schema.MIGRATIONS)
    assert schema.migrate(conn) == 0
    assert conn.execute("PRAGMA user_version").fetchone()[0] == schema.SCHEMA_VERSION
