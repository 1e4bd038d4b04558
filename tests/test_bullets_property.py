"""Property tests (hypothesis) for the line model and the bullet grammar.

- Any bytes parse and write back unchanged.
- Editing, deleting or inserting one item never changes a byte outside that item's lines.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from memvault.core.bullets import parse_bullets, render_new_item, render_updated_item
from memvault.core.lines import TextFile

SETTINGS = settings(max_examples=250, deadline=None,
                    suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])

# Pieces that hit the grammar's corners; joined at random they make hostile Memory.md files.
PIECES = st.sampled_from([
    "- ", "* ", "+ ", "-\t", "-   ", "  ", "\t", "\n", "\n", "\n", "\r\n", "\r", "[x] ",
    "[ ] ", " [preference]", " [Mood]", " <!-- id:a1b2c3 updated:1 -->", " <!--id:zz9 -->",
    " <!-- updated:5 id:q src:chat -->", "<!--", "-->", "```", "````", "~~~", "%%", "> ",
    "> [!note] ", "# ", "---", " ^blk-1", "\ufeff", "fact", "café", "\U0001F469\u200d\U0001F4BB",
    "\u2028", "\x0c", "\x85", "1. ", "[[Link|x]]", "[t](u)", "  ", "<<<<<<< ours", "=======",
])
MARKDOWN = st.lists(PIECES, max_size=40).map("".join)
# Markdown that usually holds at least one item (so few examples are thrown away).
WITH_ITEMS = st.tuples(MARKDOWN, st.sampled_from(["", "\n", "\r\n"]), MARKDOWN).map(
    lambda t: t[0] + t[1] + "- anchored fact [other] <!-- id:anchor updated:1 -->" + t[1] + t[2])
NEW_TEXTS = st.sampled_from(["NEW fact", "uses the [x] flag", "Zé 👩‍💻 [[link]]", "a\tb"])


def _lines(doc) -> list[tuple[str, str]]:
    return [(ln.text, ln.eol) for ln in doc.file.lines]


@SETTINGS
@given(st.binary())
def test_any_bytes_round_trip_unchanged(data: bytes) -> None:
    assert parse_bullets(data).to_bytes() == data
    assert TextFile.parse(data).to_bytes() == data


@SETTINGS
@given(MARKDOWN, st.sampled_from(["", "\ufeff"]), st.sampled_from(["utf-8", "latin-1"]))
def test_any_markdown_round_trips_unchanged(text: str, bom: str, encoding: str) -> None:
    try:
        data = (bom + text).encode(encoding)
    except UnicodeEncodeError:
        data = (bom + text).encode("utf-8")
    assert parse_bullets(data).to_bytes() == data


def test_utf16_file_round_trips_and_is_read_only() -> None:
    data = b"\xff\xfe" + "- fact [other]\n".encode("utf-16-le")
    doc = parse_bullets(data)
    assert doc.to_bytes() == data
    assert doc.readonly_reason and "UTF-16" in doc.readonly_reason and not doc.items


@SETTINGS
@given(WITH_ITEMS, st.data())
def test_editing_one_item_changes_only_its_lines(text: str, data: st.DataObject) -> None:
    raw = text.encode("utf-8")
    doc = parse_bullets(raw)
    assume(not doc.readonly_reason)
    editable = [it for it in doc.items if it.editable]
    assume(editable)
    item = data.draw(st.sampled_from(editable))
    before = _lines(doc)
    count = len(doc.items)
    new_text = data.draw(NEW_TEXTS)
    category = data.draw(st.sampled_from([None, "preference"]))
    line = render_updated_item(item, text=new_text, category=category,
                               meta={**item.meta, "id": item.id, "updated": "9"})
    doc.replace_item(item, line)
    after = _lines(doc)
    assert after[:item.start] == before[:item.start]
    assert after[item.start + 1:] == before[item.text_end:]
    assert after[item.start] == (line, before[item.text_end - 1][1])
    assert len(doc.items) == count
    edited = [it for it in doc.items if it.start == item.start][0]
    assert (edited.id, edited.text) == (item.id, new_text)
    assert doc.to_bytes().startswith(b"\xef\xbb\xbf" if raw.startswith(b"\xef\xbb\xbf") else b"")


@SETTINGS
@given(WITH_ITEMS, st.data())
def test_deleting_one_item_removes_only_its_lines(text: str, data: st.DataObject) -> None:
    doc = parse_bullets(text.encode("utf-8"))
    assume(not doc.readonly_reason and doc.items)
    item = data.draw(st.sampled_from(doc.items))
    before = _lines(doc)
    others = [_identity(it) for it in doc.items if it is not item]
    doc.delete_item(item)
    after = [t for t, _ in _lines(doc)]
    expected = [t for t, _ in before[:item.start] + before[item.end:]]
    if expected and expected[0].rstrip() == "---" and before[0][0].rstrip() != "---":
        # The removal would open the file with `---`: a blank first line keeps the
        # lines below out of a new frontmatter block.
        expected = ["", *expected]
    assert after == expected
    assert [_identity(it) for it in doc.items] == others


def _identity(item) -> tuple:
    # Provisional ids of identical hand-written bullets are numbered by occurrence, so
    # deleting the first renumbers the second: compare what is written instead.
    return (None if item.provisional else item.id, item.text, item.meta)


@SETTINGS
@given(MARKDOWN)
def test_inserting_adds_one_line_and_keeps_every_other_item(text: str) -> None:
    raw = text.encode("utf-8")
    doc = parse_bullets(raw)
    assume(not doc.readonly_reason)
    old = [(it.id, it.text, it.category_raw, dict(it.meta), it.task) for it in doc.items]
    before = [t for t, _ in _lines(doc)]
    line = render_new_item("brand new fact", "other", {"id": "zzzzzz", "updated": "1"})
    doc.insert_item(line)
    reparsed = parse_bullets(doc.to_bytes())
    assert [(it.id, it.text, it.category_raw, dict(it.meta), it.task)
            for it in reparsed.items if it.id != "zzzzzz"] == old
    assert [it.text for it in reparsed.items if it.id == "zzzzzz"] == ["brand new fact"]
    after = [t for t, _ in _lines(doc)]
    at = after.index(line)
    rest = after[:at] + after[at + 1:]
    # Exactly one line added (plus a blank separator when the file ended in a callout).
    assert rest == before or (rest[at - 1] == "" and rest[:at - 1] + rest[at:] == before)


@SETTINGS
@given(MARKDOWN, st.integers(1, 4))
def test_inserting_a_batch_equals_inserting_one_by_one(text: str, count: int) -> None:
    raw = text.encode("utf-8")
    assume(not parse_bullets(raw).readonly_reason)
    lines = [render_new_item(f"batch fact {n}", "other", {"id": f"zz{n:04d}"})
             for n in range(count)]
    one_by_one = parse_bullets(raw)
    for line in lines:
        one_by_one.insert_item(line)
    batch = parse_bullets(raw)
    batch.insert_items(lines)
    assert batch.to_bytes() == one_by_one.to_bytes()


@settings(max_examples=120, deadline=None,
          suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow,
                                 HealthCheck.function_scoped_fixture])
@given(WITH_ITEMS, st.sampled_from(["", "\ufeff"]), st.data())
def test_service_edit_and_remember_touch_only_their_lines(tmp_path: Path, text: str, bom: str,
                                                          data: st.DataObject) -> None:
    """Through the real Vault service (lock, CAS write, metadata): `edit` replaces exactly
    the item's lines with one line ending like the old last one; `remember` adds one."""
    from memvault import Vault
    from memvault.core.reconcile import tidy
    from memvault.services.setup import init_vault
    from tests.golden.support import changed_region, line_ending, lines_keepends

    raw = (bom + text).encode("utf-8")
    doc = parse_bullets(raw)
    editable = [it for it in doc.items if it.editable and it.id not in doc.duplicate_ids]
    assume(not doc.readonly_reason and editable)
    # A file holding what a merge leaves (one line twice) is settled by any write; the
    # tidy rules have their own tests (test_reconcile.py).
    assume(tidy(raw).data == raw)
    # A vault of its own for each example, whose Memory.md holds these bytes before
    # memvault first reads it. In a vault shared by the examples, the file would lack the
    # records memvault saw there last, so each edit would first wait a second for what
    # looks like an editor's save in progress (test_editor_races.py tests that wait).
    root = Path(tempfile.mkdtemp(dir=tmp_path)) / "vault"
    init_vault(root, trading=True)
    vault = Vault.open(root)
    path = vault.root / vault.layout.memory
    path.write_bytes(raw)
    item = data.draw(st.sampled_from(editable))
    vault.memory.edit(item.id, "Edited by the service")
    new = path.read_bytes()
    start, removed, added = changed_region(raw, new)
    old_lines = lines_keepends(raw)
    assert start == item.start and removed == old_lines[item.start:item.text_end]
    assert len(added) == 1
    assert line_ending(added[0]) == line_ending(old_lines[item.text_end - 1])
    vault.memory.remember("A completely different zebra fact")
    after = path.read_bytes()
    _, removed, added = changed_region(new, after)
    assert [ln for ln in added if b"zebra" in ln] and len(removed) <= 1
    for ln in added:
        if b"zebra" not in ln:  # a blank separator, or the old last line gaining its EOL
            assert ln.strip() == b"" or (removed and ln.rstrip(b"\r\n") == removed[0])
    assert [it.text for it in parse_bullets(after).items if "zebra" in it.text] == [
        "A completely different zebra fact"]


