"""Adding a record at the end of a file read from the parse cache appends the new lines to
the file's bytes without splitting it into lines (`BulletDocument._append_unsplit`). The
result must be byte for byte, and item for item, what the ordinary path (split, insert,
parse again, join) gives: files without a final newline, CRLF and mixed endings, a BOM,
a multi-line last item or one with children, invalid UTF-8, and the files where the new
record does not go at the very end (a blank line, a quote or a conflict block after the
last item, frontmatter only, no items) which take the ordinary path.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memvault import Vault
from memvault.core import lines as lines_module
from memvault.core.bullets import BulletDocument, parse_bullets
from memvault.core.lines import TextFile
from memvault.services.setup import init_vault

FILES: dict[str, bytes] = {
    "plain": b"# Memory\n\n- a [other] <!-- id:aaaaaa updated:1 -->\n- b\n",
    "no final newline": b"# Memory\n\n- a\n- b",
    "crlf": b"# Memory\r\n\r\n- a\r\n- b\r\n",
    "crlf, no final newline": b"# Memory\r\n\r\n- a\r\n- b",
    "mixed, mostly crlf, no final newline": b"- a\r\n- b\r\n- c\n- d",
    "mixed, mostly lf, no final newline": b"- a\n- b\n- c\r\n- d",
    "bom, children": b"\xef\xbb\xbf# M\n- a\n  - child\n  more\n",
    "multi-line last item": b"- a\n  continued\n",
    "multi-line last item, no final newline": b"- a\n  continued",
    "nested fence in last item": b"- a\n  ```\n  code\n  ```\n",
    "nested fence never closed": b"- a\n    ```\n    code\n",
    "invalid utf-8": b"- a \xff\n",
    "same bullet twice": b"- a\n- a\n",
    "frontmatter only": b"---\ntitle: x\n---\n",
    "blank line after last item": b"- a\n\n",
    "quote after last item": b"- a\n> quote\n",
    "closed conflict block": b"- a\n<<<<<<< ours\n- b\n=======\n- c\n>>>>>>> theirs\n",
    "open conflict block": b"- a\n<<<<<<< ours\n- b\n",
    "heading only": b"# Memory\n",
}

APPENDS_UNSPLIT = {"plain", "no final newline", "crlf", "crlf, no final newline",
                   "mixed, mostly crlf, no final newline", "mixed, mostly lf, no final newline",
                   "bom, children", "multi-line last item",
                   "multi-line last item, no final newline", "nested fence in last item",
                   "nested fence never closed", "invalid utf-8", "same bullet twice"}

NEW_LINES = [
    ["- new fact [other] <!-- id:zzzzzz updated:2 -->"],
    ["- with a child <!-- id:q1q1q1 -->", "  - the child"],
    ["- x", "- y", "- z"],
    ["- an id already taken <!-- id:aaaaaa -->"],
    ["- two new <!-- id:bbbbb1 -->", "- with one id <!-- id:bbbbb1 -->"],
    ["- a"],  # hand-written, the words of a bullet already there
    ["- opens a fence <!-- id:ccccc1 -->", "```"],
]


def _shape(doc: BulletDocument) -> list[tuple[object, ...]]:
    return [(it.start, it.text_end, it.end, it.text, it.id, it.provisional, it.meta,
             it.readonly_reason) for it in doc.items]


def _as_from_cache(data: bytes) -> BulletDocument:
    """The document as the parse cache hands it out: the parsed items, lines unsplit."""
    parsed = parse_bullets(data)
    return BulletDocument(TextFile.lazy(data), parsed.items, parsed.readonly_reason,
                          parsed.duplicate_ids)


@pytest.mark.parametrize("name", sorted(FILES))
@pytest.mark.parametrize("new", NEW_LINES, ids=["one", "with child", "three", "id taken",
                                               "same id twice", "no id", "fence"])
def test_append_matches_the_ordinary_path(name: str, new: list[str]) -> None:
    data = FILES[name]
    ordinary = parse_bullets(data)
    ordinary.insert_items(list(new))
    cached = _as_from_cache(data)
    cached.insert_items(list(new))
    assert cached.file.unsplit_line_count() is not None or name not in APPENDS_UNSPLIT
    assert (cached.file.unsplit_line_count() is not None) == (name in APPENDS_UNSPLIT), name
    assert cached.to_bytes() == ordinary.to_bytes()
    assert _shape(cached) == _shape(ordinary)
    assert cached.readonly_reason == ordinary.readonly_reason
    assert {k: [it.line_no for it in v] for k, v in cached.duplicate_ids.items()} == \
        {k: [it.line_no for it in v] for k, v in ordinary.duplicate_ids.items()}
    assert parse_bullets(cached.to_bytes()).items[-1].text == ordinary.items[-1].text
    # splitting the lines afterwards (an edit or a render) sees the same file
    assert cached.file == ordinary.file
    assert cached.to_bytes() == ordinary.to_bytes()


def test_append_after_append_and_then_an_edit() -> None:
    data = FILES["crlf, no final newline"]
    ordinary, cached = parse_bullets(data), _as_from_cache(data)
    for doc in (ordinary, cached):
        doc.insert_item("- first <!-- id:aaaaa1 -->")
        doc.insert_item("- second <!-- id:aaaaa2 -->")
        doc.replace_item(doc.find("aaaaa1")[0], "- first, edited <!-- id:aaaaa1 -->")
        doc.insert_item("- third <!-- id:aaaaa3 -->")
    assert cached.to_bytes() == ordinary.to_bytes()
    assert cached.to_bytes().endswith(b"- second <!-- id:aaaaa2 -->\r\n- third <!-- id:aaaaa3 -->")
    assert _shape(cached) == _shape(ordinary)


ON_DISK = {
    "no final newline": b"# Memory\n\n- a [other] <!-- id:aaaaaa updated:1 -->",
    "crlf, no final newline": b"# Memory\r\n\r\n- a [other] <!-- id:aaaaaa updated:1 -->",
    "crlf": b"# Memory\r\n\r\n- a [other] <!-- id:aaaaaa updated:1 -->\r\n",
    "multi-line last item": b"- a\n  second line [other] <!-- id:aaaaaa updated:1 -->\n",
    "bom, children": b"\xef\xbb\xbf- a [other] <!-- id:aaaaaa updated:1 -->\n  - child\n",
}


@pytest.mark.parametrize("name", sorted(ON_DISK))
def test_remember_through_the_cache_appends_exactly(
        tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The real service on a real vault: the second `remember` reads Memory.md from the
    parse cache and appends; the file it writes is the ordinary insert of the same line."""
    root = tmp_path / "v"
    init_vault(root)
    memory = root / "Pilot" / "Memory.md"
    memory.write_bytes(ON_DISK[name])
    Vault.open(root).memory.remember("The ferry leaves at nine", "other")  # fills the cache
    before = memory.read_bytes()
    appended: list[str] = []
    real_append = lines_module._LazyTextFile.append

    def spy(self: TextFile, text: str) -> None:
        appended.append(text)
        real_append(self, text)

    monkeypatch.setattr(lines_module._LazyTextFile, "append", spy)
    result = Vault.open(root).memory.remember("Grandma's birthday is in May", "identity")
    after = memory.read_bytes()
    assert len(appended) == 1 and result.fact.id in appended[0], "the unsplit path ran"
    expected = parse_bullets(before)
    expected.insert_item(appended[0])
    assert after == expected.to_bytes()
    assert after.startswith(before.rstrip(b"\r\n"))
    texts = [it.text for it in parse_bullets(after).items]
    assert texts[-2:] == ["The ferry leaves at nine", "Grandma's birthday is in May"]


