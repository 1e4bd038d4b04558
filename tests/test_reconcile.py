"""Tidying what a union or text merge leaves in a memory file (core.reconcile)."""

from __future__ import annotations

from memvault.core.bullets import parse_bullets
from memvault.core.lines import TextFile
from memvault.core.reconcile import find_blocks, local_view, resolve_block, tidy

HEAD = "# Memory\n\nLong-term facts about the user.\n\n"


def fact(fid: str, text: str, updated: int = 1, cat: str = "preference") -> str:
    return f"- {text} [{cat}] <!-- id:{fid} updated:{updated} -->\n"


def texts(data: bytes) -> list[str]:
    return [it.text for it in parse_bullets(data).items]


def test_a_clean_file_is_returned_as_it_is() -> None:
    data = (HEAD + fact("aaaaaa", "I like tea") + fact("bbbbbb", "I use vim")).encode()
    out = tidy(data, dead={"zzzzzz"})
    assert out.data == data and out.notes == [] and out.blocks == []


def test_the_same_change_twice_keeps_one_line_with_the_newer_stamp() -> None:
    data = (HEAD + fact("aaaaaa", "I like green tea", 5) + fact("bbbbbb", "I use vim")
            + fact("aaaaaa", "I like green tea", 9)).encode()
    out = tidy(data)
    assert texts(out.data) == ["I use vim", "I like green tea"]
    assert b"updated:9" in out.data and b"updated:5" not in out.data
    assert out.dropped == [] and "same change" in out.notes[0]


def test_two_memvault_edits_keep_the_newer_and_hand_back_the_older_for_the_journal() -> None:
    data = (HEAD + fact("aaaaaa", "I live in Bergen", 50) + fact("aaaaaa", "I live in Oslo", 70)
            ).encode()
    journal = {("aaaaaa", "I live in Bergen"), ("aaaaaa", "I live in Oslo")}
    out = tidy(data, path="Pilot/Memory.md", known=lambda i, t: (i, t) in journal)
    assert texts(out.data) == ["I live in Oslo"]
    [dropped] = out.dropped
    assert (dropped.record, dropped.kept_text, dropped.dropped_text) == (
        "aaaaaa", "I live in Oslo", "I live in Bergen")
    assert out.notes[0].startswith("Pilot/Memory.md: duplicate id aaaaaa on lines 5, 6: the "
                                   "fact was edited on two machines")


def test_a_version_the_journal_does_not_know_is_kept_as_a_fact_of_its_own() -> None:
    # A hand edit (or a copied line) is nobody's older version: both are kept.
    data = (HEAD + fact("aaaaaa", "I live in Bergen", 50) + fact("aaaaaa", "I live in Oslo", 70)
            ).encode()
    left = tidy(data, known=lambda i, t: t == "I live in Oslo", renumber_copies=False)
    assert left.data == data  # when asked to leave copies alone
    out = tidy(data, known=lambda i, t: t == "I live in Oslo")
    items = parse_bullets(out.data).items
    assert [it.text for it in items] == ["I live in Bergen", "I live in Oslo"]
    assert items[0].id == "aaaaaa" and items[1].id != "aaaaaa" and out.dropped == []
    assert out.renumbered == [f"duplicate id aaaaaa on lines 5, 6 with different text (a "
                              f"copied line, or hand edits on two machines): the later copy "
                              f"is now {items[1].id}"]


def test_two_memvault_edits_with_the_same_stamp_settle_the_same_way_everywhere() -> None:
    one = fact("aaaaaa", "I live in Bergen", 70)
    two = fact("aaaaaa", "I live in Oslo", 70)
    both = lambda i, t: True  # noqa: E731 - the journal knows both versions
    a = tidy((HEAD + one + two).encode(), known=both)
    b = tidy((HEAD + two + one).encode(), known=both)
    assert texts(a.data) == texts(b.data) == ["I live in Oslo"]


def test_a_copied_line_with_the_same_stamp_becomes_its_own_fact_the_same_on_every_clone() -> None:
    data = (HEAD + fact("aaaaaa", "I like tea", 7) + fact("aaaaaa", "I like coffee", 7)).encode()
    first, second = tidy(data), tidy(data)
    assert first.data == second.data  # deterministic: two clones write the same bytes
    items = parse_bullets(first.data).items
    assert [it.text for it in items] == ["I like tea", "I like coffee"]
    assert items[0].id == "aaaaaa" and items[1].id != "aaaaaa"
    assert tidy(first.data).data == first.data  # and stable


