"""Cheap change detection and a compact index: a touched-but-unchanged note is not parsed
again, an index from the previous schema is upgraded, the index stays near the size of
the Markdown, snippets come from the body, and tags never come from code, comments or
math."""

from __future__ import annotations

import json
import os
import sqlite3
import time
from pathlib import Path

from memvault import Vault
from memvault.core.notes import parse_note

WORDS = ("harbor", "lattice", "quartz", "willow", "falcon", "meadow", "copper", "ember")


def make_notes(root: Path, count: int) -> list[Path]:
    out = []
    for i in range(count):
        path = root / f"Area {i % 7}" / f"Note {i:04d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        body = " ".join(WORDS[(i * 7 + k) % len(WORDS)] + str(k % 13) for k in range(300))
        path.write_text(f"---\ntags: [t{i % 5}]\naliases: [N{i}]\n---\n# Note {i}\n\n{body}\n"
                        f"設定を開きます {i} #area/{i % 3}\n", encoding="utf-8")
        out.append(path)
    return out


def test_touching_every_mtime_reparses_nothing_and_a_real_edit_is_still_seen(vault_dir):
    paths = make_notes(vault_dir, 120)
    vault = Vault.open(vault_dir)
    assert vault.search.refresh().added >= 120
    later = time.time_ns() + 5_000_000_000
    for p in paths:  # a checkout or `cp -r` gives every file a new time, same bytes
        os.utime(p, ns=(later, later))
    paths[3].write_text(paths[3].read_text(encoding="utf-8") + "zanzibar\n", encoding="utf-8")
    os.utime(paths[3], ns=(later, later))
    result = vault.search.refresh()
    assert result.unchanged == 119 and result.updated == 1 and result.added == 0
    assert [h.path for h in vault.search.search("zanzibar")] == ["Area 3/Note 0003.md"]
    # the new times were recorded: the next refresh has nothing to do
    again = vault.search.refresh()
    assert (again.changed, again.unchanged) == (0, 0)


def test_the_index_stays_within_1_3_times_the_markdown(vault_dir):
    paths = make_notes(vault_dir, 300)
    vault = Vault.open(vault_dir)
    vault.search.rebuild()
    vault.search.close()
    markdown = sum(p.stat().st_size for p in paths)
    index = vault_dir / ".memvault" / "index.sqlite"
    size = index.stat().st_size + Path(f"{index}-wal").stat().st_size \
        if Path(f"{index}-wal").exists() else index.stat().st_size
    assert size <= 1.3 * markdown, (size, markdown)


def test_an_index_from_the_previous_schema_is_upgraded_and_notes_indexed_again(vault_dir):
    from memvault.index import schema

    make_notes(vault_dir, 5)
    db = vault_dir / ".memvault" / "index.sqlite"
    conn = sqlite3.connect(db, isolation_level=None)
    for number, migration in enumerate(schema.MIGRATIONS[:2], start=1):
        migration(conn)
        conn.execute(f"PRAGMA user_version = {number}")
    conn.execute("INSERT INTO files(path, size, mtime_ns, kind, title) "
                 "VALUES ('Area 0/Note 0000.md', 1, 1, 'note', 'Note 0000')")
    conn.execute("INSERT INTO meta(key, value) VALUES ('build_state', 'complete')")
    conn.close()
    hits = Vault.open(vault_dir).search.search("harbor0")
    assert len(hits) == 5
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == schema.SCHEMA_VERSION
    assert conn.execute("SELECT count(*) FROM files WHERE hash IS NOT NULL").fetchone()[0] >= 5


def test_snippets_come_from_the_body_never_the_frontmatter(cli, vault_dir):
    (vault_dir / "Trip.md").write_text(
        "---\nsummary: quokka island ferry schedule\nowner: me\n---\n"
        "We took the early boat and saw a quokka near the lighthouse.\n", encoding="utf-8")
    (vault_dir / "Only props.md").write_text(
        "---\ntopic: quokka\n---\nNothing about the animal down here.\n", encoding="utf-8")
    result = json.loads(cli("search", "--json", "quokka").stdout)
    snippets = {r["path"]: r["snippet"] for r in result["results"]}
    assert "**quokka** near the lighthouse" in snippets["Trip.md"]
    assert snippets["Only props.md"].startswith("Nothing about the animal")
    assert not any("summary" in s or "topic" in s or "---" in s for s in snippets.values())


