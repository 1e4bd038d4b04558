"""A symlink in the vault is judged by where it leads: a link to another principal's
memory (or into any memory home, or into `.memvault/`) is never indexed, so search never
shows one principal's words to another through it, on the quick path of the CLI and on
the ordinary command alike; the link is named once as a note that could not be read."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from memvault.services.setup import init_vault
from tests.conftest import run_memvault

SECRET = "my zeppelin pin is 4711"


def _mv(root: Path, *args: str) -> str:
    done = run_memvault("--vault", str(root), *args, timeout=120)
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done.stdout


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "v"
    init_vault(root)
    (root / "A.md").write_text("alpha zeppelin note: 4711 and green are not secrets here\n")
    _mv(root, "--scope", "other", "remember", SECRET)
    _mv(root, "remember", "I like green tea")
    return root


def _home_file(root: Path, scope: str | None) -> Path:
    found = [p for p in root.rglob("Memory.md")
             if (scope in p.parts if scope else "scopes" not in p.parts)]
    assert len(found) == 1, found
    return found[0]


@pytest.mark.parametrize("target", ["other", "own-home", "state-folder"])
def test_a_link_to_memory_or_state_is_never_searchable(vault: Path, target: str) -> None:
    if target == "other":
        dest = _home_file(vault, "other")
    elif target == "own-home":
        dest = _home_file(vault, None)  # the default principal's: shown to every principal
    else:
        dest = vault / ".memvault/safety/copy.md"
        dest.write_text(f"- {SECRET}\n")
    os.symlink(os.path.relpath(dest, vault), vault / "PeekRel.md")
    os.symlink(dest, vault / "Peek.md")
    word = "4711" if target != "own-home" else "green"
    for scope in ((), ("--scope", "third")):
        for _ in range(2):  # the first search refreshes the index; the second is quick
            hits = json.loads(_mv(vault, *scope, "search", "--json", word))["results"]
            assert [h["path"] for h in hits if h["path"].startswith("Peek")] == []
        human = _mv(vault, *scope, "search", word)
        assert "Peek" not in human and "pin is 4711" not in human
    from memvault.cli.quick import _search, parse

    options = parse(["--vault", str(vault), "search", "--json", word])
    assert options is not None
    quick = _search(options)  # the quick path answers in this state, without the links
    assert quick is not None and quick and not [h for h in quick if h.path.startswith("Peek")]
    status = json.loads(_mv(vault, "index", "status", "--json"))
    reasons = {item["path"]: item["problem"] for item in status["skipped"]}
    assert set(reasons) >= {"Peek.md", "PeekRel.md"}
    assert "symlink" in reasons["PeekRel.md"] and "\n" not in reasons["PeekRel.md"]


def test_a_link_to_an_ordinary_note_is_still_searched(vault: Path) -> None:
    (vault / "Notes").mkdir()
    (vault / "Notes/Trip.md").write_text("the quokka trip to Rottnest\n")
    os.symlink("Notes/Trip.md", vault / "TripLink.md")
    paths = {h["path"] for h in json.loads(_mv(vault, "search", "--json", "quokka"))["results"]}
    assert paths == {"Notes/Trip.md", "TripLink.md"}


def test_an_index_made_before_links_were_judged_forgets_the_link(vault: Path) -> None:
    """An index built when links were read like any note: after the upgrade (the index
    schema migration) the link's words are gone without any file changing."""
    import sqlite3

    from memvault.index import schema

    os.symlink(os.path.relpath(_home_file(vault, "other"), vault), vault / "PeekRel.md")
    _mv(vault, "search", "--json", "tea")
    index = vault / ".memvault/index.sqlite"
    conn = sqlite3.connect(index)
    # what the old index held: the link read as a note, in step with the files
    conn.execute("UPDATE files SET kind = 'note', problem = NULL WHERE path = 'PeekRel.md'")
    fid = conn.execute("SELECT id FROM files WHERE path = 'PeekRel.md'").fetchone()[0]
    conn.execute(f"PRAGMA user_version = {schema.SCHEMA_VERSION - 1}")
    conn.commit()
    conn.close()
    assert fid is not None
    hits = json.loads(_mv(vault, "search", "--json", "4711"))["results"]
    assert [h["path"] for h in hits if h["path"] == "PeekRel.md"] == []
    status = json.loads(_mv(vault, "index", "status", "--json"))
    assert "PeekRel.md" in {item["path"] for item in status["skipped"]}