def test_a_forgotten_id_that_a_merge_brought_back_is_removed() -> None:
    data = (HEAD + fact("aaaaaa", "I like tea") + fact("bbbbbb", "I live in Oslo, edited")
            + "  - a nested note under it\n" + fact("cccccc", "I use vim")).encode()
    out = tidy(data, dead={"bbbbbb"})
    assert texts(out.data) == ["I like tea", "I use vim"]
    assert b"nested note" not in out.data and b"Oslo" not in out.data


def test_a_git_block_of_two_additions_keeps_both_this_clones_first() -> None:
    data = (HEAD + fact("aaaaaa", "I like tea") + "<<<<<<< HEAD\n" + fact("bbbbbb", "Mine")
            + "=======\n" + fact("cccccc", "Theirs") + ">>>>>>> 1234abc (theirs)\n").encode()
    assert texts(tidy(data).data) == ["I like tea", "Mine", "Theirs"]
    # During a rebase the second section is this clone's.
    assert texts(tidy(data, local_first=False).data) == ["I like tea", "Theirs", "Mine"]
    assert b"<<<<<<<" not in tidy(data).data


def test_a_git_block_with_a_base_section_takes_the_side_that_changed() -> None:
    data = (HEAD + "<<<<<<< HEAD\n" + fact("aaaaaa", "I like tea", 1) + "||||||| base\n"
            + fact("aaaaaa", "I like tea", 1) + "=======\n" + fact("aaaaaa", "I like coffee", 3)
            + ">>>>>>> other\n").encode()
    assert texts(tidy(data).data) == ["I like coffee"]


def test_the_same_fact_changed_differently_is_left_for_resolve_and_read_as_this_clones() -> None:
    data = (HEAD + "<<<<<<< HEAD\n" + fact("aaaaaa", "I live in Bergen", 3) + "=======\n"
            + fact("aaaaaa", "I live in Oslo", 4) + ">>>>>>> other\n" + fact("bbbbbb", "x")
            ).encode()
    out = tidy(data)
    assert out.data == data and len(out.blocks) == 1
    block = out.blocks[0]
    assert block.fact_ids() == ["aaaaaa"] and block.line_no == 5
    assert texts(local_view(data)) == ["I live in Bergen", "x"]
    assert texts(local_view(data, local_first=False)) == ["I live in Oslo", "x"]
    assert texts(resolve_block(data, block, "ours")) == ["I live in Bergen", "x"]
    assert texts(resolve_block(data, block, "theirs")) == ["I live in Oslo", "x"]
    both = parse_bullets(resolve_block(data, block, "both")).items
    assert [it.text for it in both] == ["I live in Bergen", "I live in Oslo", "x"]
    assert len({it.id for it in both}) == 3


def test_prose_changed_on_both_sides_is_left_for_the_user() -> None:
    data = (HEAD + "<<<<<<< HEAD\nMy notes.\n=======\nTheir notes.\n>>>>>>> other\n").encode()
    out = tidy(data)
    assert out.data == data and len(out.blocks) == 1


def test_a_memvault_block_about_a_forgotten_fact_is_dropped() -> None:
    data = (HEAD + "<<<<<<< memvault conflict: fact aaaaaa was edited on this clone and "
            "deleted on the other side; ...\n" + fact("aaaaaa", "I like tea, edited")
            + ">>>>>>> memvault conflict end\n" + fact("bbbbbb", "kept")).encode()
    assert texts(tidy(data, dead={"aaaaaa"}).data) == ["kept"]
    left = tidy(data)
    assert len(left.blocks) == 1 and left.blocks[0].versions() == (
        [fact("aaaaaa", "I like tea, edited").rstrip("\n")], [])


def test_a_memvault_block_whose_versions_differ_only_in_updated_is_settled() -> None:
    data = (HEAD + "<<<<<<< memvault conflict: fact aaaaaa was changed on both sides\n"
            + fact("aaaaaa", "Same", 3) + "=======\n" + fact("aaaaaa", "Same", 8)
            + ">>>>>>> memvault conflict end\n").encode()
    out = tidy(data)
    assert texts(out.data) == ["Same"] and b"updated:8" in out.data


def test_crlf_and_a_missing_final_newline_are_kept() -> None:
    data = (HEAD + fact("aaaaaa", "One", 1) + fact("aaaaaa", "One", 2)).replace(
        "\n", "\r\n").encode().rstrip(b"\r\n")
    out = tidy(data)
    assert out.data == (HEAD + fact("aaaaaa", "One", 2)).replace("\n", "\r\n").encode().rstrip(
        b"\r\n")


