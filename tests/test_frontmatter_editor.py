"""The frontmatter editor: reads YAML 1.2-ish, writes only the target key's lines."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memvault.core.frontmatter import parse_frontmatter, render_scalar, set_property
from memvault.errors import ReadOnly

HAND_EDITED = (
    b"---\n"
    b"# who I am\n"
    b"name: 'Sam Rivera'   # quoted on purpose\n"
    b"Tags: [finance, \"#journal\"]\n"
    b"aliases:\n"
    b"- Sam\n"
    b"- S.R.\n"
    b"reply: no\n"
    b"version: 1.10\n"
    b"meeting: 12:30\n"
    b"code: 010\n"
    b"unknown_key: {nested: true}\n"
    b"---\n"
    b"# Profile\n\nFree prose with a --- rule below\n\n---\n"
)


def _diff(before: bytes, after: bytes) -> tuple[list[bytes], list[bytes]]:
    a, b = before.split(b"\n"), after.split(b"\n")
    return [x for x in a if x not in b], [x for x in b if x not in a]


def test_values_are_read_without_yaml_1_1_retyping() -> None:
    fm = parse_frontmatter(HAND_EDITED)
    assert fm.readonly_reason is None
    assert fm.get("reply") == "no"
    assert fm.get("version") == "1.10"
    assert fm.get("meeting") == "12:30"
    assert fm.get("code") == "010"
    assert fm.get("tags") == ["finance", "#journal"]  # case-insensitive lookup
    assert fm.line_of("version") == 9


def test_setting_a_scalar_changes_only_its_line_and_keeps_its_comment() -> None:
    out = set_property(parse_frontmatter(HAND_EDITED), "name", "Alex Kim")
    removed, added = _diff(HAND_EDITED, out)
    assert removed == [b"name: 'Sam Rivera'   # quoted on purpose"]
    assert added == [b"name: Alex Kim       # quoted on purpose"]
    assert added[0].index(b"#") == removed[0].index(b"#")  # the comment keeps its column


def test_setting_a_flow_list_keeps_flow_style_and_the_key_spelling() -> None:
    out = set_property(parse_frontmatter(HAND_EDITED), "tags", ["a", "#b"])
    removed, added = _diff(HAND_EDITED, out)
    assert removed == [b'Tags: [finance, "#journal"]']
    assert added == [b'Tags: [a, "#b"]']


def test_setting_a_block_list_keeps_its_unindented_block_style() -> None:
    out = set_property(parse_frontmatter(HAND_EDITED), "aliases", ["Sam", "Samuel", "S"])
    assert b"aliases:\n- Sam\n- Samuel\n- S\nreply: no\n" in out
    assert out.replace(b"- Samuel\n- S\n", b"- S.R.\n") == HAND_EDITED


def test_a_new_key_is_added_just_before_the_closing_delimiter() -> None:
    out = set_property(parse_frontmatter(HAND_EDITED), "timezone", "Europe/Lisbon")
    assert out == HAND_EDITED.replace(b"true}\n---\n", b"true}\ntimezone: Europe/Lisbon\n---\n")


def test_values_yaml_would_retype_are_quoted() -> None:
    for text, expected in [("no", '"no"'), ("010", '"010"'), ("1.10", '"1.10"'),
                           ("12:30", '"12:30"'), ("#journal", '"#journal"'),
                           ("0xabc", '"0xabc"'), ("1e3", '"1e3"'), ("2020-08-21", '"2020-08-21"'),
                           ("a: b", '"a: b"'), ("[[Note]]", '"[[Note]]"'), ("Yes", '"Yes"'),
                           ("Europe/Lisbon", "Europe/Lisbon"), ("Sam Rivera", "Sam Rivera")]:
        assert render_scalar(text) == expected, text


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=30))
def test_any_written_string_reads_back_as_the_same_string(text: str) -> None:
    out = set_property(parse_frontmatter(b"---\na: 1\n---\nbody\n"), "value", text)
    fm = parse_frontmatter(out)
    assert fm.readonly_reason is None
    assert fm.get("value") == text
    assert out.startswith(b"---\na: 1\nvalue: ") and out.endswith(b"\n---\nbody\n")


def test_bom_and_crlf_are_kept() -> None:
    data = b"\xef\xbb\xbf---\r\ntags:\r\n  - a\r\n---\r\n- fact\r\n"
    out = set_property(parse_frontmatter(data), "tags", ["a", "b"])
    assert out == b"\xef\xbb\xbf---\r\ntags:\r\n  - a\r\n  - b\r\n---\r\n- fact\r\n"


def test_a_file_without_frontmatter_gets_a_block_on_top() -> None:
    assert set_property(parse_frontmatter(b"hello"), "k", "v") == b"---\nk: v\n---\nhello"
    assert set_property(parse_frontmatter(b""), "k", ["x"]) == b"---\nk:\n  - x\n---\n"


def test_empty_frontmatter_and_frontmatter_only_files() -> None:
    fm = parse_frontmatter(b"---\n---\n")
    assert fm.present and fm.values == {}
    assert set_property(fm, "k", "v") == b"---\nk: v\n---\n"
    assert set_property(parse_frontmatter(b"---\na: b\n---"), "c", "d") == b"---\na: b\nc: d\n---"


@pytest.mark.parametrize("data, reason", [
    (b"---\ntitle: x\n- fact\n", "no closing"),
    (b"\n---\ntags: [a]\n---\n", "not on line 1"),
    (b"---\ntags:\n  - a\ntags:\n  - b\n---\n", "duplicate key 'tags'"),
    (b"---\nTags: a\ntags: b\n---\n", "duplicate property"),
    (b"---\ncreated: {{date}}\n---\n", "line 2"),
    (b"---\na: 1\n\tb: 2\n---\n", "line 3"),
    (b"---\nTags: [[Analysis]] - [[Integral]]\n---\n", "not valid YAML"),
    (b'---\n{\n  "tags": ["journal"]\n}\n---\n', "JSON frontmatter"),
    (b"---\nname: caf\xe9\n---\n", "not UTF-8"),
])
def test_unsafe_frontmatter_is_read_only_with_a_reason(data: bytes, reason: str) -> None:
    fm = parse_frontmatter(data)
    assert fm.readonly_reason and reason in fm.readonly_reason
    with pytest.raises(ReadOnly):
        set_property(fm, "name", "x")


def test_empty_values_and_comments_survive_setting_another_key() -> None:
    data = b'---\nlast: # Indeterminate value\ngenre: []\nartist: ""\nyear:\n---\n'
    out = set_property(parse_frontmatter(data), "year", "1999")
    assert out == data.replace(b"year:\n", b'year: "1999"\n')
    out = set_property(parse_frontmatter(data), "last", "x")
    assert out == data.replace(b"last: #", b"last: x #")


def test_unquoted_wikilink_is_read_as_a_nested_list() -> None:
    assert parse_frontmatter(b"---\nTags: [[Geometrie]]\n---\n").get("tags") == [["Geometrie"]]
