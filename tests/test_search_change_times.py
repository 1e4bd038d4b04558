"""An edit that keeps a file's size and puts its modification time back (a tool that
restores times: `cp -p`, `rsync -t`, `touch -r`, an editor keeping the old time; a file
system with a coarse clock) is still seen by search, because the index also compares
each file's change time, which no program can set back. A copy or checkout that gives
every file a new change time without changing a byte costs a hash of each file, never a
parse."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest

from memvault import Vault
from tests.conftest import run_memvault
from tests.test_search_change_detection import make_notes


def _edit_keeping_size_and_time(path: Path, old: bytes, new: bytes, how: str) -> None:
    """Replace `old` by `new` (same length) in place or by rename, then put the file's
    modification time back, as `touch -r` or a time-restoring tool would."""
    assert len(old) == len(new)
    st = path.stat()
    data = path.read_bytes()
    assert old in data
    changed = data.replace(old, new)
    if how == "in place":
        with open(path, "r+b") as fh:  # an editor's truncate-free overwrite
            fh.write(changed)
    else:
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_bytes(changed)
        os.replace(tmp, path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns) == (st.st_size, st.st_mtime_ns)


def _paths(done: subprocess.CompletedProcess[str]) -> list[str]:
    assert done.returncode == 0, done.stderr
    return [r["path"] for r in json.loads(done.stdout)["results"]]


@pytest.mark.parametrize("how", ["in place", "by rename"])
def test_a_same_size_note_edit_with_its_time_put_back_is_found_by_search(vault_dir, how):
    """Through the console script (its quick path first, then the ordinary command)."""
    note = vault_dir / "Trip.md"
    note.write_text("We flew a zeppelin over the bay.\n", encoding="utf-8")
    assert _paths(run_memvault("--vault", str(vault_dir), "search", "--json",
                               "zeppelin")) == ["Trip.md"]
    # the quick path answers from the index now; then the edit that hides from the clock
    assert _paths(run_memvault("--vault", str(vault_dir), "search", "--json",
                               "zeppelin")) == ["Trip.md"]
    _edit_keeping_size_and_time(note, b"zeppelin", b"walruses", how)
    for _ in range(2):  # the refreshing search, then the quick path on the new index
        assert _paths(run_memvault("--vault", str(vault_dir), "search", "--json",
                                   "walruses")) == ["Trip.md"]
        assert _paths(run_memvault("--vault", str(vault_dir), "search", "--json",
                                   "zeppelin")) == []


@pytest.mark.parametrize("how", ["in place", "by rename"])
def test_a_same_size_fact_edit_with_its_time_put_back_is_found_by_memory_search(vault_dir,
                                                                                how):
    vault = Vault.open(vault_dir)
    vault.memory.remember("my locker code is quokka4471")
    vault.memory.remember("I prefer metric units")
    found = run_memvault("--vault", str(vault_dir), "search", "--memory", "--json",
                         "quokka4471")
    assert "quokka4471" in found.stdout, found.stderr
    memory = vault_dir / vault.layout.memory
    _edit_keeping_size_and_time(memory, b"quokka4471", b"wombat2288", how)
    stale = run_memvault("--vault", str(vault_dir), "search", "--memory", "--json",
                         "quokka4471")
    assert stale.returncode == 0, stale.stderr
    texts = [r["text"] for r in json.loads(stale.stdout)["results"]]
    assert not any("quokka4471" in t for t in texts), texts
    fresh = run_memvault("--vault", str(vault_dir), "search", "--memory", "--json",
                         "wombat2288")
    assert "my locker code is wombat2288" in fresh.stdout
    # the old words are gone from the index file too, not only from the answers
    index = vault_dir / ".memvault" / "index.sqlite"
    assert b"quokka4471" not in index.read_bytes()


def _hash_only(result) -> None:  # type: ignore[no-untyped-def]
    assert (result.added, result.updated, result.removed) == (0, 0, 0), result
    assert result.unchanged == result.scanned > 0, result


def test_a_copy_with_cp_a_is_hashed_not_parsed_and_an_edit_in_it_is_seen(tmp_path, vault_dir):
    make_notes(vault_dir, 60)
    vault = Vault.open(vault_dir)
    vault.memory.remember("my locker code is quokka4471")
    vault.search.refresh()
    vault.search.close()
    copy = tmp_path / "copy"
    done = subprocess.run(["cp", "-a", str(vault_dir), str(copy)], capture_output=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    copied = Vault.open(copy)
    _hash_only(copied.search.refresh())  # every change time is new; no byte is
    again = copied.search.refresh()
    assert (again.changed, again.unchanged) == (0, 0)  # the new times were recorded
    # `chmod -R` changes only change times too
    subprocess.run(["chmod", "-R", "u+rw", str(copy)], check=True, timeout=60)
    _hash_only(copied.search.refresh())
    note = copy / "Area 2" / "Note 0002.md"
    _edit_keeping_size_and_time(note, b"harbor", b"zebras", "in place")
    result = copied.search.refresh()
    assert (result.updated, result.unchanged) == (1, 0)
    assert [h.path for h in copied.search.search("zebras")] == ["Area 2/Note 0002.md"]
    copied.search.close()


def test_an_index_without_change_times_is_upgraded_by_hashing(vault_dir):
    """An index written before change times were kept: the upgrade hashes each file once
    and parses only the one edited (same size, time put back) before the upgrade."""
    from memvault.index import schema

    make_notes(vault_dir, 20)
    vault = Vault.open(vault_dir)
    vault.search.refresh()
    vault.search.close()
    db = vault_dir / ".memvault" / "index.sqlite"
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("ALTER TABLE files DROP COLUMN ctime_ns")
    conn.execute(f"PRAGMA user_version = {schema.SCHEMA_VERSION - 1}")
    conn.close()
    _edit_keeping_size_and_time(vault_dir / "Area 3" / "Note 0003.md", b"harbor",
                                b"zebras", "by rename")
    vault = Vault.open(vault_dir)
    result = vault.search.refresh()
    assert result.updated == 1 and result.added == 0 and result.unchanged == result.scanned - 1
    assert [h.path for h in vault.search.search("zebras")] == ["Area 3/Note 0003.md"]
    vault.search.close()
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == schema.SCHEMA_VERSION
    assert conn.execute("SELECT count(*) FROM files WHERE ctime_ns IS NULL").fetchone()[0] == 0
    conn.close()


def test_a_watcher_refresh_of_one_path_sees_a_same_size_edit(vault_dir):
    """The partial refresh a watcher (or `serve`) asks for compares change times too."""
    from memvault.index.store import IndexStore

    note = vault_dir / "Trip.md"
    note.write_text("We flew a zeppelin over the bay.\n", encoding="utf-8")
    vault = Vault.open(vault_dir)
    vault.search.refresh()
    vault.search.close()
    _edit_keeping_size_and_time(note, b"zeppelin", b"walruses", "in place")
    store = IndexStore(vault_dir, vault.config.home)
    assert store.refresh_paths({"Trip.md"}).updated == 1
    store.close()
