"""Golden tests: hand-edited Memory.md files (docs/hand-edited-vaults.md) parse as expected,
round-trip byte for byte, and the fact commands touch only the lines they must.

Regenerate the expected parse results after an intended grammar change with:
    UPDATE_GOLDEN=1 python -m pytest tests/test_bullets_golden.py
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from memvault.core.bullets import BulletDocument, parse_bullets, provisional_id
from tests.golden.support import (
    GOLDEN,
    MEMORY,
    changed_region,
    golden_bytes,
    golden_names,
    line_ending,
    lines_keepends,
    put_memory,
    snapshot,
)

UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"
MAIN = "memory_handedited.md"


def describe(doc: BulletDocument) -> dict:
    """The parse result in a stable, reviewable JSON shape."""
    return {
        "file_read_only": doc.readonly_reason,
        "duplicate_ids": sorted(doc.duplicate_ids),
        "items": [
            {
                "line": it.line_no,
                "lines": [it.start + 1, it.text_end, it.end],
                "id": it.id,
                "provisional_id": it.provisional,
                "marker": it.marker + it.gap,
                "task": it.task,
                "text": it.text,
                "category": it.category_raw,
                "meta": it.meta,
                "block_id": it.block_suffix,
                "trailing": it.trailing,
                "read_only": it.readonly_reason,
            }
            for it in doc.items
        ],
    }


@pytest.mark.parametrize("name", golden_names())
def test_golden_file_parses_to_its_expected_result(name: str) -> None:
    got = describe(parse_bullets(golden_bytes(name)))
    expected_path = GOLDEN / name.replace(".md", ".expected.json")
    if UPDATE:
        expected_path.write_text(json.dumps(got, indent=1, ensure_ascii=True) + "\n")
    assert expected_path.exists(), f"run UPDATE_GOLDEN=1 to create {expected_path.name}"
    assert got == json.loads(expected_path.read_text())


@pytest.mark.parametrize("name", golden_names())
def test_golden_file_round_trips_byte_for_byte(name: str) -> None:
    data = golden_bytes(name)
    assert parse_bullets(data).to_bytes() == data


def test_golden_set_covers_every_file_level_case() -> None:
    blobs = {n: golden_bytes(n) for n in golden_names()}
    assert any(b.startswith(b"\xef\xbb\xbf") for b in blobs.values())  # BOM
    assert any(b"\r\n" in b and b"\n" in b.replace(b"\r\n", b"") for b in blobs.values())
    assert any(not b.endswith(b"\n") for b in blobs.values())  # no final newline
    assert any(b"\x00" in b for b in blobs.values())
    assert any(b.startswith(b"\xff\xfe") for b in blobs.values())  # UTF-16
    assert any(b"\r" in b and b"\n" not in b for b in blobs.values())  # lone CR
    assert any(_invalid_utf8(b) for b in blobs.values())


def _invalid_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


# -- the main hand-edited file, case by case (independent of the JSON expectations) ------


@pytest.fixture(scope="module")
def main_doc() -> BulletDocument:
    return parse_bullets(golden_bytes(MAIN))


def _by_id(doc: BulletDocument) -> dict:
    return {it.id: it for it in doc.items}


def test_blocks_that_are_not_facts_are_skipped(main_doc: BulletDocument) -> None:
    ids = {it.id for it in main_doc.items}
    for hidden in ("fence1", "fence2", "fence3", "fence4", "cmnt01", "call01", "child1"):
        assert hidden not in ids
    assert not any("memory" == it.text for it in main_doc.items)  # frontmatter list item


def test_markers_spacing_tasks_and_children_are_parsed_and_kept(main_doc) -> None:
    items = _by_id(main_doc)
    assert (items["star01"].marker, items["plus01"].marker) == ("*", "+")
    assert items["spc301"].gap == "   " and items["tab001"].gap == "\t"
    assert [items[i].task for i in ("task01", "task02", "task03")] == [" ", "x", "?"]
    assert items["task01"].category_raw == "todo"
    parent = items["par001"]
    assert parent.end - parent.text_end == 3  # three nested lines stay with the parent
    multi = items["multi1"]
    assert multi.text == "I prefer concise answers over two lines"
    assert multi.text_end - multi.start == 2


def test_hand_written_bullets_get_deterministic_provisional_ids(main_doc) -> None:
    tea = [it for it in main_doc.items if it.text == "I like tea"][0]
    assert tea.provisional and tea.id == provisional_id("I like tea", 0)
    again = parse_bullets(b"# x\n\n- other\n-   i LIKE   tea  [preference]\n")
    assert again.items[1].id == tea.id  # derived from normalised text, not position


def test_duplicate_ids_and_odd_categories_are_reported_not_changed(main_doc) -> None:
    assert [it.line_no for it in main_doc.duplicate_ids["dup001"]] == [26, 27]
    items = _by_id(main_doc)
    assert items["cat001"].category_raw == "mood"
    assert items["cat002"].category_raw == "Preference"


def test_brackets_links_and_comment_variants(main_doc) -> None:
    items = _by_id(main_doc)
    assert items["link01"].text == "Use [[Python]] and the [x] flag for [[Notes#Setup|setup]]"
    assert items["link01"].category_raw == "preference"
    assert items["link03"].category_raw is None
    assert items["nosp01"].meta == {"id": "nosp01", "updated": "1784594538", "source": "chat"}
    assert list(items["rev001"].meta) == ["updated", "id"]
    assert list(items["xtra01"].meta) == ["id", "auth", "updated", "src", "supersedes"]
    assert items["blk001"].block_suffix == " ^fav-1"
    assert items["trl001"].trailing == "  "
    read_only = {it.text.split(" [")[0]: it.readonly_reason for it in main_doc.items
                 if it.readonly_reason}
    assert set(read_only) == {"Open comment", "Text after comment", "Two comments"}


def test_unicode_text_is_kept_as_opaque_code_points(main_doc) -> None:
    items = _by_id(main_doc)
    assert items["emo001"].text == "\U0001F469\u200d\U0001F4BB likes \u2615\ufe0e and cafe\u0301"
    assert items["bidi01"].text == "Bidi \u200fmark\u200e inside"
    assert "\u2028" in items["ctrl01"].text and "\x0c" in items["ctrl01"].text


def test_code_blocks_and_comments_nested_in_an_item_are_not_its_text() -> None:
    doc = parse_bullets(golden_bytes("memory_nested_blocks.md"))
    items = _by_id(doc)
    assert "nest03" not in items  # inside an indented %% comment
    build = items["nest01"]
    assert build.text == "My build command is:" and build.category_raw == "workflow"
    assert (build.text_end - build.start, build.end - build.start) == (1, 6)  # blank inside
    assert (items["nest04"].text_end - items["nest04"].start,
            items["nest04"].end - items["nest04"].start) == (1, 4)
    assert items["nest05"].text.endswith("```inline``` is no fence")
    assert all(it.editable for it in doc.items) and doc.readonly_reason is None


# -- commands on the golden files: byte diffs ----------------------------------------------


def _editable_ids(name: str) -> list[str]:
    doc = parse_bullets(golden_bytes(name))
    return [it.id for it in doc.items
            if it.editable and not doc.readonly_reason and it.id not in doc.duplicate_ids]


EDIT_CASES = [(name, fid) for name in golden_names() for fid in _editable_ids(name)]


@pytest.mark.parametrize(("name", "fact_id"), EDIT_CASES,
                         ids=[f"{n.removeprefix('memory_').removesuffix('.md')}-{i}"
                              for n, i in EDIT_CASES])
def test_edit_changes_exactly_the_item_lines(cli, vault_dir: Path, name: str,
                                             fact_id: str) -> None:
    from memvault.core.reconcile import tidy

    # Compared with the file as any write first settles it (a copied line's duplicate id
    # becomes an id of its own, see test_reconcile.py): the edit itself touches one item.
    old = tidy(golden_bytes(name)).data
    item = next(it for it in parse_bullets(old).items if it.id == fact_id)
    path = put_memory(vault_dir, name)
    cli("memory", "edit", fact_id, f"Edited ✓ {fact_id}")
    new = path.read_bytes()
    start, removed, added = changed_region(old, new)
    old_lines = lines_keepends(old)
    assert removed == old_lines[item.start:item.text_end]  # only the item's own lines
    assert len(added) == 1
    assert line_ending(added[0]) == line_ending(old_lines[item.text_end - 1])
    after = next(it for it in parse_bullets(new).items if it.id == fact_id)
    assert after.text == f"Edited ✓ {fact_id}"
    assert not after.provisional  # a hand-written bullet is stamped with its id
    assert after.category_raw == item.category_raw
    assert after.marker + after.gap == item.marker + item.gap
    assert after.task == item.task and after.block_suffix == item.block_suffix
    assert after.trailing == item.trailing
    kept = [k for k in item.meta if k not in ("updated", "auth")]
    assert [k for k in after.meta if k in kept] == kept
    assert all(after.meta[k] == item.meta[k] for k in kept)


def test_edit_on_crlf_file_writes_a_crlf_line(cli, vault_dir: Path) -> None:
    old = golden_bytes("memory_crlf_bom.md")
    path = put_memory(vault_dir, "memory_crlf_bom.md")
    cli("memory", "edit", "win001", "Windows fact, corrected")
    new = path.read_bytes()
    start, removed, added = changed_region(old, new)
    assert start == 2 and len(removed) == 1 and len(added) == 1
    assert added[0].endswith(b"\r\n") and added[0].startswith(b"- Windows fact, corrected ")
    assert new.startswith(b"\xef\xbb\xbf") and not new.endswith(b"\n")


def test_edit_of_the_last_line_keeps_the_missing_final_newline(cli, vault_dir: Path) -> None:
    path = put_memory(vault_dir, "memory_crlf_bom.md")
    cli("memory", "edit", "win003", "Still no newline at the end")
    new = path.read_bytes()
    assert new.endswith(b"-->") and new.count(b"\r\n") == golden_bytes(
        "memory_crlf_bom.md").count(b"\r\n")


REMEMBER_CASES = ["memory_handedited.md", "memory_crlf_bom.md", "memory_mixed_eol.md",
                  "memory_no_final_newline.md", "memory_latin1.md", "memory_whitespace_only.md",
                  "memory_empty.md", "memory_frontmatter_only.md",
                  "memory_frontmatter_unclosed.md", "memory_nested_blocks.md"]


@pytest.mark.parametrize("name", REMEMBER_CASES)
def test_remember_adds_exactly_one_line_with_the_files_own_ending(cli, vault_dir: Path,
                                                                  name: str) -> None:
    from memvault.core.reconcile import tidy

    old = tidy(golden_bytes(name)).data  # as any write first settles it (see above)
    path = put_memory(vault_dir, name)
    out = cli("remember", "A brand new fact about zebras", "--json")
    fact_id = json.loads(out.stdout)["fact"]["id"]
    new = path.read_bytes()
    start, removed, added = changed_region(old, new)
    new_line = [ln for ln in added if b"zebras" in ln]
    assert len(new_line) == 1
    others = [ln for ln in added if b"zebras" not in ln]
    if old.endswith(b"\n") or not old:
        assert removed == [] and others == []  # a pure insertion of one line
        eol = line_ending(lines_keepends(old)[start - 1]) if start else b"\n"
        assert line_ending(new_line[0]) == eol
    else:
        # No final newline: the old last line gains the file's ending, the new last line
        # has none (the file keeps "no final newline").
        dominant = b"\r\n" if old.count(b"\r\n") * 2 > old.count(b"\n") else b"\n"
        assert removed == [lines_keepends(old)[-1]]
        assert others == [removed[0] + dominant]
        assert not new.endswith(b"\n")
    ids = [it.id for it in parse_bullets(new).items]
    assert ids == [it.id for it in parse_bullets(old).items] + [fact_id]


def test_remember_into_a_frontmatter_only_file_goes_after_the_frontmatter(
        cli, vault_dir: Path) -> None:
    path = put_memory(vault_dir, "memory_frontmatter_only.md")
    cli("remember", "after the properties")
    new = path.read_bytes()
    assert new.startswith(golden_bytes("memory_frontmatter_only.md"))
    assert [it.text for it in parse_bullets(new).items] == ["after the properties"]


def test_remember_into_crlf_file_uses_crlf(cli, vault_dir: Path) -> None:
    path = put_memory(vault_dir, b"# Memory\r\n\r\n- a [other] <!-- id:aaaaaa updated:1 -->\r\n")
    cli("remember", "second fact")
    new = path.read_bytes()
    assert new.count(b"\r\n") == 4 and new.replace(b"\r\n", b"").count(b"\n") == 0


READ_ONLY_COMMANDS = [
    ("memory", "list"), ("memory", "list", "--all"), ("memory", "list", "--all", "--json"),
    ("memory", "list", "--category", "preference"), ("memory", "show", "k3v9qa"),
    ("memory", "show", "k3v9qa", "--json"), ("memory", "show", "dup001"),
    ("memory", "show", provisional_id("I like tea")), ("doctor",), ("doctor", "--json"),
]


@pytest.mark.parametrize("name", golden_names())
def test_read_only_commands_leave_bytes_and_mtime_untouched(cli, vault_dir: Path,
                                                            name: str) -> None:
    path = put_memory(vault_dir, name)
    before = snapshot(path)
    vault_before = _vault_files(vault_dir)
    for args in READ_ONLY_COMMANDS:
        result = cli(*args, expect=None)
        assert result.exit_code in (0, 1), (args, result.output)
        assert snapshot(path) == before, args
    assert _vault_files(vault_dir) == vault_before  # no other note or journal written


def _vault_files(root: Path) -> dict[str, tuple[bytes, int]]:
    """Every file's bytes and mtime, except caches (the search index, the parse cache)
    and the lock."""
    from memvault.state_paths import PARSED

    return {str(p.relative_to(root)): snapshot(p) for p in root.rglob("*")
            if p.is_file() and not p.name.startswith(("index.sqlite", "lock"))
            and not p.relative_to(root).as_posix().startswith(PARSED + "/")}


def test_read_only_commands_in_a_subprocess_leave_the_file_untouched(vault_dir: Path) -> None:
    from tests.conftest import run_memvault

    path = put_memory(vault_dir, MAIN)
    before = snapshot(path)
    out = run_memvault("--vault", str(vault_dir), "memory", "list", "--all", "--json")
    assert out.returncode == 0, out.stderr
    assert len(json.loads(out.stdout)["facts"]) == len(parse_bullets(before[0]).items)
    assert run_memvault("--vault", str(vault_dir), "doctor").returncode == 1
    assert snapshot(path) == before
    assert MEMORY.endswith("Memory.md")


def test_provisional_id_never_collides_with_a_written_id() -> None:
    stamped = provisional_id("I like tea")
    doc = parse_bullets(f"- I like green tea [preference] <!-- id:{stamped} updated:1 -->\n"
                        "- I like tea\n".encode())
    assert doc.items[0].id == stamped and doc.items[1].id != stamped
    assert doc.items[1].id == provisional_id("I like tea", 1) and not doc.duplicate_ids
