"""The parse cache (`.memvault/parsed/`) is never believed over the file: editors that keep
the size and the modification time, damaged or foreign entries, another principal's
entries; and it never keeps words a permanent forget removed.

Every check runs the real CLI in a subprocess against files changed by an outside actor
(an in-place save, a rename-style save, a copy of another principal's entry, garbage).
"""

from __future__ import annotations

import json
import marshal
import os
import random
from pathlib import Path

import pytest

from memvault import Vault
from memvault.backends.fs_git import local_backend
from memvault.core.bullets import parse_bullets
from memvault.services import parse_cache, parse_cache_forget
from memvault.services.setup import init_vault
from memvault.state_paths import PARSED
from tests.conftest import run_memvault
from tests.test_forget_crash import _forget
from tests.test_net_forgetting import clones  # noqa: F401 - a fixture: two synced clones

MEMORY = "Pilot/Memory.md"


def _mv(root: Path, *args: str, expect: int = 0) -> str:
    done = run_memvault("--vault", str(root), *args)
    assert done.returncode == expect, (args, done.stdout, done.stderr)
    return done.stdout


def _texts(root: Path, *scope: str) -> list[str]:
    out = json.loads(_mv(root, *scope, "memory", "list", "--all", "--json"))
    return sorted(f["text"] for f in out["facts"])


def _entry(root: Path, path: str = MEMORY) -> Path:
    entry = parse_cache.entry_path(root, path)
    assert entry is not None, "no parse-cache key yet"
    return root / entry


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "v"
    init_vault(root)
    v = Vault.open(root)
    for i in range(300):
        v.memory.remember(f"Fact number {i:04d} about the ferry to Porto", "other")
    v.memory.remember("My locker code is 1234", "identity")
    return root


def _entry_matches_a_full_parse(root: Path, path: str = MEMORY) -> None:
    data = (root / path).read_bytes()
    fresh = parse_bullets(data)
    cached = parse_cache._load(local_backend(root), path, data,
                               __import__("hashlib").sha256(data).hexdigest())
    assert cached is not None, f"no valid entry for {path}"
    assert cached.items == fresh.items
    assert cached.readonly_reason == fresh.readonly_reason
    assert sorted(cached.duplicate_ids) == sorted(fresh.duplicate_ids)


def test_writes_and_reads_keep_an_entry_equal_to_a_full_parse(vault: Path) -> None:
    assert "My locker code is 1234" in _texts(vault)
    _entry_matches_a_full_parse(vault)
    fact = json.loads(_mv(vault, "remember", "I drink tea", "--json"))["fact"]
    _entry_matches_a_full_parse(vault)
    _mv(vault, "memory", "edit", fact["id"], "I drink green tea")
    _entry_matches_a_full_parse(vault)
    _mv(vault, "forget", fact["id"], "--yes")
    _entry_matches_a_full_parse(vault)
    # a hand-written bullet (provisional id) and a heading typed by the user
    with (vault / MEMORY).open("a", encoding="utf-8") as fh:
        fh.write("\n## Typed in Obsidian\n\n- I sail on Sundays\n* I sail on Sundays\n")
    assert "I sail on Sundays" in _texts(vault)
    _mv(vault, "remember", "I cycle to work")
    _entry_matches_a_full_parse(vault)
    assert (vault / PARSED / ".gitignore").read_text().splitlines()[-1] == "*"


@pytest.mark.parametrize("how", ["in place", "by rename"])
def test_an_editor_save_with_the_same_size_and_mtime_is_seen(vault: Path, how: str) -> None:
    assert "My locker code is 1234" in _texts(vault)  # the entry now holds these bytes
    assert b"My locker code is 1234" in _entry(vault).read_bytes()
    path = vault / MEMORY
    before = path.stat()
    data = path.read_bytes().replace(b"locker code is 1234", b"locker code is 9876")
    if how == "in place":  # truncate, then write (same inode)
        with path.open("r+b") as fh:
            fh.truncate(0)
            fh.write(data)
    else:  # write a temp file and rename it over (a new inode)
        tmp = path.with_name(".Memory.md.swp")
        tmp.write_bytes(data)
        os.replace(tmp, path)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    texts = _texts(vault)
    assert "My locker code is 9876" in texts and "My locker code is 1234" not in texts
    _entry_matches_a_full_parse(vault)  # and the entry was replaced


