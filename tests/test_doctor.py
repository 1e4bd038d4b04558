"""`memvault doctor`: findings per file and line, exit codes, and a `--fix` that changes
only the lines it must (stamped ids, resolved duplicate ids)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from memvault import Vault
from memvault.core.bullets import parse_bullets
from tests.golden.support import (
    MEMORY,
    changed_region,
    golden_bytes,
    line_ending,
    lines_keepends,
    put_memory,
    snapshot,
)


def _journal_every_id(vault_dir: Path) -> None:
    """Journal each fact of Memory.md that carries an id, as the `remember` that wrote
    it would have (the golden files stand for memory files memvault wrote)."""
    doc = parse_bullets((vault_dir / MEMORY).read_bytes())
    with (vault_dir / ".memvault/events.jsonl").open("a", encoding="utf-8") as fh:
        for it in {it.id: it for it in doc.items if not it.provisional}.values():
            fh.write(json.dumps({"id": f"ev-{it.id}", "ts": 1, "type": "fact.remembered",
                                 "scope": "default", "record": it.id, "text": it.text,
                                 "category": "other", "source": "cli"}) + "\n")


def _report(cli, *extra: str, expect: int = 1) -> dict:
    return json.loads(cli("doctor", "--json", *extra, expect=expect).stdout)


def _at(report: dict, path: str = MEMORY) -> dict[int | None, list[str]]:
    out: dict[int | None, list[str]] = {}
    for f in report["findings"]:
        if f["path"] == path:
            out.setdefault(f["line"], []).append(f"{f['severity']}: {f['message']}")
    return out


def test_fresh_vault_is_all_good(cli) -> None:
    assert _report(cli, expect=0) == {"ok": True, "findings": [], "fixed": []}
    assert "all good" in cli("doctor").stdout


def test_reports_each_problem_with_its_file_and_line(cli, vault_dir: Path) -> None:
    put_memory(vault_dir, "memory_handedited.md")
    report = _report(cli)
    assert report["ok"] is False
    for f in report["findings"]:
        assert set(f) == {"severity", "path", "line", "message"}
    at = _at(report)
    assert any("unknown category [todo]" in m for m in at[21])
    assert any("unknown category [mood]" in m for m in at[28])
    assert not any("category" in m for m in at.get(29, []))  # [Preference] is known
    assert any(m.startswith("warning: duplicate id dup001 on lines 26, 27") for m in at[27])
    assert any("never closed" in m for m in at[38])
    assert any("text after the metadata comment" in m for m in at[39])
    assert any("two metadata comments" in m for m in at[40])
    assert any(m.startswith("info: hand-written bullet without an id") for m in at[24])
    human = cli("doctor", expect=1).stdout
    assert re.search(r"warning\s+Pilot/Memory.md:28: unknown category \[mood\]", human)


def test_reports_a_read_only_file_and_other_memory_files(cli, vault_dir: Path) -> None:
    put_memory(vault_dir, "memory_nul.md")
    (vault_dir / "Pilot/Lessons.md").write_text(
        "# Lessons\n\n- Show evidence first [evidence-layout] <!-- id:les001 updated:1 -->\n"
        "- Something odd [gossip] <!-- id:les002 updated:1 -->\n")
    report = _report(cli)
    assert "error: file is read-only for memvault: file contains NUL bytes (binary?)" in \
        _at(report)[None]
    lessons = _at(report, "Pilot/Lessons.md")
    assert list(lessons) == [4] and "unknown category [gossip]" in lessons[4][0]


@pytest.mark.parametrize("name", ["Memory (Conflicted copy MyMacBook2 202411281430).md",
                                  "Memory (Sam's conflicted copy 2024-11-28).md",
                                  "Inbox.sync-conflict-20241128-143000-ABCDEFG.md"])
def test_reports_sync_conflict_copies(cli, vault_dir: Path, name: str) -> None:
    copy = vault_dir / "Pilot" / name
    copy.write_bytes(b"- a fact from the other machine\n")
    (vault_dir / "Pilot" / "Conflict resolution notes.md").write_bytes(b"# not a copy\n")
    report = _report(cli)
    assert [(f["path"], f["severity"]) for f in report["findings"]] == [
        (f"Pilot/{name}", "warning")]
    assert copy.read_bytes() == b"- a fact from the other machine\n"  # never merged silently


def test_reports_merge_markers_and_torn_journal_lines(cli, vault_dir: Path) -> None:
    put_memory(vault_dir, b"# Memory\n<<<<<<< ours\n- a [other]\n=======\n- b [other]\n"
                          b">>>>>>> theirs\n")
    (vault_dir / ".memvault/events.jsonl").write_bytes(b'{"id":"a","type":"x"}\n{"id":"b",')
    report = _report(cli)
    at = _at(report)
    # a block the next write settles fact by fact: that, once, and nothing to do by hand
    assert list(at) == [None] and len(at[None]) == 1, at
    assert "settled a merge conflict block at line 2" in at[None][0]
    assert "doctor --fix" in at[None][0]
    assert _at(report, ".memvault/events.jsonl") == {2: ["warning: unreadable journal line "
                                                        "(skipped)"]}


def test_a_conflict_block_left_for_resolve_is_one_finding_pointing_to_resolve(
        cli, vault_dir: Path) -> None:
    put_memory(vault_dir, b"# Memory\n- kept [other] <!-- id:kkkkkk updated:1 -->\n"
                          b"<<<<<<< ours\n- a [other] <!-- id:aaaaaa updated:1 -->\n=======\n"
                          b"- b [other] <!-- id:aaaaaa updated:2 -->\n>>>>>>> theirs\n")
    _journal_every_id(vault_dir)
    at = _at(_report(cli))
    assert list(at) == [3] and len(at[3]) == 1, at  # not each marker line, nor each item
    assert "memvault resolve" in at[3][0] and "by hand" not in at[3][0]


def test_a_stray_marker_line_is_reported_on_its_own(cli, vault_dir: Path) -> None:
    put_memory(vault_dir, b"# Memory\n- a [other] <!-- id:aaaaaa updated:1 -->\n=======\n")
    _journal_every_id(vault_dir)
    at = _at(_report(cli))
    assert list(at) == [3] and "outside any complete conflict block" in at[3][0], at


def test_invalid_config_is_one_error_naming_file_and_line(cli, vault_dir: Path) -> None:
    config = vault_dir / ".memvault/config.toml"
    good = config.read_bytes()
    config.write_bytes(good.replace(b'capture = "ask"', b'capture = "sometimes"'))
    line = good.split(b"\n").index(b'capture = "ask"') + 1
    err = cli("doctor", expect=1).stderr
    assert err == (f"error: .memvault/config.toml: capture must be one of ask, silent, manual,"
                   f" not 'sometimes' (line {line})\n")
    config.write_bytes(good.replace(b"learning = true", b"learning = maybe"))
    line = good.split(b"\n").index(b"learning = true") + 1
    err = cli("doctor", expect=1).stderr
    assert err.startswith("error: .memvault/config.toml: invalid TOML")
    assert f"at line {line}," in err and err.count("\n") == 1


def test_doctor_service_reports_a_config_broken_after_opening(vault_dir: Path) -> None:
    vault = Vault.open(vault_dir)
    config = vault_dir / ".memvault/config.toml"
    config.write_bytes(config.read_bytes() + b'backend = "ftp"\n')
    report = vault.doctor.check()
    bad = [f for f in report.findings if f.path == ".memvault/config.toml"]
    assert len(bad) == 1 and bad[0].severity == "error"
    assert bad[0].line == len(config.read_bytes().split(b"\n")) - 1
    assert report.needs_attention


def test_fix_stamps_ids_and_resolves_duplicates_changing_nothing_else(cli,
                                                                      vault_dir: Path) -> None:
    old = golden_bytes("memory_handedited.md")
    before = parse_bullets(old)
    path = put_memory(vault_dir, "memory_handedited.md")
    _journal_every_id(vault_dir)
    report = _report(cli, "--fix")  # still exit 1: unknown categories, read-only lines
    assert len(report["fixed"]) == 3
    new = path.read_bytes()
    old_lines, new_lines = lines_keepends(old), lines_keepends(new)
    assert len(old_lines) == len(new_lines)
    changed = [i + 1 for i, (a, b) in enumerate(zip(old_lines, new_lines, strict=True)) if a != b]
    assert changed == [24, 25, 27]
    after = parse_bullets(new)
    by_line = {it.line_no: it for it in after.items}
    for line_no in (24, 25):
        old_item = next(it for it in before.items if it.line_no == line_no)
        assert new_lines[line_no - 1].startswith(old_lines[line_no - 1].rstrip(b"\n"))
        assert by_line[line_no].id == old_item.id  # the provisional id becomes the real one
        assert not by_line[line_no].provisional
    assert by_line[26].id == "dup001" and by_line[27].id not in ("dup001", "")
    assert by_line[27].meta["updated"] == "1784594532"  # only the id changed
    assert new_lines[26].replace(by_line[27].id.encode(), b"dup001") == old_lines[26]
    assert not after.duplicate_ids
    again = _report(cli)
    assert not any("duplicate" in f["message"] or "without an id" in f["message"]
                   for f in again["findings"])
    mtime = path.stat().st_mtime_ns
    assert _report(cli, "--fix")["fixed"] == [] and path.stat().st_mtime_ns == mtime


def test_fix_keeps_crlf_and_the_missing_final_newline(cli, vault_dir: Path) -> None:
    old = golden_bytes("memory_crlf_bom.md")
    path = put_memory(vault_dir, "memory_crlf_bom.md")
    _journal_every_id(vault_dir)
    assert _report(cli, "--fix", expect=0)["fixed"] == [
        f"{MEMORY}:4: stamped id {parse_bullets(old).items[1].id}"]
    new = path.read_bytes()
    start, removed, added = changed_region(old, new)
    assert start == 3 and len(removed) == len(added) == 1
    assert line_ending(added[0]) == b"\r\n" and added[0].startswith(removed[0][:-2])
    assert new.startswith(b"\xef\xbb\xbf") and new.endswith(b"-->")


def test_fix_gives_a_new_id_to_an_editable_copy_of_a_read_only_item(cli,
                                                                   vault_dir: Path) -> None:
    path = put_memory(vault_dir, b"# Memory\n\n"
                      b"- Two comments <!-- id:x1 --> <!-- id:dupz updated:1 -->\n"
                      b"- Plain copy [other] <!-- id:dupz updated:2 -->\n")
    _report(cli, "--fix")
    doc = parse_bullets(path.read_bytes())
    assert doc.items[0].id == "dupz" and doc.items[1].id != "dupz"
    assert lines_keepends(path.read_bytes())[2] == b"- Two comments <!-- id:x1 --> " \
                                                   b"<!-- id:dupz updated:1 -->\n"


def test_fix_leaves_a_read_only_file_alone(cli, vault_dir: Path) -> None:
    path = put_memory(vault_dir, "memory_nul.md")
    before = snapshot(path)
    assert _report(cli, "--fix")["fixed"] == []
    assert snapshot(path) == before