def test_an_unbalanced_marker_is_not_a_block() -> None:
    data = (HEAD + "<<<<<<< HEAD\n" + fact("aaaaaa", "x")).encode()
    assert find_blocks(TextFile.parse(data).lines) == []
    assert tidy(data).data == data


def test_forgetting_the_first_of_two_copies_keeps_the_copy() -> None:
    # Lines sharing an id that are different facts (a copy): forgetting the id means the
    # fact the reader saw under it, not the copy, which has an id of its own.
    data = (HEAD + fact("aaaaaa", "I like tea", 7) + fact("aaaaaa", "I like coffee", 7)).encode()
    out = tidy(data, dead={"aaaaaa"})
    assert texts(out.data) == ["I like coffee"]


# -- a hand-written bullet beside the fact it became -------------------------------------------

def stamped(text: str, nth: int = 0, updated: int = 5, cat: str | None = None) -> str:
    """The line `doctor --fix` (or a first `memory edit`) writes for a hand bullet."""
    from memvault.core.bullets import provisional_id

    tail = f" [{cat}]" if cat else ""
    return f"- {text}{tail} <!-- id:{provisional_id(text, nth)} updated:{updated} -->\n"


def test_an_id_less_copy_of_a_stamped_bullet_is_removed_once_and_named() -> None:
    from memvault.core.bullets import provisional_id

    kiwi = provisional_id("hand kiwi")
    data = (HEAD + "- hand kiwi\n" + fact("bbbbbb", "new fact on A") + stamped("hand kiwi")
            ).encode()
    out = tidy(data, path="Pilot/Memory.md")
    assert texts(out.data) == ["new fact on A", "hand kiwi"]
    assert parse_bullets(out.data).items[1].id == kiwi
    assert out.notes == [f"Pilot/Memory.md: removed line 5: an id-less copy of {kiwi} that a "
                         "merge left beside it (the words it had before memvault gave it an "
                         "id)"]
    assert [(x.line_no, x.record) for x in out.leftovers] == [(5, kiwi)]
    again = tidy(out.data, path="Pilot/Memory.md")
    assert again.data == out.data and again.notes == []  # said once


def test_an_id_less_copy_in_other_case_and_spacing_is_the_same_words() -> None:
    data = (HEAD + "*   Hand  KIWI\r\n" + fact("bbbbbb", "hand kiwi", cat="other")).encode()
    assert tidy(data).data == data  # another category: not the same record
    data = (HEAD + "*   Hand  KIWI [Other]\r\n" + fact("bbbbbb", "hand kiwi", cat="other")
            ).encode()
    assert texts(tidy(data).data) == ["hand kiwi"]


def test_the_earlier_words_of_an_edited_bullet_stay_even_when_the_journal_knows_the_edit(
        ) -> None:
    from memvault.core.bullets import provisional_id

    kiwi = provisional_id("hand kiwi")
    edited = f"- ripe kiwi <!-- id:{kiwi} updated:9 -->\n"
    data = (HEAD + "- hand kiwi\n" + fact("bbbbbb", "new") + edited).encode()
    # A union's leftover and the same words typed again after the edit look alike in the
    # file: both stay (a duplicate the user can delete beats words lost).
    assert tidy(data, known=lambda rid, text: (rid, text) == (kiwi, "hand kiwi")).data == data
    assert tidy(data, known=lambda rid, text: False).data == data
    # A category changed by `memory edit` (same words): the copy goes.
    recat = f"- hand kiwi [food] <!-- id:{kiwi} updated:9 -->\n"
    data = (HEAD + "- hand kiwi\n" + recat).encode()
    assert texts(tidy(data).data) == ["hand kiwi"]


def test_older_words_of_a_remembered_fact_typed_by_hand_stay() -> None:
    # `aaaaaa` was remembered (its id is not one a hand bullet gets): a hand bullet with
    # its earlier words is the user's own new line, journal or not.
    data = (HEAD + fact("aaaaaa", "I like green tea") + "- I like tea\n").encode()
    assert tidy(data, known=lambda rid, text: True).data == data


