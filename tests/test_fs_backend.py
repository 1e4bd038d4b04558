"""The fs backend and vault-relative paths: CAS, atomic writes, path safety."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from memvault.backends.base import ANY, MISSING, Change
from memvault.backends.fs import FsBackend, content_version
from memvault.core.paths import check_safe_name, check_scope, clean_vault_path, safe_name
from memvault.errors import Conflict, InvalidInput, ReadOnly, VaultError


@pytest.fixture
def root(tmp_path: Path) -> Path:
    r = tmp_path / "vault"
    r.mkdir()
    return r


@pytest.fixture
def fs(root: Path) -> FsBackend:
    return FsBackend(root)


# -- clean_vault_path --------------------------------------------------------------------


@pytest.mark.parametrize("path", ["../x.md", "a/../../x.md", "a/..", "..\\x.md", "/etc/passwd",
                                  "\\\\server\\share", "C:/x.md", "c:x.md", "a\x00b", "", ".",
                                  "./", "a/b/../../.."])
def test_clean_vault_path_refuses_paths_that_escape_or_name_nothing(path: str) -> None:
    with pytest.raises(InvalidInput):
        clean_vault_path(path)


@pytest.mark.parametrize(("path", "clean"), [("Pilot//Memory.md", "Pilot/Memory.md"),
                                             ("./Pilot/./Memory.md", "Pilot/Memory.md"),
                                             ("Pilot\\Memory.md", "Pilot/Memory.md"),
                                             ("Pilot/", "Pilot")])
def test_clean_vault_path_normalises(path: str, clean: str) -> None:
    assert clean_vault_path(path) == clean


@pytest.mark.parametrize("name", ["CON", "nul.md", "a?b", 'say "hi"', "ends.", " lead",
                                  "a/b", "x#y", "^a", "[a]", "a\tb", ""])
def test_check_safe_name_refuses_names_obsidian_or_windows_cannot_hold(name: str) -> None:
    with pytest.raises(InvalidInput):
        check_safe_name(name)


def test_safe_name_slugs_to_a_valid_name() -> None:
    for raw in ['What? "now"', "CON", "a/b\\c:d", "...", "trail. "]:
        check_safe_name(safe_name(raw))


@pytest.mark.parametrize("scope", ["../x", "a/b", "", ".hidden", "con", "x" * 65, "a..b",
                                   "wallet:1", "dot."])
def test_check_scope_refuses_unsafe_names(scope: str) -> None:
    with pytest.raises(InvalidInput):
        check_scope(scope)


# -- FsBackend path safety ---------------------------------------------------------------


@pytest.mark.parametrize("path", ["../outside.md", "/tmp/outside.md", "a/../../outside.md"])
def test_backend_refuses_paths_escaping_the_vault(fs: FsBackend, root: Path, path: str) -> None:
    for op in (lambda: fs.read(path), lambda: fs.write(path, b"x"),
               lambda: fs.append(path, b"x"), lambda: fs.delete(path)):
        with pytest.raises(InvalidInput):
            op()
    assert not (root.parent / "outside.md").exists()


def test_backend_never_writes_inside_dot_obsidian(fs: FsBackend, root: Path) -> None:
    (root / ".obsidian").mkdir()
    (root / ".obsidian" / "app.json").write_bytes(b"{}")
    for path in (".obsidian/app.json", ".Obsidian/new.json", "./.obsidian/x"):
        with pytest.raises(InvalidInput, match="obsidian"):
            fs.write(path, b"owned")
    with pytest.raises(InvalidInput):
        fs.commit([Change(".obsidian/app.json", b"owned")])
    assert (root / ".obsidian" / "app.json").read_bytes() == b"{}"
    assert fs.read(".obsidian/app.json").data == b"{}"  # reading is fine


def test_backend_refuses_a_symlinked_file_pointing_outside(fs: FsBackend, root: Path,
                                                           tmp_path: Path) -> None:
    outside = tmp_path / "secret.md"
    outside.write_bytes(b"secret\n")
    (root / "Pilot").mkdir()
    (root / "Pilot" / "Memory.md").symlink_to(outside)
    with pytest.raises(InvalidInput, match="Pilot/Memory.md"):
        fs.read("Pilot/Memory.md")
    with pytest.raises(InvalidInput, match="outside the vault"):
        fs.write("Pilot/Memory.md", b"overwritten")
    assert outside.read_bytes() == b"secret\n"
    assert (root / "Pilot" / "Memory.md").is_symlink()


def test_backend_refuses_a_symlinked_folder_pointing_outside(fs: FsBackend, root: Path,
                                                             tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (root / "Pilot").symlink_to(outside, target_is_directory=True)
    with pytest.raises(InvalidInput, match="outside the vault"):
        fs.write("Pilot/Memory.md", b"x")
    with pytest.raises(InvalidInput):
        fs.append("Pilot/events.jsonl", b"x")
    assert list(outside.iterdir()) == []


def test_symlink_inside_the_vault_is_allowed_for_reading(fs: FsBackend, root: Path) -> None:
    (root / "real.md").write_bytes(b"hello")
    (root / "link.md").symlink_to(root / "real.md")
    assert fs.read("link.md").data == b"hello"


# -- CAS, atomicity, modes ---------------------------------------------------------------


def test_write_and_read_with_versions(fs: FsBackend) -> None:
    assert fs.read("a/b.md") is None
    v1 = fs.write("a/b.md", b"one", expected=MISSING)
    blob = fs.read("a/b.md")
    assert blob.data == b"one" and blob.version == v1
    assert v1.startswith(content_version(b"one") + ":")  # the bytes, then the file's identity
    v2 = fs.write("a/b.md", b"two", expected=v1)
    assert v2 != v1 and fs.read("a/b.md").version == v2
    # a bare content hash still works as an expected version (bytes compared only)
    v3 = fs.write("a/b.md", b"three", expected=content_version(b"two"))
    assert fs.read("a/b.md").version == v3


def test_the_same_bytes_saved_again_by_someone_else_is_a_conflict(fs: FsBackend,
                                                                   root: Path) -> None:
    """A version names the file, not only its bytes: an editor that saved identical bytes
    (a new inode, or a new modification time) has still saved in between."""
    v1 = fs.write("m.md", b"same")
    tmp = root / "saved-by-editor"
    tmp.write_bytes(b"same")
    os.replace(tmp, root / "m.md")
    with pytest.raises(Conflict):
        fs.write("m.md", b"mine", expected=v1)
    assert (root / "m.md").read_bytes() == b"same"


def test_stale_version_is_a_conflict_and_changes_nothing(fs: FsBackend, root: Path) -> None:
    v1 = fs.write("m.md", b"one")
    (root / "m.md").write_bytes(b"edited in Obsidian")
    with pytest.raises(Conflict, match="m.md"):
        fs.write("m.md", b"mine", expected=v1)
    with pytest.raises(Conflict):
        fs.write("m.md", b"mine", expected=MISSING)
    with pytest.raises(Conflict):
        fs.delete("m.md", expected=v1)
    assert (root / "m.md").read_bytes() == b"edited in Obsidian"


def test_an_in_place_edit_keeping_size_and_mtime_is_a_conflict(fs: FsBackend,
                                                                root: Path) -> None:
    """The check before staging compares inode, size and modification time only; an edit
    in place that keeps all three (same length, mtime put back) is still refused, by
    the bytes, right before install, and leaves no temp file."""
    v1 = fs.write("m.md", b"one two")
    before = (root / "m.md").stat()
    with open(root / "m.md", "r+b") as fh:  # in place: the same inode
        fh.write(b"ONE TWO")
    os.utime(root / "m.md", ns=(before.st_atime_ns, before.st_mtime_ns))
    after = (root / "m.md").stat()
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == \
        (before.st_ino, before.st_size, before.st_mtime_ns)
    with pytest.raises(Conflict, match="m.md"):
        fs.write("m.md", b"mine", expected=v1)
    assert (root / "m.md").read_bytes() == b"ONE TWO"
    assert sorted(p.name for p in root.iterdir() if p.name.startswith("m.md")) == ["m.md"]
    assert not [p for p in root.rglob("*") if "tmp" in p.name.lower()]


def test_write_keeps_the_file_mode_and_leaves_no_temp_files(fs: FsBackend, root: Path) -> None:
    fs.write("m.md", b"one")
    os.chmod(root / "m.md", 0o600)
    fs.write("m.md", b"two", expected=ANY)
    assert stat.S_IMODE((root / "m.md").stat().st_mode) == 0o600
    assert sorted(p.name for p in root.iterdir()) == [".memvault", "m.md"]


def test_write_refuses_a_read_only_file(fs: FsBackend, root: Path) -> None:
    fs.write("m.md", b"keep me")
    os.chmod(root / "m.md", 0o444)
    for op in (lambda: fs.write("m.md", b"x"), lambda: fs.append("m.md", b"x"),
               lambda: fs.commit([Change("m.md", b"x")])):
        with pytest.raises(ReadOnly, match="m.md: file is read-only"):
            op()
    assert (root / "m.md").read_bytes() == b"keep me"


def test_reading_a_folder_is_a_clear_error(fs: FsBackend, root: Path) -> None:
    (root / "Pilot" / "Memory.md").mkdir(parents=True)
    with pytest.raises(InvalidInput, match="Pilot/Memory.md: is a folder"):
        fs.read("Pilot/Memory.md")
    with pytest.raises(InvalidInput, match="is a folder"):
        fs.write("Pilot/Memory.md", b"x")
    assert (root / "Pilot" / "Memory.md").is_dir()


def test_commit_is_all_or_nothing(fs: FsBackend, root: Path) -> None:
    v = fs.write("a.md", b"a0")
    fs.write("b.md", b"b0")
    with pytest.raises(Conflict):
        fs.commit([Change("a.md", b"a1", expected=v), Change("b.md", b"b1", expected=v),
                   Change("c.md", b"c1", expected=MISSING)])
    assert (root / "a.md").read_bytes() == b"a0" and (root / "b.md").read_bytes() == b"b0"
    assert not (root / "c.md").exists()
    fs.commit([Change("a.md", b"a1", expected=v), Change("b.md", None),
               Change("c.md", b"c1", expected=MISSING)])
    assert (root / "a.md").read_bytes() == b"a1" and not (root / "b.md").exists()
    assert fs.list() == [".memvault/.gitignore", ".memvault/lock", "a.md", "c.md"]


def test_append_starts_a_fresh_line_after_a_torn_one(fs: FsBackend, root: Path) -> None:
    (root / ".memvault").mkdir()
    (root / ".memvault" / "events.jsonl").write_bytes(b'{"id":"a"}\n{"id":"tor')
    fs.append(".memvault/events.jsonl", b'{"id":"b"}\n')
    assert (root / ".memvault" / "events.jsonl").read_bytes() == (
        b'{"id":"a"}\n{"id":"tor\n{"id":"b"}\n')


def test_lock_is_reentrant_in_one_process(fs: FsBackend) -> None:
    with fs.lock():
        with fs.lock():
            fs.write("x.md", b"1")
        fs.write("y.md", b"2")
    assert fs.read("x.md").data == b"1"


def test_write_removes_temp_files_a_killed_writer_left(fs: FsBackend, root: Path) -> None:
    fs.write("m.md", b"one")
    (root / ".m.md.k1ll3d.tmp").write_bytes(b"half a fi")
    (root / ".other.md.k1ll3d.tmp").write_bytes(b"not ours to clean now")
    fs.write("m.md", b"two")
    assert not (root / ".m.md.k1ll3d.tmp").exists()
    assert (root / ".other.md.k1ll3d.tmp").exists()


def test_no_write_follows_a_symlink_inside_the_vault(fs: FsBackend, root: Path) -> None:
    """A link can never widen a write: not to another note, nor through a folder link."""
    (root / "Notes").mkdir()
    (root / "Notes" / "Facts.md").write_bytes(b"- old\n")
    (root / "Pilot").mkdir()
    (root / "Pilot" / "Memory.md").symlink_to(Path("..") / "Notes" / "Facts.md")
    (root / "Linked").symlink_to(root / "Notes", target_is_directory=True)
    blob = fs.read("Pilot/Memory.md")  # reading through it is fine, and says so
    assert blob.data == b"- old\n" and blob.linked_to == "Notes/Facts.md"
    for op in (lambda: fs.write("Pilot/Memory.md", b"- new\n", expected=blob.version),
               lambda: fs.append("Pilot/Memory.md", b"- new\n"),
               lambda: fs.delete("Pilot/Memory.md"),
               lambda: fs.commit([Change("Pilot/Memory.md", b"- new\n")]),
               lambda: fs.write("Linked/Facts.md", b"- new\n"),
               lambda: fs.write("Linked/New.md", b"- new\n")):
        with pytest.raises(InvalidInput, match="never writes through a symlink"):
            op()
    assert (root / "Notes" / "Facts.md").read_bytes() == b"- old\n"
    assert (root / "Pilot" / "Memory.md").is_symlink()
    assert sorted(p.name for p in (root / "Notes").iterdir()) == ["Facts.md"]


def test_a_dangling_symlink_is_an_error_not_a_missing_file(fs: FsBackend, root: Path) -> None:
    (root / "Pilot").mkdir()
    (root / "Pilot" / "Policy.md").symlink_to("Nowhere.md")
    with pytest.raises(InvalidInput, match="which does not exist"):
        fs.read("Pilot/Policy.md")


def test_a_file_named_policy_is_written_only_by_the_policy_writer(fs: FsBackend,
                                                                  root: Path) -> None:
    from memvault.backends.base import policy_writer

    for path in ("Pilot/Policy.md", "Pilot/scopes/bob/policy.MD"):
        for op in (lambda p=path: fs.write(p, b"max_trade_usd: 1\n"),
                   lambda p=path: fs.append(p, b"x"), lambda p=path: fs.delete(p),
                   lambda p=path: fs.commit([Change(p, b"x")])):
            with pytest.raises(InvalidInput, match="only by `memvault policy set`"):
                op()
    assert not (root / "Pilot").exists()
    with policy_writer():
        fs.write("Pilot/Policy.md", b"---\nmax_trade_usd: 5\n---\n")
    assert (root / "Pilot" / "Policy.md").read_bytes().startswith(b"---")


def test_appending_to_a_file_with_another_hard_link_is_refused(fs: FsBackend,
                                                               root: Path) -> None:
    (root / "Pilot").mkdir()
    policy = root / "Pilot" / "Policy.md"
    policy.write_bytes(b"---\nmax_trade_usd: 250\n---\n")
    (root / ".memvault").mkdir()
    os.link(policy, root / ".memvault" / "events.jsonl")
    with pytest.raises(InvalidInput, match="hard links"):
        fs.append(".memvault/events.jsonl", b'{"id": "x"}\n')
    assert policy.read_bytes() == b"---\nmax_trade_usd: 250\n---\n"


def test_a_symlinked_lock_file_is_never_followed(fs: FsBackend, root: Path,
                                                 tmp_path: Path) -> None:
    (root / ".memvault").mkdir()
    target = tmp_path / "created-elsewhere"
    (root / ".memvault" / "lock").symlink_to(target)
    with pytest.raises(VaultError, match="lock file"):
        fs.write("m.md", b"x")
    assert not target.exists() and not (root / "m.md").exists()


def test_symlinks_into_dot_obsidian_are_refused(fs: FsBackend, root: Path) -> None:
    (root / ".obsidian").mkdir()
    (root / ".obsidian" / "todoist-token").write_bytes(b"secret")
    (root / "Pilot").symlink_to(root / ".obsidian", target_is_directory=True)
    (root / "token.md").symlink_to(root / ".obsidian" / "todoist-token")
    for path in ("Pilot/Memory.md", "Pilot/todoist-token", "token.md"):
        with pytest.raises(InvalidInput, match=".obsidian"):
            fs.write(path, b"owned")
    assert sorted(p.name for p in (root / ".obsidian").iterdir()) == ["todoist-token"]
    assert (root / ".obsidian" / "todoist-token").read_bytes() == b"secret"