def _valid_entry_with(root: Path, path: str, data: bytes, text: str) -> bytes:
    """A well-formed entry for (`path`, `data`) whose records say `text`: what a cache
    entry written by memvault for those bytes would look like if it lied."""
    doc = parse_bullets(data)
    doc.items[-1].text = text
    backend = local_backend(root)
    with backend.lock():
        parse_cache.store(backend, path, data, doc)
    return _entry(root, path).read_bytes()


def _signed(root: Path, head: bytes, body: bytes) -> bytes:
    """An entry with this head and body, signed with the clone's own key (as memvault
    would sign it)."""
    from memvault.services import parse_cache_files as files

    with files.opened(root) as folder:
        assert folder is not None
        key = files.load_key(folder)
    assert key is not None
    return files.sign(key, head) + b"\n" + head + b"\n" + body


def test_the_cache_is_really_used(vault: Path) -> None:
    """The control for the tests below: a well-formed entry of the file's exact bytes is
    what a command reads (so the other tests can fail)."""
    data = (vault / MEMORY).read_bytes()
    _valid_entry_with(vault, MEMORY, data, "WORDS FROM THE CACHE")
    assert "WORDS FROM THE CACHE" in _texts(vault)


@pytest.mark.parametrize("damage", ["garbage", "truncated", "flipped byte", "empty",
                                    "other parser", "other file", "a named pipe"])
def test_a_damaged_or_foreign_entry_is_ignored_and_rewritten(vault: Path,
                                                             damage: str) -> None:
    data = (vault / MEMORY).read_bytes()
    entry = _entry(vault)
    good = _valid_entry_with(vault, MEMORY, data, "WORDS FROM THE CACHE")
    tag, _, rest = good.partition(b"\n")
    head, _, body = rest.partition(b"\n")
    if damage == "garbage":
        bad = random.Random(1).randbytes(len(good))
    elif damage == "truncated":
        bad = good[: len(good) // 2]
    elif damage == "flipped byte":  # inside the first chunk's records
        k = len(tag) + 1 + len(head) + 1 + 20
        bad = good[:k] + bytes([good[k] ^ 0x40]) + good[k + 1:]
    elif damage == "empty":
        bad = b""
    elif damage == "other parser":
        meta = json.loads(head)
        meta["parser"] = "1/4/0.0.1/0.0/0.0"
        bad = _signed(vault, json.dumps(meta).encode(), body)  # signed with this clone's key
    elif damage == "other file":  # the entry of another memory file, of these very bytes
        lessons = "Pilot/Lessons.md"
        (vault / lessons).write_bytes(data)
        bad = _valid_entry_with(vault, lessons, data, "WORDS FROM THE CACHE")
    if damage == "a named pipe":  # opening it to read would block: never opened
        entry.unlink()
        os.mkfifo(entry)
    else:
        entry.write_bytes(bad)
    texts = _texts(vault)
    assert "WORDS FROM THE CACHE" not in texts and "My locker code is 1234" in texts
    _entry_matches_a_full_parse(vault)


def test_a_second_principal_never_reads_the_first_ones_entry(vault: Path) -> None:
    bob_memory = "Pilot/scopes/bob/Memory.md"
    Vault.open(vault, scope="bob").memory.remember("I like oolong tea", "preference")
    # bob's file holds exactly the bytes of the default principal's file
    data = (vault / MEMORY).read_bytes()
    (vault / bob_memory).write_bytes(data)
    poisoned = _valid_entry_with(vault, MEMORY, data, "WORDS FROM THE CACHE")
    assert "WORDS FROM THE CACHE" in _texts(vault)  # the default principal's entry is used
    _entry(vault, bob_memory).write_bytes(poisoned)  # ... and copied over bob's
    bob = _texts(vault, "--scope", "bob")
    assert "WORDS FROM THE CACHE" not in bob and "My locker code is 1234" in bob
    _entry_matches_a_full_parse(vault, bob_memory)


def _under_state(root: Path, needle: bytes) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in (root / ".memvault").rglob("*")
                  if p.is_file() and needle in p.read_bytes())