def test_two_identical_hand_bullets_one_edited_keep_the_other() -> None:
    from memvault.core.bullets import provisional_id

    # "kiwi" typed twice; the second was edited (its id is the second one those words
    # get); the union left its old line: one id-less "kiwi" goes, the other stays.
    second = provisional_id("kiwi", 1)
    data = (HEAD + "- kiwi\n- kiwi\n" + f"- ripe kiwi <!-- id:{second} updated:9 -->\n"
            ).encode()
    out = tidy(data, known=lambda rid, text: rid == second)
    assert texts(out.data) == ["kiwi", "ripe kiwi"] and len(out.leftovers) == 1
    # Both stamped, both copies left: both go.
    data = (HEAD + "- kiwi\n- kiwi\n" + stamped("kiwi", 0) + stamped("kiwi", 1)).encode()
    assert texts(tidy(data).data) == ["kiwi", "kiwi"]
    assert all(not it.provisional for it in parse_bullets(tidy(data).data).items)


def test_the_copy_of_a_forgotten_fact_goes_with_it_and_no_note_repeats_the_words() -> None:
    from memvault.core.bullets import provisional_id

    kiwi = provisional_id("secret kiwi")
    data = (HEAD + "- secret kiwi\n" + fact("bbbbbb", "new") + stamped("secret kiwi")).encode()
    out = tidy(data, dead={kiwi}, path="Pilot/Memory.md")
    assert texts(out.data) == ["new"]
    assert out.notes and not any("secret" in n for n in out.notes)


def test_lines_inside_a_conflict_block_are_neither_copy_nor_fact() -> None:
    block = ("<<<<<<< HEAD\n" + stamped("hand kiwi") + "\nSome prose\n=======\n"
             + "More prose\n>>>>>>> theirs\n")
    data = (HEAD + "- hand kiwi\n" + block).encode()
    out = tidy(data)
    assert out.data == data and len(out.blocks) == 1


def test_inbox_and_lessons_copies_ignore_the_task_box() -> None:
    data = ("# Inbox\n\n- [ ] I prefer tea\n- [x] I prefer tea <!-- id:"
            + __import__("memvault.core.bullets", fromlist=["x"]).provisional_id("I prefer tea")
            + " kind:fact -->\n").encode()
    out = tidy(data)
    assert [(it.task, it.text) for it in parse_bullets(out.data).items] == [("x", "I prefer tea")]


def test_the_quick_check_sees_an_id_less_bullet_beside_facts() -> None:
    from memvault.core.reconcile import might_need_tidy

    only_facts = (HEAD + fact("aaaaaa", "One") + fact("bbbbbb", "Two")).encode()
    assert not might_need_tidy(only_facts)
    assert might_need_tidy(only_facts + b"- typed\n")
    assert might_need_tidy(only_facts + b"*\ttyped\n")
    assert not might_need_tidy((HEAD + "- typed\n").encode())  # nothing to copy
    assert might_need_tidy((HEAD + "- typed\n- typed\n").encode())


def test_the_same_hand_written_line_twice_is_kept_once() -> None:
    data = (HEAD + "- typed\n" + fact("aaaaaa", "One") + "- Typed\r\n- typed [other]\n"
            "- [x] typed\n").encode()
    out = tidy(data, path="Pilot/Memory.md")
    assert texts(out.data) == ["typed", "One", "typed", "typed"]  # other category, task box
    assert out.notes == ["Pilot/Memory.md: removed line 7: a copy of the hand-written "
                         "bullet on line 5 (a merge kept both sides' copy)"]


def test_thousands_of_copies_go_in_one_pass_with_one_note() -> None:
    import time

    data = (HEAD + "- a line that repeats\n" * 40_000).encode().rstrip(b"\n")
    started = time.perf_counter()
    out = tidy(data, path="Pilot/Memory.md")
    assert time.perf_counter() - started < 20  # linear: one parse per pass, not per copy
    assert out.data == (HEAD + "- a line that repeats").encode()  # no final newline kept
    assert out.notes == ["Pilot/Memory.md: removed lines 6, 7, 8, 9, 10 and 39994 more: "
                         "39999 copies of the hand-written bullet on line 5 (a merge kept "
                         "both sides' copy)"]


def test_a_hand_bullet_with_nested_lines_or_another_block_id_is_never_a_copy() -> None:
    data = (HEAD + "- Projects\n  - Aurora\n- Projects\n  - Borealis\n"
            + "- kiwi ^fav-1\n- kiwi ^fav-2\n" + stamped("Projects") + "- kiwi\n").encode()
    out = tidy(data)
    assert "Borealis" in out.data.decode() and "^fav-2" in out.data.decode()
    assert texts(out.data) == ["Projects", "Projects", "kiwi", "kiwi", "Projects", "kiwi"]