def test_tags_never_come_from_code_comments_or_math():
    text = ("---\ntags: [front]\n---\n"
            "Real #one, `#inline` and ``#two `x` `` code.\n\n"
            "> ```css\n> a { color: #ff0000; }\n> ```\n\n"
            "- a list item #listed\n"
            "    ```\n    #fenced-in-list\n    ```\n\n"
            "## Not a list any more\n\n    #indented-code\n\n"
            "%% a comment #hidden\nover two lines #hidden2 %% and #after\n\n"
            "<!-- html #comment -->\n"
            "Cost $5 and math $x #m$ and $$\n#display\n$$ then #last\n")
    assert parse_note("n.md", text).tags == ["front", "one", "listed", "after", "last"]


def test_frontmatter_is_read_tolerantly():
    crlf = parse_note("c.md", "---\r\ntags: [a, b]\r\naliases: Nick\r\n---\r\nBody #c\r\n")
    assert crlf.tags == ["a", "b", "c"] and crlf.aliases == ["Nick"]
    assert crlf.body.startswith("Body")
    unclosed = parse_note("u.md", "---\ntags: [x]\nno end here\n")
    assert unclosed.tags == [] and "no end here" in unclosed.body
    listy = parse_note("l.md", "---\n- just\n- a list\n---\ntext\n")
    assert listy.frontmatter_error == "frontmatter is not key: value pairs"
    assert "just" in listy.properties


def test_a_first_big_index_reports_progress_also_when_stderr_is_not_a_terminal(vault_dir):
    from tests.conftest import run_memvault

    make_notes(vault_dir, 320)
    done = run_memvault("--vault", str(vault_dir), "search", "--json", "harbor0")
    assert done.returncode == 0, done.stderr
    lines = [ln for ln in done.stderr.splitlines() if ln.startswith("indexing notes:")]
    assert lines and lines[0].startswith("indexing notes: 50 of 32")
    assert lines[-1].endswith("files (100%)")
    assert json.loads(done.stdout)["results"]


def test_a_refresh_with_nothing_changed_compares_one_signature_and_still_sees_every_change(
        vault_dir):
    """After a refresh stores the scan's signature, the next one compares that value; a
    touch, a same-size edit, a rename (same size and time), a new file, a removal and a
    change indexed by a partial refresh are all still seen."""
    from memvault.index.store import IndexStore

    paths = make_notes(vault_dir, 30)
    vault = Vault.open(vault_dir)
    vault.search.refresh()

    def stored() -> str | None:
        conn = sqlite3.connect(vault_dir / ".memvault" / "index.sqlite")
        try:
            row = conn.execute("SELECT value FROM meta WHERE key = 'files_signature'").fetchone()
            return row[0] if row else None
        finally:
            conn.close()

    first = stored()
    assert first is not None
    assert vault.search.refresh().changed == 0 and stored() == first

    text = paths[4].read_text(encoding="utf-8")
    st = paths[4].stat()
    paths[4].write_text(text.replace("harbor", "zebras", 1), encoding="utf-8")  # same size
    os.utime(paths[4], ns=(st.st_atime_ns, st.st_mtime_ns + 1_000))
    assert vault.search.refresh().updated == 1
    assert [h.path for h in vault.search.search("zebras")] == ["Area 4/Note 0004.md"]
    assert stored() not in (None, first)

    os.rename(paths[5], paths[5].with_name("Renamed.md"))  # size and time unchanged
    result = vault.search.refresh()
    assert (result.added, result.removed) == (1, 1)
    assert [h.path for h in vault.search.search("N5")] == ["Area 5/Renamed.md"]

    # two notes trade contents by renames: the same paths, sizes and times in total
    a, b = paths[7], paths[8]
    os.utime(a, ns=(a.stat().st_atime_ns, 1_700_000_000_000_000_000))
    os.utime(b, ns=(b.stat().st_atime_ns, 1_700_000_500_000_000_000))
    vault.search.refresh()
    assert vault.search.refresh().changed == 0
    swap = a.with_name("swap.tmp")
    os.rename(a, swap)
    os.rename(b, a)
    os.rename(swap, b)
    assert vault.search.refresh().changed > 0
    assert [h.path for h in vault.search.search("N7")] == ["Area 1/Note 0008.md"]

    (vault_dir / "Fresh.md").write_text("# Fresh\n\nquokka\n", encoding="utf-8")
    paths[6].unlink()
    result = vault.search.refresh()
    assert (result.added, result.removed) == (1, 1)

    # a change indexed by a partial refresh (a watcher's) clears the signature; the full
    # refresh after it finds nothing more to do and stores a new one
    (vault_dir / "Fresh.md").write_text("# Fresh\n\nquokkas and wombats\n", encoding="utf-8")
    store = IndexStore(vault_dir, vault.config.home)
    assert store.refresh_paths({"Fresh.md"}).updated == 1
    assert stored() is None
    store.close()
    assert vault.search.refresh().changed == 0 and stored() is not None
    assert [h.path for h in vault.search.search("wombats")] == ["Fresh.md"]