def test_a_permanent_forget_leaves_no_entry_with_the_words(vault: Path) -> None:
    assert "My locker code is 1234" in _texts(vault)
    assert parse_cache.entry_path(vault, MEMORY) in _under_state(vault, b"locker code is 1234")
    fact = next(f for f in json.loads(_mv(vault, "memory", "list", "--all", "--json"))["facts"]
                if "locker" in f["text"])
    _mv(vault, "forget", fact["id"], "--permanent", "--yes")
    assert _under_state(vault, b"locker code is 1234") == []
    assert "Fact number 0001 about the ferry to Porto" in _texts(vault)


def test_a_forget_killed_at_every_step_leaves_no_entry_with_the_words(tmp_path: Path) -> None:
    import shutil

    template = tmp_path / "template"
    init_vault(template)
    v = Vault.open(template)
    for i in range(50):
        v.memory.remember(f"Fact number {i:04d} about the ferry to Porto", "other")
    fact = v.memory.remember("My locker code is 1234", "identity").fact
    _texts(template)
    assert parse_cache.entry_path(template, MEMORY) in \
        _under_state(template, b"locker code is 1234")
    kill_after, total = 1, None
    while total is None or kill_after <= total:
        root = tmp_path / f"k{kill_after}"
        shutil.copytree(template, root)
        done = _forget(root, fact.id, kill_after)
        if done.returncode == 0:  # finished before the N-th fsync: that was every step
            total = kill_after - 1
        _texts(root)  # the next command completes whatever was left
        assert _under_state(root, b"locker code is 1234") == [], kill_after
        assert b"locker code is 1234" not in (root / MEMORY).read_bytes()
        shutil.rmtree(root)
        kill_after += 1
    assert total is not None and total >= 5


def test_an_entry_of_bytes_the_file_no_longer_holds_is_dropped_by_a_forget(
        vault: Path) -> None:
    """A forget that arrived without memvault reading the file since (a pull by another
    tool): `drop_stale` removes entries of bytes no file holds."""
    assert "My locker code is 1234" in _texts(vault)
    path = vault / MEMORY
    path.write_bytes(b"".join(ln for ln in path.read_bytes().splitlines(keepends=True)
                              if b"locker" not in ln))
    entry = parse_cache.entry_path(vault, MEMORY)
    assert entry in _under_state(vault, b"locker code is 1234")  # stale until read again
    assert parse_cache_forget.drop_stale(local_backend(vault)) == 1
    assert entry not in _under_state(vault, b"locker code is 1234")
    assert not any(p.startswith(PARSED) for p in _under_state(vault, b"locker"))


def test_a_reader_stores_no_entry_for_bytes_the_file_no_longer_holds(vault: Path) -> None:
    backend = local_backend(vault)
    old = (vault / MEMORY).read_bytes()
    _entry(vault).unlink()
    (vault / MEMORY).write_bytes(old.replace(b"locker code is 1234", b"locker code is 5678"))
    parse_cache.store_if_current(backend, MEMORY, old, parse_bullets(old))
    assert not _entry(vault).exists()
    parse_cache.parse(backend, MEMORY, (vault / MEMORY).read_bytes())
    assert b"locker code is 5678" in _entry(vault).read_bytes()


