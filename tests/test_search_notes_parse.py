"""Reading notes for the index is tolerant: odd frontmatter, tags and links never raise,
and what is understood is extracted."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from memvault.core.notes import parse_note, tag_words
from memvault.index.text import segment, unsegment


def test_frontmatter_tags_aliases_links_and_inline_tags_are_extracted():
    note = parse_note("a/Dog.md", "---\naliases:\n  - Doggo\ntags: [pets, animals/dogs]\n"
                                  "title: My Dog\n---\n# Dog\nText #inline/nested and #tag2, "
                                  "not `#code` nor #123. See [[Other note|label]], "
                                  "![[img.png]] and [[Note#Head]].\n```\n#notatag\n```\n")
    assert note.title == "Dog"
    assert note.aliases == ["My Dog", "Doggo"]
    assert note.tags == ["pets", "animals/dogs", "inline/nested", "tag2"]
    assert note.links == ["Note", "Other note", "img.png"]
    assert tag_words(["a/b"]) == "a/b a b"


def test_broken_frontmatter_is_kept_as_searchable_text():
    note = parse_note("x.md", "---\nfoo: [unclosed\n---\nbody #t\n")
    assert note.frontmatter_error and "unclosed" in note.properties and note.tags == ["t"]
    unclosed = parse_note("y.md", "---\ntags: [a]\nno end\n")
    assert unclosed.tags == [] and "no end" in unclosed.body


def test_odd_frontmatter_types_are_ignored_not_fatal():
    note = parse_note("z.md", "---\ntags: {a: 1}\naliases: 42\ntitle: 2024-01-01\n"
                              "nested: {deep: [1, {x: y}]}\n---\n")
    assert note.tags == [] and note.aliases == ["42"] and "deep" in note.properties


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("-#[]|!`~:\n ab/\u3042\u0e01\u0e31{}'\"")),
               max_size=80))
def test_parse_note_never_raises(text):
    parse_note("n.md", "---\n" + text if len(text) % 2 else text)


@given(st.text(max_size=60))
def test_segmentation_round_trips(text):
    assert unsegment(segment(text)) == text.replace("\u2063", "")