def test_the_cache_entry_after_appends_is_a_full_parse_with_its_match_keys(
        tmp_path: Path) -> None:
    """Appends reuse the entry's encoded records and match keys (whole chunks, and the
    first records of the last one); what is stored must decode to a full parse of the
    file, with every match key right, also in a new process."""
    import hashlib
    import subprocess
    import sys

    from memvault.backends.fs_git import local_backend
    from memvault.core.records import match_key
    from memvault.services import parse_cache

    root = tmp_path / "v"
    init_vault(root)
    memory = root / "Pilot" / "Memory.md"
    memory.write_text("# Memory\n\n" + "".join(
        f"- Fact {i} about the tram to Braga [other] <!-- id:f{i:05d} updated:1 -->\n"
        for i in range(1500)), encoding="utf-8")
    vault = Vault.open(root)
    vault.memory.remember("The first new fact", "other")  # parsed, entry stored
    vault.memory.remember("The second new fact", "other")  # from the entry, appended
    code = ("from memvault import Vault; import sys; "
            "Vault.open(sys.argv[1]).memory.remember('The third new fact', 'other')")
    subprocess.run([sys.executable, "-c", code, str(root)], check=True, timeout=120)
    data = memory.read_bytes()
    backend = local_backend(root)
    cached = parse_cache._load(backend, "Pilot/Memory.md", data,
                               hashlib.sha256(data).hexdigest())
    fresh = parse_bullets(data)
    assert cached is not None and cached.items == fresh.items
    assert [it.text for it in cached.items[-3:]] == [
        "The first new fact", "The second new fact", "The third new fact"]
    assert parse_cache.match_keys(backend, "Pilot/Memory.md", cached) == \
        [match_key(it.text) for it in fresh.items]