@pytest.mark.parametrize("by_hand", [False, True])
def test_entries_stay_equal_to_a_full_parse_across_chunks(
        tmp_path: Path, by_hand: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """Records are encoded in chunks of `CHUNK`, and a write reuses the chunks of items it
    did not change: in one process (the API, as `serve` does) and in new processes, with
    additions crossing a chunk boundary, an edit and a removal in the first chunk, and a
    hand-written line in the middle."""
    root = tmp_path / "v"
    init_vault(root)
    n = 2 * parse_cache.CHUNK - 2
    lines = [f"- Fact {i} about the ferry [other] <!-- id:f{i:05d} updated:{1_784_000_000 + i} -->"
             for i in range(n)]
    lines.insert(700, "- typed by hand in the middle" if by_hand else
                 "- in the middle [other] <!-- id:mid001 updated:1 -->")
    (root / MEMORY).write_text("# Memory\n\n" + "\n".join(lines) + "\n", encoding="utf-8")
    assert len(_texts(root)) == n + 1
    _entry_matches_a_full_parse(root)
    v = Vault.open(root)
    encoded: list[int] = []  # records encoded per chunk, by every store below

    class CountingMarshal:
        loads = staticmethod(marshal.loads)
        version = marshal.version

        @staticmethod
        def dumps(value: object) -> bytes:
            if isinstance(value, list) and value and isinstance(value[0], tuple):
                encoded.append(len(value))  # the records of one chunk
            return marshal.dumps(value)

    monkeypatch.setattr(parse_cache, "marshal", CountingMarshal)
    ids = [v.memory.remember(f"New fact {k}", "other").fact.id for k in range(4)]
    if not by_hand:  # only chunks that changed are encoded again (the second one fills up
        # with the first new fact; four full encodings would be 4 x 2,051 records)
        assert 0 < sum(encoded) <= parse_cache.CHUNK + 1 + 2 + 3, encoded
    monkeypatch.undo()
    _entry_matches_a_full_parse(root)
    v.memory.edit("f00003", "Fact 3 about the ferry, corrected")
    _entry_matches_a_full_parse(root)
    v.memory.forget(["f00010"])
    _entry_matches_a_full_parse(root)
    v.memory.remember("One more after the forget", "other")
    _entry_matches_a_full_parse(root)
    _mv(root, "remember", "From another process")
    _mv(root, "forget", ids[0], "--yes")
    _entry_matches_a_full_parse(root)
    texts = _texts(root)
    assert "Fact 3 about the ferry, corrected" in texts and "Fact 10 about the ferry" not in texts
    assert ("typed by hand in the middle" if by_hand else "in the middle") in texts
    assert "From another process" in texts
    assert len(texts) == n + 1 + 4 + 1 + 1 - 1 - 1


SKIP_THE_RULES = r"""
import sys
import memvault.core.reconcile as reconcile
def refuse(*args, **kwargs):
    sys.stderr.write("the merge-leftover rules ran\n")
    sys.stderr.flush()
    raise RuntimeError("refused")
reconcile.tidy = refuse
from memvault.cli.app import main
sys.argv = ["memvault", "--vault", sys.argv[1], "memory", "list", "--all", "--json"]
main()
"""


def test_a_hand_edited_file_is_checked_for_merge_leftovers_once_per_content(
        vault: Path) -> None:
    """A file with hand-written bullets passes the rules' quick check every time; the
    entry records that the rules found nothing, so the next command runs neither them nor
    the parser, until the bytes (or the forgotten ids) change."""
    import subprocess
    import sys

    with (vault / MEMORY).open("a", encoding="utf-8") as fh:
        fh.write("- I sail on Sundays\n- I row on Mondays\n")

    def list_without_rules() -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-c", SKIP_THE_RULES, str(vault)],
                              capture_output=True, text=True, timeout=60)

    assert "the merge-leftover rules ran" in list_without_rules().stderr  # nothing known yet
    assert "I sail on Sundays" in _texts(vault)  # the rules run, and find nothing
    _entry_matches_a_full_parse(vault)
    done = list_without_rules()
    assert done.returncode == 0, done.stderr
    assert "I row on Mondays" in {f["text"] for f in json.loads(done.stdout)["facts"]}
    # a forget changes what the rules are given: they run again
    fact = next(f for f in json.loads(done.stdout)["facts"] if "locker" in f["text"])
    _mv(vault, "forget", fact["id"], "--yes")
    (vault / MEMORY).write_bytes((vault / MEMORY).read_bytes() + b"- I swim on Fridays\n")
    assert "the merge-leftover rules ran" in list_without_rules().stderr