def _items(doc) -> list[tuple]:
    return [(it.start, it.text_end, it.end, it.marker, it.task, it.text, it.category_raw,
             dict(it.meta), it.block_suffix, it.trailing, it.readonly_reason, it.provisional,
             it.id) for it in doc.items]


@SETTINGS
@given(WITH_ITEMS, st.lists(NEW_TEXTS, min_size=1, max_size=3), st.data())
def test_inserting_items_gives_the_same_items_as_parsing_the_result(
        text: str, texts: list[str], data: st.DataObject) -> None:
    """Insertion re-reads only the lines from the insertion point on: the items must be
    exactly those of a fresh parse of the written bytes (ids, duplicates, lines)."""
    doc = parse_bullets(text.encode("utf-8"))
    assume(not doc.readonly_reason)
    with_ids = data.draw(st.booleans())
    lines = [render_new_item(t, "other", {"id": f"n{n}x", "updated": "9"} if with_ids else {})
             for n, t in enumerate(texts)]
    doc.insert_items(lines)
    fresh = parse_bullets(doc.to_bytes())
    assert _items(doc) == _items(fresh)
    assert doc.readonly_reason == fresh.readonly_reason
    assert sorted(doc.duplicate_ids) == sorted(fresh.duplicate_ids)


LINE_PIECES = st.sampled_from([
    "fact", "café", " ", "  ", "\t", "[x] ", "[ ] ", "[preference]", " [Mood]", "[", "]", "^b-1",
    " ^blk", "<!--", "-->", " <!-- id:a1b2c3 updated:1 -->", " <!-- id:q src:chat -->",
    " <!--id:zz9 -->", " <!-- id:a id:b -->", " <!-- k:v:w -->", "\u00a0", "\u2028", "a>b",
    "\udc80", "é", "x:y", "-", "1.", "%%", "`",
])


