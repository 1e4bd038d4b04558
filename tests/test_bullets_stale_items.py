"""Edits through items read before an earlier edit, or with line numbers that are not
the file's (a damaged or planted parse-cache entry): the right lines change, or none."""

from __future__ import annotations

import pytest

from memvault.core.bullets import parse_bullets, render_updated_item
from memvault.errors import ReadOnly


def _stamp(item):
    return render_updated_item(item, meta={**item.meta, "seen": "1"})


def test_items_edited_in_file_order_after_a_multi_line_item_shrinks() -> None:
    # The first item's two text lines become one, so every later item moves up a line.
    # Editing the later items through what was read before used to rewrite the wrong
    # lines: one fact replaced another's line and the last one was lost.
    raw = (b"- first line\n  continued <!-- id:aaaaaa -->\n- b <!-- id:bbbbbb -->\n"
           b"- c <!-- id:cccccc -->\n- d <!-- id:dddddd -->\n")
    doc = parse_bullets(raw)
    for item in list(doc.items):
        doc.replace_item(item, _stamp(item))
    assert doc.to_bytes() == (
        b"- first line continued <!-- id:aaaaaa seen:1 -->\n- b <!-- id:bbbbbb seen:1 -->\n"
        b"- c <!-- id:cccccc seen:1 -->\n- d <!-- id:dddddd seen:1 -->\n")


def test_items_deleted_bottom_up_through_what_was_read_first() -> None:
    raw = b"- a <!-- id:aaaaaa -->\n- b <!-- id:bbbbbb -->\n- c <!-- id:cccccc -->\n"
    doc = parse_bullets(raw)
    a, _, c = doc.items
    for item in (c, a):
        doc.delete_item(item)
    assert doc.to_bytes() == b"- b <!-- id:bbbbbb -->\n"


def test_line_numbers_that_are_not_the_files_change_nothing() -> None:
    # A parse that claims fact a sits on fact b's line (what a planted cache entry
    # could say): forgetting a must not take b's line with it.
    raw = b"- a <!-- id:aaaaaa -->\n- b <!-- id:bbbbbb -->\n"
    doc = parse_bullets(raw)
    a = doc.items[0]
    a.start, a.text_end, a.end = 1, 2, 2
    with pytest.raises(ReadOnly, match="nothing was changed"):
        doc.delete_item(a)
    assert doc.to_bytes() == raw
    doc = parse_bullets(raw)
    a = doc.items[0]
    a.start, a.text_end, a.end = 1, 2, 2
    with pytest.raises(ReadOnly, match="nothing was changed"):
        doc.replace_item(a, "- a again <!-- id:aaaaaa -->")
    assert doc.to_bytes() == raw


def test_an_item_gone_from_the_file_is_refused_by_name_of_its_line() -> None:
    doc = parse_bullets(b"- a <!-- id:aaaaaa -->\n- b <!-- id:bbbbbb -->\n")
    a = doc.items[0]
    doc.delete_item(a)
    with pytest.raises(ReadOnly, match="line 1: this item is no longer where it was read"):
        doc.delete_item(a)
    assert doc.to_bytes() == b"- b <!-- id:bbbbbb -->\n"