@pytest.mark.parametrize("data", [b"# M\r\n\r\n- a\r\n- b", b"\xef\xbb\xbf- x\n", b"- a\rb\n",
                                  b"\xff\xfe- a", b"- \xff bad\n", b"x\x00y\n"])
def test_a_lazily_split_file_is_the_file(data: bytes) -> None:
    """The lines of a cached document are split on first use (`TextFile.lazy`): the same
    bytes back, the same read-only reason and line endings, the same edits."""
    from memvault.core.lines import TextFile

    lazy, eager = TextFile.lazy(data), TextFile.parse(data)
    assert lazy.to_bytes() == data and lazy == eager and eager == lazy
    assert lazy.readonly_reason == eager.readonly_reason
    lazy, eager = TextFile.lazy(data), TextFile.parse(data)
    lazy.insert_after(len(eager.lines) - 1, "- new")
    eager.insert_after(len(eager.lines) - 1, "- new")
    assert lazy.to_bytes() == eager.to_bytes() and lazy.dominant_eol == eager.dominant_eol


def test_damaged_match_keys_are_computed_again(vault: Path) -> None:
    """The match keys stored beside each chunk's records are checked when first used; a
    damaged one is never believed (a near-duplicate or an exact duplicate still found)."""
    _texts(vault)
    entry = _entry(vault)
    good = entry.read_bytes()
    tag, _, rest = good.partition(b"\n")
    head = json.loads(rest.partition(b"\n")[0])
    rows_size, _sha, keys_size, _keys_sha = head["chunks"][0]
    # the last key is the locker fact's ("my locker code is 1234"): change one of its letters
    k = len(tag) + 1 + len(rest.partition(b"\n")[0]) + 1 + rows_size + keys_size - 3
    assert good[k:k + 3] == b"234"
    entry.write_bytes(good[:k] + b"9" + good[k + 1:])
    out = json.loads(_mv(vault, "remember", "My locker code is 1234", "--json"))
    assert out["created"] is False  # the exact duplicate, found with keys computed anew
    near = json.loads(_mv(vault, "remember", "My locker code is 12345", "--json"))
    assert [d["text"] for d in near["near_duplicates"]] == ["My locker code is 1234"]


def test_a_permanent_forget_that_arrives_through_sync_leaves_no_entry_with_the_words(
        clones: tuple[Path, Path]) -> None:  # noqa: F811 - the fixture imported above
    """Clone A has an entry holding a fact's words; the fact is forgotten permanently on
    clone B; A's `memvault sync` pulls the forget in and, before any other command runs,
    no file of A's parse cache holds the words."""
    a, b = clones
    fact = json.loads(_mv(a, "remember", "my alarm code is 8093 swift", "--json"))["fact"]
    _mv(a, "sync")
    _mv(b, "sync")
    assert "my alarm code is 8093 swift" in _texts(a)
    assert _under_state(a, b"8093 swift") and any(p.startswith(PARSED) for p in
                                            _under_state(a, b"8093 swift"))
    _mv(b, "forget", fact["id"], "--permanent", "--yes")
    _mv(b, "sync")
    _mv(a, "sync")
    assert [p for p in _under_state(a, b"8093 swift") if p.startswith(PARSED)] == []
    assert "my alarm code is 8093 swift" not in _texts(a)
