"""A vault memvault cannot write is still searched, listed and read: a folder made
read-only with `chmod -R a-w`, a vault owned by another user, a read-only mount (a
backup snapshot, a share). Nothing in the vault is written, no traceback is printed.

The tests make the vault really read-only for a real `memvault` subprocess. Root ignores
file modes, so as root the subprocess runs as root without capabilities (`setpriv
--bounding-set -all`), which obeys them like any user; the mount case uses a read-only
bind mount in a private mount namespace (`unshare -m`), which no other process sees.
Where the machine offers neither, those cases fail under CI (`CI=true`) and skip
elsewhere, saying why.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from memvault import Vault
from tests.conftest import set_up_unavailable

WAYS = ["chmod -R a-w", "owned by another user", "read-only mount"]
NOBODY = 65534


@functools.cache
def _capless_prefix() -> tuple[list[str], str | None]:
    """The command prefix that makes a subprocess obey file modes, or why there is none."""
    if os.geteuid() != 0:
        return [], None
    if shutil.which("setpriv") is None:
        return [], "root ignores file modes and setpriv (util-linux) is not installed"
    prefix = ["setpriv", "--bounding-set", "-all", "--inh-caps", "-all"]
    probe = subprocess.run([*prefix, sys.executable, "-c", "print('ok')"],
                           capture_output=True, text=True, timeout=30)
    if probe.stdout.strip() != "ok":
        return [], f"cannot drop root's capabilities here: {probe.stderr.strip()[:120]}"
    return prefix, None


@functools.cache
def _mount_reason() -> str | None:
    """Why a read-only bind mount cannot be made here, or None."""
    if shutil.which("unshare") is None or shutil.which("mount") is None:
        return "unshare or mount (util-linux) is not installed"
    import tempfile

    with tempfile.TemporaryDirectory() as point:
        probe = subprocess.run(["unshare", "-m", "sh", "-c",
                                'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1"',
                                "sh", point], capture_output=True, text=True, timeout=30)
    if probe.returncode != 0:
        return f"no private read-only bind mount here: {probe.stderr.strip()[:120]}"
    return None


class ReadOnly:
    """Runs `memvault` on a vault made read-only one way."""

    def __init__(self, way: str, vault: Path, tmp: Path) -> None:
        self.way, self.source, self.tmp = way, vault, tmp
        self.vault = vault
        self.prefix: list[str] = []
        self.temp_dir = tmp / "tmpdir"
        self.temp_dir.mkdir()
        self.temp_dir.chmod(0o777)

    def __enter__(self) -> ReadOnly:
        if self.way == "read-only mount":
            reason = _mount_reason()
            if reason:
                set_up_unavailable(reason)
            self.vault = self.tmp / "mounted"
            self.vault.mkdir()
            self.prefix = ["unshare", "-m", "sh", "-c",
                           'mount --bind "$1" "$2" && mount -o remount,bind,ro "$2" && '
                           'shift 2 && exec "$@"', "sh", str(self.source), str(self.vault)]
            return self
        prefix, reason = _capless_prefix()
        if reason:
            set_up_unavailable(reason)
        if self.way == "owned by another user":
            if os.geteuid() != 0:
                set_up_unavailable("giving the vault to another user needs root")
            for path in [self.source, *self.source.rglob("*")]:
                os.lchown(path, NOBODY, NOBODY)
        else:
            subprocess.run(["chmod", "-R", "a-w", str(self.source)], check=True, timeout=60)
        self.prefix = prefix
        return self

    def __exit__(self, *exc: object) -> None:
        subprocess.run(["chmod", "-R", "u+w", str(self.source)], check=False, timeout=60)
        if os.geteuid() == 0:
            for path in [self.source, *self.source.rglob("*")]:
                os.lchown(path, 0, 0)

    def run(self, *args: str, entry: str = "-m") -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVAULT_")}
        env.update(HOME=str(self.tmp / "home"), TMPDIR=str(self.temp_dir))
        program = ["-m", "memvault"] if entry == "-m" else [
            "-c", "import sys; sys.argv[0] = 'memvault'; "
                  "from memvault.cli.app import main; main()"]
        return subprocess.run([*self.prefix, sys.executable, *program, "--vault",
                               str(self.vault), *args], capture_output=True, text=True,
                              env=env, timeout=120)


def _state(root: Path) -> dict[str, tuple[int, int]]:
    """Every file and folder with its size and modification time."""
    return {p.relative_to(root).as_posix(): (p.lstat().st_size, p.lstat().st_mtime_ns)
            for p in [root, *root.rglob("*")]}


def _vault(root: Path) -> str:
    (root / "Trip.md").write_text("We flew a zeppelin over the bay.\n", encoding="utf-8")
    vault = Vault.open(root)
    fact = vault.memory.remember("my locker code is quokka4471")
    vault.search.refresh()
    vault.search.close()
    return fact.fact.id


def _ok(done: subprocess.CompletedProcess[str]) -> dict:  # type: ignore[type-arg]
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize("way", WAYS)
def test_a_read_only_vault_with_an_index_in_step_is_searched_where_it_is(tmp_path,
                                                                        memory_vault_dir,
                                                                        way):
    fact_id = _vault(memory_vault_dir)
    before = _state(memory_vault_dir)
    with ReadOnly(way, memory_vault_dir, tmp_path) as ro:
        quick = ro.run("search", "--json", "zeppelin")
        found = _ok(quick)
        assert [r["path"] for r in found["results"]] == ["Trip.md"]
        assert found["notices"] == []  # the vault's own index, no temporary copy
        click = ro.run("search", "--json", "zeppelin", entry="click")
        assert (click.returncode, click.stdout) == (quick.returncode, quick.stdout)
        memory = _ok(ro.run("search", "--memory", "--json", "quokka4471"))
        assert any("quokka4471" in r["text"] for r in memory["results"])
        listed = _ok(ro.run("memory", "list", "--json"))
        assert [f["id"] for f in listed["facts"]] == [fact_id]
        shown = _ok(ro.run("memory", "show", fact_id, "--json"))
        assert shown["fact"]["text"] == "my locker code is quokka4471"
        context = ro.run("context", "--request", "where is my locker")
        assert context.returncode == 0 and "quokka4471" in context.stdout, context.stderr
        status = _ok(ro.run("index", "status", "--json"))
        assert status["state"] == "complete"
        rebuild = ro.run("index", "rebuild")
        assert rebuild.returncode == 1 and "Traceback" not in rebuild.stderr
        assert len(rebuild.stderr.strip().splitlines()) == 1
        assert "read-only" in rebuild.stderr
        assert list(ro.temp_dir.iterdir()) == []
    assert _state(memory_vault_dir) == before


@pytest.mark.parametrize("way", WAYS)
def test_a_read_only_vault_whose_index_is_behind_is_searched_from_a_temporary_copy(
        tmp_path, memory_vault_dir, way):
    _vault(memory_vault_dir)
    (memory_vault_dir / "New.md").write_text("A walrus on the beach.\n", encoding="utf-8")
    (memory_vault_dir / "Trip.md").unlink()
    before = _state(memory_vault_dir)
    with ReadOnly(way, memory_vault_dir, tmp_path) as ro:
        for _ in range(2):  # nothing is recorded: the second search finds it behind too
            found = _ok(ro.run("search", "--json", "walrus"))
            assert [r["path"] for r in found["results"]] == ["New.md"]
            assert len(found["notices"]) == 1 and "read-only" in found["notices"][0]
            assert _ok(ro.run("search", "--json", "zeppelin"))["results"] == []
        plain = ro.run("search", "walrus")
        assert plain.returncode == 0 and "New.md" in plain.stdout
        assert [ln for ln in plain.stderr.splitlines() if ln.strip()] == [
            f"note: {found['notices'][0]}"]
        assert list(ro.temp_dir.iterdir()) == []  # the copy is gone with the process
    assert _state(memory_vault_dir) == before


def test_a_read_only_vault_without_an_index_is_searched(tmp_path, memory_vault_dir):
    _vault(memory_vault_dir)
    for path in (memory_vault_dir / ".memvault").glob("index.sqlite*"):
        path.unlink()
    with ReadOnly("read-only mount" if _mount_reason() is None else "chmod -R a-w",
                  memory_vault_dir, tmp_path) as ro:
        found = _ok(ro.run("search", "--json", "zeppelin"))
        assert [r["path"] for r in found["results"]] == ["Trip.md"]
        assert "read-only" in found["notices"][0]
    assert not (memory_vault_dir / ".memvault" / "index.sqlite").exists()


HOLD_OPEN = """
import sys, time
from memvault import Vault
vault = Vault.open(sys.argv[1])
found = vault.search.search("walrus")
print("searched", len(found), vault.search.notices[:1], flush=True)
time.sleep(60)
"""


@pytest.mark.parametrize("signal_name", ["SIGKILL", "SIGTERM"])
def test_a_search_killed_while_it_holds_the_temporary_copy_leaves_nothing_on_disk(
        tmp_path, memory_vault_dir, signal_name):
    """The copy of a behind index is in memory only: a search stopped by SIGKILL or
    SIGTERM (how `timeout`, systemd and MCP hosts stop a process) leaves no
    `memvault-index-*` folder in TMPDIR and no file outside the vault with the words."""
    import signal

    _vault(memory_vault_dir)
    (memory_vault_dir / "New.md").write_text("A walrus on the beach.\n", encoding="utf-8")
    with ReadOnly("chmod -R a-w", memory_vault_dir, tmp_path) as ro:
        env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVAULT_")}
        env.update(HOME=str(tmp_path / "home"), TMPDIR=str(ro.temp_dir))
        child = subprocess.Popen([*ro.prefix, sys.executable, "-c", HOLD_OPEN,
                                  str(ro.vault)], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True, env=env)
        try:
            assert child.stdout is not None
            line = child.stdout.readline()  # the copy exists and was searched
            searched = line.startswith("searched 1 [") and "read-only" in line
            assert searched, child.stderr.read() if child.stderr else ""
            child.send_signal(getattr(signal, signal_name))
            child.wait(timeout=30)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait(timeout=30)
        assert child.returncode == -getattr(signal, signal_name)
        assert [p.name for p in ro.temp_dir.iterdir()] == []
    holders = [p for p in tmp_path.rglob("*") if p.is_file()
               and memory_vault_dir not in p.parents and b"quokka4471" in p.read_bytes()]
    assert holders == []
