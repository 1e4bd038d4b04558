"""The contract every backend honours, run on each one the registry builds: the local
folder (fs), the GitHub backend (real PyGithub over real HTTP against the loopback
stand-in, tests/github_standin.py) and the in-memory backend of tests/memory_backend.py,
which is built from the registry alone in under 100 lines.

Each test opens the store afresh where it checks what was stored, so what is asserted
is what another process (or machine) would see, not what one object remembers.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from memvault import Vault
from memvault.backends import registry
from memvault.backends.base import ANY, MISSING, Backend, Change, policy_writer
from memvault.config import Config
from memvault.errors import Conflict, InvalidInput
from memvault.services.setup import init_vault
from tests import memory_backend
from tests.github_standin import GithubStandin
from tests.test_github_backend import TOKEN, use_github

KINDS = ["fs", "github", "memory"]


@dataclass
class Store:
    kind: str
    root: Path
    open: Callable[[], Backend]
    server: GithubStandin | None = None


@pytest.fixture(params=KINDS)
def store(request, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Store]:
    root = tmp_path / "vault"
    server = None
    if request.param == "fs":
        root.mkdir()
    elif request.param == "github":
        server = GithubStandin(token=TOKEN).start()
        use_github(monkeypatch, server)
        server.commit_files({"README.md": b"# my vault\n"}, "initial commit")
    kind = registry.backend_type(request.param)
    try:
        yield Store(request.param, root, lambda: kind.open(root, Config()), server)
    finally:
        if server is not None:
            server.stop()
        memory_backend.STORES.pop(root, None)
    if request.param != "fs":
        assert not root.exists(), "a remote store wrote the local folder"


# -- files ------------------------------------------------------------------------------------


def test_a_missing_file_reads_as_none_and_lists_nothing(store: Store) -> None:
    b = store.open()
    assert b.read("t/none.md") is None
    assert b.list("t") == [] and b.versions("t") == {}


def test_a_write_is_read_back_with_its_version_by_a_fresh_open(store: Store) -> None:
    version = store.open().write("t/a.md", b"hello\r\nworld", expected=MISSING)
    blob = store.open().read("t/a.md")
    assert blob is not None and blob.data == b"hello\r\nworld" and blob.version == version
    assert store.open().versions("t") == {"t/a.md": version}


def test_a_stale_version_is_a_conflict_and_changes_nothing(store: Store) -> None:
    b = store.open()
    first = b.write("t/a.md", b"one\n", expected=MISSING)
    b.write("t/a.md", b"two\n", expected=first)
    with pytest.raises(Conflict):
        store.open().write("t/a.md", b"three\n", expected=first)
    with pytest.raises(Conflict):
        store.open().write("t/a.md", b"four\n", expected=MISSING)
    assert store.open().read("t/a.md").data == b"two\n"  # type: ignore[union-attr]


def test_delete_checks_the_version_and_a_missing_file_is_no_error(store: Store) -> None:
    b = store.open()
    first = b.write("t/a.md", b"one\n")
    second = b.write("t/a.md", b"two\n", expected=first)
    with pytest.raises(Conflict):
        store.open().delete("t/a.md", expected=first)
    store.open().delete("t/a.md", expected=second)
    store.open().delete("t/a.md")
    assert store.open().read("t/a.md") is None


def test_append_creates_the_file_and_starts_a_fresh_line_after_a_torn_one(store: Store) -> None:
    b = store.open()
    b.append("t/log.jsonl", b'{"n":1}\n')
    b.append("t/log.jsonl", b'{"n":2}\n')
    store.open().write("t/log.jsonl", b'{"n":1}\n{"n":2}\n{"n":', expected=ANY)
    store.open().append("t/log.jsonl", b'{"n":3}\n')
    assert store.open().read("t/log.jsonl").data == \
        b'{"n":1}\n{"n":2}\n{"n":\n{"n":3}\n'  # type: ignore[union-attr]


def test_list_is_sorted_and_holds_only_the_folder_asked_for(store: Store) -> None:
    store.open().commit([Change("t/b/c.md", b"c\n"), Change("t/a.md", b"a\n"),
                         Change("tt/x.md", b"x\n")])
    b = store.open()
    assert b.list("t") == ["t/a.md", "t/b/c.md"]
    assert b.list("t/b") == ["t/b/c.md"]
    assert {"t/a.md", "t/b/c.md", "tt/x.md"} <= set(b.list())


def test_versions_are_the_versions_read_returns(store: Store) -> None:
    store.open().commit([Change("t/a.md", b"a\n"), Change("t/b/c.md", b"c\n")])
    b = store.open()
    assert b.versions("t") == {p: b.read(p).version for p in b.list("t")}  # type: ignore[union-attr]


def test_read_many_is_read_of_each_path_that_exists(store: Store) -> None:
    store.open().commit([Change(f"t/n{i}.md", f"note {i}\n".encode()) for i in range(12)])
    b = store.open()
    wanted = [f"t/n{i}.md" for i in range(12)] + ["t/none.md"]
    many = b.read_many(wanted)
    assert set(many) == set(wanted[:-1])
    assert all(many[p] == b.read(p) for p in many)


def test_a_commit_is_all_or_nothing(store: Store) -> None:
    b = store.open()
    old = b.write("t/kept.md", b"kept\n", expected=MISSING)
    with pytest.raises(Conflict):
        b.commit([Change("t/new.md", b"new\n", MISSING), Change("t/kept.md", b"x\n", MISSING)])
    fresh = store.open()
    assert fresh.read("t/new.md") is None and fresh.read("t/kept.md").data == b"kept\n"  # type: ignore[union-attr]
    fresh.commit([Change("t/kept.md", None, old), Change("t/new.md", b"new\n", MISSING)])
    again = store.open()
    assert again.read("t/kept.md") is None and again.read("t/new.md").data == b"new\n"  # type: ignore[union-attr]


@pytest.mark.parametrize("path", ["../outside.md", "/etc/passwd", "t/../../outside.md"])
def test_paths_leaving_the_vault_are_refused(store: Store, path: str) -> None:
    with pytest.raises(InvalidInput):
        store.open().write(path, b"x\n")


def test_policy_md_is_written_only_by_the_policy_writer(store: Store) -> None:
    b = store.open()
    for attempt in (lambda: b.write("P/Policy.md", b"x\n"),
                    lambda: b.append("P/policy.MD", b"x\n"),
                    lambda: b.commit([Change("P/Policy.md", b"x\n")])):
        with pytest.raises(InvalidInput):
            attempt()
    assert store.open().read("P/Policy.md") is None
    with policy_writer():
        b.write("P/Policy.md", b"max 1\n")
    assert store.open().read("P/Policy.md").data == b"max 1\n"  # type: ignore[union-attr]


def test_the_lock_is_re_entrant(store: Store) -> None:
    b = store.open()
    with b.lock(), b.lock():
        b.write("t/a.md", b"a\n")
    assert store.open().read("t/a.md") is not None


# -- capabilities -----------------------------------------------------------------------------


def test_each_capability_comes_with_what_it_promises(store: Store) -> None:
    b = store.open()
    caps = b.capabilities
    assert isinstance(b, Backend)
    b.write("t/a.md", b"on disk?\n")
    if caps.local_root is not None:
        assert (caps.local_root / "t/a.md").read_bytes() == b"on disk?\n"
        assert b.link_target("t/a.md") is None  # type: ignore[attr-defined]
        b.remove_stale_temps(["t/a.md"])  # type: ignore[attr-defined]
    else:
        assert not store.root.exists()
    if caps.git_dir is not None:
        assert caps.git_dir.is_dir()
    if caps.cache_dir is not None:
        b.drop_caches()  # type: ignore[attr-defined]
        assert not caps.cache_dir.exists()
    if caps.one_commit:
        assert not b.in_batch()  # type: ignore[attr-defined]


def test_a_batch_lands_whole_or_not_at_all_where_the_backend_groups_writes(store: Store) -> None:
    b = store.open()
    if not b.capabilities.one_commit:
        # No grouping to lean on: nothing offers a batch, and each write is whole and
        # visible to a fresh open the moment it returns.
        assert not hasattr(b, "batch")
        b.write("t/a.md", b"a\n")
        assert store.open().read("t/a.md").data == b"a\n"  # type: ignore[union-attr]
        b.append("t/log.jsonl", b"1\n")
        assert store.open().read("t/log.jsonl").data == b"1\n"  # type: ignore[union-attr]
        return
    with b.batch("two files"):  # type: ignore[attr-defined]
        b.write("t/a.md", b"a\n")
        b.append("t/log.jsonl", b"1\n")
        assert store.open().read("t/a.md") is None  # nothing visible before the end
    assert store.open().read("t/log.jsonl").data == b"1\n"  # type: ignore[union-attr]
    with pytest.raises(RuntimeError), b.batch("cut"):  # type: ignore[attr-defined]
        b.write("t/b.md", b"b\n")
        raise RuntimeError("killed half-way")
    assert store.open().read("t/b.md") is None


# -- the vault on top of it -------------------------------------------------------------------


def _vault(store: Store) -> Vault:
    init_vault(store.root, backend=None if store.kind == "fs" else store.open())
    return Vault.open(store.root, backend=store.open())


def test_a_vault_remembers_edits_forgets_and_restores(store: Store) -> None:
    vault = _vault(store)
    fact = vault.memory.remember("I prefer concise answers", "preference").fact
    other = vault.memory.remember("My project is Aurora", "project").fact
    vault.memory.edit(fact.id, "I prefer very concise answers")
    vault.memory.forget([other.id])
    again = Vault.open(store.root, backend=store.open())
    assert [f.text for f in again.memory.all()] == ["I prefer very concise answers"]
    assert again.tombstones.is_tombstoned("My project is Aurora")
    assert again.memory.restore(other.id).text == "My project is Aurora"


def test_search_finds_notes_and_follows_edits_on_every_backend_that_can(store: Store) -> None:
    vault = _vault(store)
    assert vault.search.available()  # every backend searches: a local root or a cache
    b = vault.backend
    b.write("Notes/tea.md", b"# Tea\n\nOolong is my favourite tea.\n")
    b.write("Notes/rust.md", b"# Rust\n\nBorrow checker notes.\n")
    assert [h.path for h in vault.search.search("oolong")] == ["Notes/tea.md"]
    b.write("Notes/tea.md", b"# Tea\n\nSencha now, every morning.\n")
    b.delete("Notes/rust.md")
    fresh = Vault.open(store.root, backend=store.open())
    assert fresh.search.search("oolong") == []
    assert [h.path for h in fresh.search.search("sencha")] == ["Notes/tea.md"]
    assert fresh.search.search("borrow") == []


def test_search_follows_a_note_that_became_a_folder_and_back(store: Store) -> None:
    vault = _vault(store)
    assert vault.search.available()  # every backend searches: a local root or a cache
    b = vault.backend
    b.write("Notes/x.md", b"# X\n\nA walrus.\n")
    assert [h.path for h in vault.search.search("walrus")] == ["Notes/x.md"]
    b.delete("Notes/x.md")
    b.write("Notes/x.md/inner.md", b"A narwhal.\n")
    fresh = Vault.open(store.root, backend=store.open())
    assert [h.path for h in fresh.search.search("narwhal")] == ["Notes/x.md/inner.md"]
    assert fresh.search.search("walrus") == []
    b.delete("Notes/x.md/inner.md")
    if b.capabilities.local_root is not None:
        (b.capabilities.local_root / "Notes/x.md").rmdir()  # a folder is not a file
    b.write("Notes/x.md", b"A dugong.\n")
    again = Vault.open(store.root, backend=store.open())
    assert [h.path for h in again.search.search("dugong")] == ["Notes/x.md"]


def test_recall_ranks_facts_by_relevance_wherever_search_works(store: Store) -> None:
    vault = _vault(store)
    tea = vault.memory.remember("I drink oolong tea every morning").fact
    vault.memory.remember("My project is called Aurora")
    relevant = Vault.open(store.root, backend=store.open()).recall.relevance("oolong tea")
    assert list(relevant) == [tea.id]


def test_a_permanent_forget_leaves_no_copy_of_the_words_on_this_machine(store: Store) -> None:
    vault = _vault(store)
    assert vault.search.available()  # every backend searches: a local root or a cache
    fact = vault.memory.remember("My PIN is Q4242Z").fact
    assert [h.id for h in vault.search.search_memory("Q4242Z", semantic=False)] == [fact.id]
    vault.memory.forget([fact.id], permanent=True)
    assert Vault.open(store.root, backend=store.open()).search.search_memory(
        "Q4242Z", semantic=False) == []
    cache = vault.backend.capabilities.cache_dir
    if cache is not None and cache.exists():
        assert not any(b"q4242z" in p.read_bytes().lower()  # the index keeps words case-folded
                       for p in cache.rglob("*") if p.is_file())


# -- the registry -----------------------------------------------------------------------------


def test_the_in_memory_backend_is_under_100_lines_and_chosen_by_name(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert len(inspect.getsource(memory_backend).splitlines()) < 100
    assert "memory" in registry.names()
    monkeypatch.setenv("MEMVAULT_BACKEND", "memory")
    root = tmp_path / "elsewhere"
    init_vault(root, backend=registry.backend_type("memory").open(root, Config()))
    vault = Vault.open(root)
    assert vault.backend.capabilities.local_root is None and not root.exists()
    vault.memory.remember("I like tea")
    assert [f.text for f in Vault.open(root).memory.all()] == ["I like tea"]
    memory_backend.STORES.pop(root, None)


def test_an_unknown_backend_names_the_registered_ones(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMVAULT_BACKEND", "ftp")
    with pytest.raises(InvalidInput, match="unknown backend 'ftp' \\(use fs or github"):
        Vault.open(tmp_path)