@SETTINGS
@given(st.lists(LINE_PIECES, min_size=1, max_size=12).map("".join), st.booleans())
def test_lines_in_the_written_form_read_the_same_through_the_quick_path(
        rest: str, with_ids: bool) -> None:
    """The one-match reading of the form memvault writes gives exactly the item the
    general rules give, for any line (most lines fall back to the general rules)."""
    import memvault.core.bullets as bullets

    line = "- " + rest + (" <!-- id:abc123 updated:17 -->" if with_ids else "")
    data = (line + "\n").encode("utf-8", "surrogateescape")
    quick = _items(parse_bullets(data))
    never = bullets._WRITTEN
    bullets._WRITTEN = __import__("re").compile(r"(?!)")
    try:
        general = _items(parse_bullets(data))
    finally:
        bullets._WRITTEN = never
    assert quick == general


def test_the_quick_path_reads_what_memvault_writes() -> None:
    import memvault.core.bullets as bullets

    line = render_new_item("I drink tea, not coffee", "preference",
                           {"id": "t1a2b3", "updated": "1700000000", "auth": "inferred"})
    assert bullets._WRITTEN.fullmatch(line[2:])
    (item,) = parse_bullets((line + "\n").encode()).items
    assert (item.text, item.category_raw, item.meta) == (
        "I drink tea, not coffee", "preference",
        {"id": "t1a2b3", "updated": "1700000000", "auth": "inferred"})


def test_deleting_the_first_item_never_turns_the_rest_into_frontmatter() -> None:
    # Found by the property test above: `---` lines around a fact, below a first item.
    # Removing that item used to make the file start with `---`, so the fact became
    # frontmatter and vanished from memory.
    raw = b"- \n---\n- fact <!-- id:keepme -->\n---"
    for delete in ("one", "many"):
        doc = parse_bullets(raw)
        first = doc.items[0]
        if delete == "one":
            doc.delete_item(first)
        else:
            doc.delete_items([first])
        assert doc.to_bytes() == b"\n---\n- fact <!-- id:keepme -->\n---"
        assert [it.id for it in parse_bullets(doc.to_bytes()).items] == ["keepme"]


def test_deleting_below_real_frontmatter_keeps_it_as_it_is() -> None:
    raw = b"---\ntags: [me]\n---\n- gone <!-- id:aaaaaa -->\n- stays <!-- id:bbbbbb -->\n"
    doc = parse_bullets(raw)
    doc.delete_item(doc.items[0])
    assert doc.to_bytes() == b"---\ntags: [me]\n---\n- stays <!-- id:bbbbbb -->\n"
