"""The fact-by-fact merge (core) and the git merge driver over real `git merge`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from memvault.core.bullets import CONFLICT_REASON, parse_bullets
from memvault.core.merge import CONFLICT_OPEN, merge_bullet_files, merge_json_lines
from memvault.services.merge_driver import active_tombstone_keys, git_merge_file

HEAD = "# Memory\n\nLong-term facts about the user.\n\n"


def fact(fid: str, text: str, cat: str = "preference", updated: int = 1) -> str:
    return f"- {text} [{cat}] <!-- id:{fid} updated:{updated} -->\n"


BASE = HEAD + fact("aaaaaa", "I like tea") + fact("bbbbbb", "I live in Oslo") + \
    fact("cccccc", "My project is Aurora", "project")


def merged(base: str, ours: str, theirs: str, **kw):  # type: ignore[no-untyped-def]
    return merge_bullet_files(base.encode(), ours.encode(), theirs.encode(), **kw)


def ids(data: bytes) -> list[str]:
    return [it.id for it in parse_bullets(data).items]


def test_a_change_on_one_side_wins_and_additions_from_both_sides_are_kept() -> None:
    ours = BASE.replace("I like tea", "I like green tea").replace("updated:1 -->\n- I live",
                                                                  "updated:2 -->\n- I live") \
        + fact("n1n1n1", "Ours new")
    theirs = BASE + fact("t1t1t1", "Theirs new") + fact("t2t2t2", "Theirs second")
    r = merged(BASE, ours, theirs)
    assert r.clean
    assert ids(r.data) == ["aaaaaa", "bbbbbb", "cccccc", "n1n1n1", "t1t1t1", "t2t2t2"]
    assert b"I like green tea" in r.data and b"I like tea [" not in r.data
    assert r.data.startswith(HEAD.encode())


def test_a_deletion_beats_an_unchanged_line() -> None:
    theirs = BASE.replace(fact("bbbbbb", "I live in Oslo"), "")
    ours = BASE + fact("n1n1n1", "Ours new")
    r = merged(BASE, ours, theirs)
    assert r.clean and ids(r.data) == ["aaaaaa", "cccccc", "n1n1n1"]


def test_the_same_fact_changed_differently_keeps_both_versions_in_markers() -> None:
    ours = BASE.replace("I live in Oslo", "I live in Bergen")
    theirs = BASE.replace("I live in Oslo", "I live in Trondheim")
    r = merged(BASE, ours, theirs)
    assert not r.clean and "bbbbbb" in r.conflicts[0]
    text = r.data.decode()
    assert "I live in Bergen" in text and "I live in Trondheim" in text
    lines = text.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith(CONFLICT_OPEN))
    assert lines[start + 2] == "=======" and lines[start + 4].startswith(">>>>>>>")
    # The marker lines never glue onto a fact: every fact still parses cleanly; the two
    # versions inside the block are read-only until the block is resolved.
    doc = parse_bullets(r.data)
    assert all(it.editable for it in doc.items if it.id != "bbbbbb")
    assert {it.readonly_reason for it in doc.items if it.id == "bbbbbb"} == {CONFLICT_REASON}
    assert [it.text for it in doc.items if it.id == "bbbbbb"] == ["I live in Bergen",
                                                                   "I live in Trondheim"]


def test_a_forgotten_fact_stays_forgotten_even_if_the_other_side_touched_it() -> None:
    ours = BASE.replace(fact("bbbbbb", "I live in Oslo"), "")
    theirs = BASE.replace(fact("bbbbbb", "I live in Oslo"),
                          fact("bbbbbb", "I live in Oslo", updated=99))
    r = merged(BASE, ours, theirs, is_forgotten=lambda t: t == "I live in Oslo")
    assert r.clean and "bbbbbb" not in ids(r.data) and b"Oslo" not in r.data
    # Without the tombstone, a delete against an edit is a conflict that keeps the text.
    r2 = merged(BASE, ours, theirs.replace("in Oslo", "in Oslo, Norway"))
    assert not r2.clean and b"Oslo, Norway" in r2.data


def test_the_same_fact_added_on_both_sides_is_kept_once() -> None:
    ours = BASE + fact("n1n1n1", "I cycle to work")
    theirs = BASE + fact("t1t1t1", "i cycle  to work")
    r = merged(BASE, ours, theirs)
    assert r.clean and ids(r.data) == ["aaaaaa", "bbbbbb", "cccccc", "n1n1n1"]


def test_prose_edits_merge_like_git_and_keep_crlf_and_bom() -> None:
    base = ("\ufeff" + BASE + "\n## Notes\n\nfree text\n").replace("\n", "\r\n")
    ours = base.replace("Long-term facts", "Long-term facts (mine)") + \
        fact("n1n1n1", "Ours").replace("\n", "\r\n")
    theirs = base.replace("free text", "free text, edited")
    r = merge_bullet_files(base.encode(), ours.encode(), theirs.encode(),
                           merge_text=git_merge_file)
    assert r.clean, r.conflicts
    assert r.data.startswith(b"\xef\xbb\xbf# Memory\r\n")
    assert b"(mine)" in r.data and b"free text, edited" in r.data
    assert b"\n" not in r.data.replace(b"\r\n", b"")


def test_json_lines_merge_as_a_union_that_keeps_deletions() -> None:
    base = b'{"id":"e1"}\n{"id":"e2"}\n'
    ours = b'{"id":"e1"}\n{"id":"e2"}\n{"id":"o3"}\n'
    theirs = b'{"id":"e1"}\n{"id":"t3"}\n'  # e2 purged on their side
    assert merge_json_lines(base, ours, theirs) == b'{"id":"e1"}\n{"id":"o3"}\n{"id":"t3"}\n'


def test_a_lifted_tombstone_is_not_active() -> None:
    a = b'{"key":"k1","ts":1,"kind":"forgotten","scope":"default"}\n'
    b = b'{"key":"k1","ts":5,"kind":"lifted","scope":"default"}\n' \
        b'{"key":"k2","ts":2,"kind":"forgotten","scope":"default"}\n'
    assert active_tombstone_keys([a, b], "default") == {"k2"}
    assert active_tombstone_keys([a, b], "other") == set()


FORGOT = b'{"key":"k1","record":"r1","ts":7,"kind":"forgotten","scope":"default"}\n'
LIFTED = b'{"key":"k1","record":"r1","ts":7,"kind":"lifted","scope":"default"}\n'
OTHER = b'{"key":"k2","record":"r2","ts":7,"kind":"forgotten","scope":"default"}\n'


def test_a_tombstone_line_one_side_holds_twice_is_kept_twice() -> None:
    """Forget, restore and forget within one second: the second forget is the same line as
    the first, and it is what keeps the text forgotten."""
    ours = FORGOT + LIFTED + FORGOT
    assert merge_json_lines(FORGOT + LIFTED, ours, FORGOT + LIFTED + OTHER) == ours + OTHER
    assert merge_json_lines(FORGOT + LIFTED, FORGOT + LIFTED + OTHER, ours) == \
        FORGOT + LIFTED + OTHER + FORGOT
    assert merge_json_lines(b"", ours, ours) == ours  # the same lines on both sides: once
    assert active_tombstone_keys([ours], "default") == {"k1"}
    assert active_tombstone_keys([FORGOT + LIFTED, ours], "default") == {"k1"}
    assert active_tombstone_keys([FORGOT + LIFTED], "default") == set()


def test_a_repeated_tombstone_line_goes_only_when_nothing_about_it_lies_between() -> None:
    from memvault.core.journal_lines import redundant_tombstone_copies

    def drop(*lines: bytes) -> set[int]:
        return redundant_tombstone_copies([ln.rstrip(b"\n") for ln in lines])

    assert drop(FORGOT, LIFTED, FORGOT) == set()
    assert drop(FORGOT, FORGOT, LIFTED) == {1}
    assert drop(FORGOT, OTHER, FORGOT, LIFTED, LIFTED) == {2, 4}
    same_record = b'{"key":"k9","record":"r1","ts":7,"kind":"lifted","scope":"default"}\n'
    assert drop(FORGOT, same_record, FORGOT) == set()  # the record's last word
    elsewhere = b'{"key":"k1","record":"r1","ts":7,"kind":"lifted","scope":"bob"}\n'
    assert drop(FORGOT, elsewhere, FORGOT) == set()  # any scope: kept, to be safe
    assert drop(FORGOT, FORGOT, FORGOT) == {1, 2}


# -- the driver under a real `git merge` ----------------------------------------------------


def git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                          check=check)


def make_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / ".memvault").mkdir(parents=True)
    (repo / "Pilot").mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "t@example.com")
    git(repo, "config", "user.name", "t")
    git(repo, "config", "merge.memvault.driver",
        f"{sys.executable} -m memvault merge-driver %O %A %B %P")
    (repo / ".gitattributes").write_text("Pilot/**/Memory.md merge=memvault\n"
                                         ".memvault/*.jsonl merge=memvault\n")
    (repo / ".memvault" / "config.toml").write_text('tombstone_salt = "s"\n')
    (repo / "Pilot" / "Memory.md").write_text(BASE)
    (repo / ".memvault" / "events.jsonl").write_text('{"id":"e0"}\n')
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    return repo


def test_git_merge_uses_the_driver_for_memory_and_journals(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    mem = repo / "Pilot" / "Memory.md"
    events = repo / ".memvault" / "events.jsonl"
    git(repo, "checkout", "-q", "-b", "other")
    mem.write_text(BASE + fact("t1t1t1", "Theirs new"))
    events.write_text('{"id":"e0"}\n{"id":"t"}\n')
    git(repo, "commit", "-qam", "other")
    git(repo, "checkout", "-q", "main")
    mem.write_text(BASE.replace("I like tea", "I like coffee") + fact("n1n1n1", "Ours new"))
    events.write_text('{"id":"e0"}\n{"id":"o"}\n')
    git(repo, "commit", "-qam", "main")
    out = git(repo, "merge", "-q", "--no-edit", "other", check=False)
    assert out.returncode == 0, out.stdout + out.stderr
    assert ids(mem.read_bytes()) == ["aaaaaa", "bbbbbb", "cccccc", "n1n1n1", "t1t1t1"]
    assert b"I like coffee" in mem.read_bytes()
    assert [json.loads(ln)["id"] for ln in events.read_text().splitlines()] == ["e0", "o", "t"]


def test_git_merge_with_a_true_conflict_exits_non_zero_and_keeps_both(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    mem = repo / "Pilot" / "Memory.md"
    git(repo, "checkout", "-q", "-b", "other")
    mem.write_text(BASE.replace("Oslo", "Bergen"))
    git(repo, "commit", "-qam", "other")
    git(repo, "checkout", "-q", "main")
    mem.write_text(BASE.replace("Oslo", "Paris"))
    git(repo, "commit", "-qam", "main")
    out = git(repo, "merge", "-q", "--no-edit", "other", check=False)
    assert out.returncode != 0
    text = mem.read_text()
    assert "Paris" in text and "Bergen" in text and CONFLICT_OPEN in text
    assert "bbbbbb" in git(repo, "status").stdout + out.stderr + text


# -- property: disjoint edits on the two sides always merge cleanly and completely ---------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

ACTIONS = st.sampled_from(["keep", "edit", "delete"])


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 25), data=st.data())
def test_disjoint_changes_on_both_sides_always_merge_cleanly(n: int, data) -> None:  # type: ignore[no-untyped-def]
    base = {f"f{i:05d}": f"Fact {i}" for i in range(n)}
    owner = data.draw(st.lists(st.sampled_from(["ours", "theirs"]), min_size=n, max_size=n))
    action = data.draw(st.lists(ACTIONS, min_size=n, max_size=n))
    adds = data.draw(st.tuples(st.integers(0, 3), st.integers(0, 3)))

    def render(facts: dict[str, str]) -> str:
        return HEAD + "".join(fact(fid, text) for fid, text in facts.items())

    sides: dict[str, dict[str, str]] = {"ours": dict(base), "theirs": dict(base)}
    expected = dict(base)
    for (fid, text), who, act in zip(base.items(), owner, action, strict=True):
        if act == "edit":
            sides[who][fid] = expected[fid] = f"{text} edited by {who}"
        elif act == "delete":
            del sides[who][fid]
            del expected[fid]
    for who, count in zip(("ours", "theirs"), adds, strict=True):
        for k in range(count):
            items = list(sides[who].items())
            at = data.draw(st.integers(0, len(items)))
            new_id = f"{who[0]}{k:05d}"
            items.insert(at, (new_id, f"{who} new {k}"))
            sides[who] = dict(items)
            expected[new_id] = f"{who} new {k}"
    r = merged(render(base), render(sides["ours"]), render(sides["theirs"]))
    assert r.clean, r.conflicts
    got = {it.id: it.text for it in parse_bullets(r.data).items}
    assert got == expected
    assert r.data.startswith(HEAD.encode())


def test_the_same_edit_on_both_sides_differing_only_in_updated_merges_to_the_newer() -> None:
    ours = BASE.replace(fact("bbbbbb", "I live in Oslo"), fact("bbbbbb", "I live in Bergen",
                                                               updated=50))
    theirs = BASE.replace(fact("bbbbbb", "I live in Oslo"), fact("bbbbbb", "I live in Bergen",
                                                                 updated=70))
    r = merged(BASE, ours, theirs)
    assert r.clean, r.conflicts
    assert "I live in Bergen [preference] <!-- id:bbbbbb updated:70 -->" in r.data.decode()
    assert r.data.decode().count("Bergen") == 1
    # Symmetric: the newer stamp wins whichever side holds it.
    r2 = merged(BASE, theirs, ours)
    assert r2.clean and "updated:70" in r2.data.decode()


def test_a_fact_only_touched_on_one_side_takes_the_other_sides_edit() -> None:
    touched = BASE.replace(fact("aaaaaa", "I like tea"), fact("aaaaaa", "I like tea",
                                                              updated=90))
    edited = BASE.replace(fact("aaaaaa", "I like tea"), fact("aaaaaa", "I like coffee",
                                                             updated=40))
    for ours, theirs in ((touched, edited), (edited, touched)):
        r = merged(BASE, ours, theirs)
        assert r.clean and "I like coffee" in r.data.decode()
        assert "I like tea" not in r.data.decode()


def test_a_conflict_block_shows_this_clones_version_first_during_a_rebase() -> None:
    upstream = BASE.replace("I live in Oslo", "I live in Bergen")
    local = BASE.replace("I live in Oslo", "I live in Trondheim")
    # In a rebase git hands the upstream side as "ours" and the local commit as "theirs".
    r = merged(BASE, upstream, local, local_is_theirs=True)
    text = r.data.decode()
    assert text.index("Trondheim") < text.index("Bergen")
    r2 = merged(BASE, local, upstream)
    assert r2.data.decode().index("Trondheim") < r2.data.decode().index("Bergen")


def test_a_journal_merge_never_brings_back_the_words_of_a_permanently_forgotten_fact() -> None:
    base = b'{"id":"e1","type":"fact.remembered","record":"f1","text":"secret"}\n'
    ours = b'{"id":"e9","type":"fact.forgotten","record":"f1","permanent":true}\n'  # purged
    theirs = base + (b'{"id":"e2","type":"fact.edited","record":"f1","text":"secret 2",'
                     b'"previous_text":"secret"}\n{"id":"e3","type":"x","record":"f2"}\n')
    merged = merge_json_lines(base, ours, theirs)
    assert b"secret" not in merged
    assert merged == ours + b'{"id":"e3","type":"x","record":"f2"}\n'
