"""`memvault remember` through the console script ends the same way as the click command.

The console script (`cli/entry.py`) runs `remember` with the cyclic collector paused from
the first import and ends the finished process with `os._exit` (no interpreter
teardown). Here both the console script (`python -m memvault`) and the click application
called directly run as real subprocesses on identical copies of a real vault, over the
outcomes a user meets (a new fact, the same words again, a near-duplicate warning, a
forgotten text remembered again, bad input, usage errors, help, JSON, a closed stdout,
after which a saved fact still exits 0):
exit code, stdout, stderr and Memory.md must be the same (new ids, which are random,
compared by position). A last test checks that the bytes written by a hard-exited
`remember` are all on disk and that a vault it wrote is read back intact.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from memvault import Vault
from memvault.cli.entry import command_word
from memvault.services.setup import init_vault

ROOT = Path(__file__).resolve().parents[1]
CLICK = "import sys; sys.argv = ['memvault', *sys.argv[1:]]\n" \
        "from memvault.cli.app import main\nmain()\n"


def _run(entry: str, args: list[str], *, closed_stdout: bool = False) -> tuple[int, str, str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), NO_COLOR="1")
    cmd = [sys.executable, "-m", "memvault", *args] if entry == "console" else \
        [sys.executable, "-c", CLICK, *args]
    done = subprocess.run(cmd, env=env, capture_output=not closed_stdout, text=True,
                          timeout=60, stdout=subprocess.DEVNULL if closed_stdout else None,
                          stderr=subprocess.PIPE if closed_stdout else None)
    return done.returncode, done.stdout or "", done.stderr or ""


def _ids_in_order(text: str, new: list[str]) -> str:
    """The ids a run chose at random (`new`, in file order) numbered by position."""
    for n, rid in enumerate(new):
        text = re.sub(rf"\b{rid}\b", f"<new{n}>", text)
    return text


@pytest.fixture
def vault(tmp_path: Path) -> tuple[Path, set[str]]:
    root = tmp_path / "template"
    init_vault(root)
    v = Vault.open(root)
    ids = {v.memory.remember(t).fact.id for t in (
        "I drink tea, not coffee", "My main project is Aurora",
        "I prefer concise answers with examples")}
    gone = v.memory.remember("My old locker code is 4242").fact
    v.memory.forget([gone.id])
    return root, ids | {gone.id}


CASES = [
    ["remember", "I live in Oslo"],
    ["remember", "I live in Oslo", "--category", "identity"],
    ["remember", "-c", "preference", "I like short emails"],
    ["--json", "remember", "I use vim"],
    ["remember", "I use vim", "--json", "-q"],
    ["remember", "i drink TEA,  not coffee"],  # the same words: no second fact
    ["remember", "I drink tea and not coffee"],  # a near-duplicate: warned
    ["remember", "My old locker code is 4242"],  # forgotten before: the tombstone is lifted
    ["remember", ""],  # bad input
    ["remember", "x" * 5000],  # too long
    ["remember", "a fact", "--category", "no-such-category"],
    ["remember"],  # usage error
    ["remember", "a fact", "--bogus"],
    ["remember", "--help"],
    ["--scope", "other", "remember", "another principal's fact"],
]


@pytest.mark.parametrize("args", CASES, ids=lambda a: " ".join(a)[:40])
def test_console_script_and_click_end_remember_alike(vault: tuple[Path, set[str]],
                                                      tmp_path: Path, args: list[str]) -> None:
    template, known = vault
    results = []
    for entry in ("console", "click"):
        root = tmp_path / entry
        shutil.copytree(template, root)
        code, out, err = _run(entry, ["--vault", str(root), *args])
        memory = (root / "Pilot" / "Memory.md").read_text(encoding="utf-8")
        memory = re.sub(r"updated:\d+", "updated:T", memory)
        new = [rid for rid in re.findall(r"id:([0-9a-z]{6})", memory) if rid not in known]
        if "--scope" in args:
            other = root / "Pilot" / "scopes" / "other" / "Memory.md"
            new += re.findall(r"id:([0-9a-z]{6})", other.read_text(encoding="utf-8"))
        out = re.sub(r'"updated": "?\d+"?', '"updated": T', out)  # the two runs' clocks
        results.append((code, _ids_in_order(out, new), _ids_in_order(err, new),
                        _ids_in_order(memory, new)))
    assert results[0] == results[1]


def test_a_closed_stdout_is_reported_alike(vault: tuple[Path, set[str]],
                                           tmp_path: Path) -> None:
    template, _ = vault
    results = []
    for entry in ("console", "click"):
        root = tmp_path / entry
        shutil.copytree(template, root)
        env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
        cmd = [sys.executable, "-m", "memvault"] if entry == "console" else \
            [sys.executable, "-c", CLICK]
        # stdout closed outright (`>&-`): the fact is saved, the line cannot be printed
        done = subprocess.run(["/bin/sh", "-c", '"$@" >&-', "sh", *cmd, "--vault", str(root),
                               "remember", "I live in Oslo"], env=env, capture_output=False,
                              stderr=subprocess.PIPE, text=True, timeout=60)
        memory = (root / "Pilot" / "Memory.md").read_text(encoding="utf-8")
        saved = "I live in Oslo" in memory
        new_id = (re.findall(r"I live in Oslo \[other\] <!-- id:(\w+)", memory) or ["?"])[0]
        last = done.stderr.strip().splitlines()[-1:]  # the report (a traceback's frames
        last = [ln.replace(new_id, "<new>") for ln in last]  # name the entry: last line)
        results.append((done.returncode, last, saved))
    assert results[0] == results[1]
    assert results[0] == (0, ["warning: cannot write to standard output: it is closed; "
                              "remembered as <new>"], True)  # saved: exit 0


def test_a_hard_exited_remember_left_every_byte_on_disk(tmp_path: Path) -> None:
    """Fifty remembers, each ended with os._exit: every fact, event and cache entry
    written is whole, and a fresh reader (no cache) sees exactly the fifty facts."""
    root = tmp_path / "vault"
    init_vault(root)
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    for n in range(50):
        done = subprocess.run([sys.executable, "-m", "memvault", "--vault", str(root),
                               "remember", f"fact number {n} about zebra{n}"], env=env,
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
    shutil.rmtree(root / ".memvault" / "parsed", ignore_errors=True)
    facts = Vault.open(root).memory.all()
    assert sorted(f.text for f in facts) == sorted(f"fact number {n} about zebra{n}"
                                                   for n in range(50))
    events = (root / ".memvault" / "events.jsonl").read_text(encoding="utf-8").splitlines()
    assert sum('"fact.remembered"' in line for line in events) == 50
    # the net's fingerprint and copy (replaced without fsync) are whole and current
    net = (root / ".memvault" / "safety" / "Pilot%2FMemory.md").read_bytes()
    head, _, copy = net.partition(b"\n")
    assert copy == (root / "Pilot" / "Memory.md").read_bytes()
    assert json.loads(head)["sha1"] == __import__("hashlib").sha1(copy).hexdigest()
    assert sorted(json.loads(head)["ids"]) == sorted(f.id for f in facts)


@pytest.mark.parametrize(("argv", "word"), [
    (["remember", "x"], "remember"),
    (["--vault", "remember", "search", "x"], "search"),  # a vault folder named remember
    (["--scope", "a", "--json", "remember", "x"], "remember"),
    (["-q", "memory", "list"], "memory"),
    (["--vault=/v", "remember", "x"], "remember"),
    (["search", "remember"], "search"),
    ([], None),
    (["--version"], None),
])
def test_the_command_word_skips_global_options(argv: list[str], word: str | None) -> None:
    assert command_word(argv) == word


FSYNC_PROBE = r"""
import os, sys
log = sys.argv[1]
real = os.fsync
def fsync(fd):
    real(fd)
    with open(log, "a") as fh:
        fh.write(os.readlink(f"/proc/self/fd/{fd}") + "\n")
os.fsync = fsync
sys.argv = ["memvault", *sys.argv[2:]]
from memvault.cli.entry import main
main()
"""


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc to name an fd")
def test_what_a_remember_makes_durable(tmp_path: Path) -> None:
    """A remember that adds a fact fsyncs the new Memory.md (its temp file, then its
    folder after the exchange) and the journal line; the safety net's copy, which then
    holds only what Memory.md holds, is replaced without fsync. A forget still fsyncs
    the net before Memory.md changes (its words must leave the net durably)."""
    root = tmp_path / "vault"
    init_vault(root)
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))

    def synced(*args: str) -> list[str]:
        log = tmp_path / "fsyncs.txt"
        log.unlink(missing_ok=True)
        done = subprocess.run([sys.executable, "-c", FSYNC_PROBE, str(log), "--vault",
                               str(root), *args], env=env, capture_output=True, text=True,
                              timeout=60)
        assert done.returncode == 0, done.stderr
        return [str(Path(p).relative_to(root)) if p.startswith(str(root)) else p
                for p in log.read_text().splitlines()] if log.exists() else []

    synced("remember", "I drink tea")  # the first write also makes the net's folder
    paths = synced("remember", "I live in Oslo")
    assert len(paths) == 3, paths
    assert paths[0].startswith("Pilot/.Memory.md.") and paths[0].endswith(".tmp"), paths
    assert paths[1] == "Pilot"
    assert paths[2] == ".memvault/events.jsonl"
    fact = Vault.open(root).memory.all()[0]
    forget = synced("forget", fact.id, "--yes")
    assert any(p.startswith(".memvault/safety/.Pilot%2FMemory.md.") for p in forget), forget


def _console(root: Path, *args: str, stdout: object = subprocess.PIPE
             ) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), NO_COLOR="1")
    return subprocess.run([sys.executable, "-m", "memvault", "--vault", str(root), *args],
                          env=env, stdout=stdout, stderr=subprocess.PIPE, text=True,
                          timeout=60)


def test_a_hard_exit_leaves_nothing_a_normal_exit_would_finish(
        vault: tuple[Path, set[str]], tmp_path: Path) -> None:
    """A remember ended by os._exit in a vault whose caches must first catch up with a
    permanent forget from elsewhere: it deletes the search index (SQLite opened and
    closed), writes the forgets note, keeps it in step with its own journal line, stores
    the parse-cache entry and the net's copy, prints its whole line into a fully buffered
    file, and leaves the vault's lock free and no temp file behind."""
    import sqlite3

    from memvault.backends.fs_git import local_backend
    from memvault.services import forgets_applied
    from memvault.state_paths import FORGETS_APPLIED, INDEX
    from tests.test_parse_cache import _entry_matches_a_full_parse

    root, _ = vault
    note = root / FORGETS_APPLIED
    before = note.read_bytes()
    v = Vault.open(root)
    gone = v.memory.remember("My bike lock code is Q7301Z").fact
    v.memory.forget([gone.id], permanent=True)
    assert _console(root, "search", "tea").returncode == 0  # an index again, with tables
    assert (root / INDEX).exists()
    note.write_bytes(before)  # as on a clone the permanent forget has not reached yet
    assert not forgets_applied.in_step(root)

    with (tmp_path / "out.txt").open("w") as out:
        done = _console(root, "remember", "I cycle to work", stdout=out)
    assert done.returncode == 0, done.stderr
    printed = (tmp_path / "out.txt").read_text(encoding="utf-8")
    assert re.fullmatch(r"remembered [0-9a-z]{6}: I cycle to work \[other\]\n", printed)

    assert not any((root / f"{INDEX}{end}").exists() for end in ("", "-wal", "-shm",
                                                                   "-journal"))
    assert forgets_applied.in_step(root)  # noted, and still in step after its own line
    marker = json.loads(note.read_bytes())
    stones = (root / ".memvault" / "tombstones.jsonl").read_bytes()
    journal = (root / ".memvault" / "events.jsonl").read_bytes()
    marks, permanent = forgets_applied.forget_marks(stones, journal)
    assert (marker["marks"], sorted(marker["permanent"])) == (marks, sorted(permanent))
    _entry_matches_a_full_parse(root)
    head, _, copy = (root / ".memvault" / "safety" / "Pilot%2FMemory.md").read_bytes() \
        .partition(b"\n")
    assert copy == (root / "Pilot" / "Memory.md").read_bytes()
    with local_backend(root).try_lock() as held:
        assert held
    assert [p.name for p in root.rglob("*") if p.name.endswith(".tmp")] == []
    found = json.loads(_console(root, "search", "--json", "tea").stdout)  # rebuilt
    with sqlite3.connect(root / INDEX) as db:
        assert db.execute("pragma integrity_check").fetchone() == ("ok",)
    assert found is not None


def test_a_remember_keeps_an_in_step_forgets_note_in_step(
        vault: tuple[Path, set[str]]) -> None:
    """After a remember (its journal line appended), the next command finds the forgets
    note in step and re-reads neither the journal nor the tombstones; a line appended
    by another program meanwhile is not taken for memvault's own."""
    from memvault.services import forgets_applied

    root, _ = vault
    assert forgets_applied.in_step(root)
    assert _console(root, "remember", "I sail on Sundays").returncode == 0
    assert forgets_applied.in_step(root)
    events = root / ".memvault" / "events.jsonl"
    with events.open("ab") as fh:  # another clone's forget, merged in by hand
        fh.write(b'{"id":"ev-1-aa","ts":1,"type":"fact.forgotten","record":"zzzzzz"}\n')
    assert not forgets_applied.in_step(root)
    assert _console(root, "remember", "I row on Mondays").returncode == 0
    marker = json.loads((root / ".memvault" / "safety" / "forgets.json").read_bytes())
    marks, _ = forgets_applied.forget_marks(
        (root / ".memvault" / "tombstones.jsonl").read_bytes(), events.read_bytes())
    assert marker["marks"] == marks  # the forget was applied, not skipped
    assert forgets_applied.in_step(root)


@pytest.mark.parametrize("between", ["a forget appended", "tombstones rewritten"])
def test_a_change_by_another_program_is_not_taken_for_memvaults_own_line(
        vault: tuple[Path, set[str]], between: str) -> None:
    """Another program changes the journal or the tombstones between memvault's look at
    the note and its own append: the note is left behind, for `apply` to redo."""
    from memvault.backends.fs_git import local_backend
    from memvault.services import forgets_applied
    from memvault.state_paths import EVENTS

    root, _ = vault
    backend = local_backend(root)
    assert forgets_applied.in_step(root)
    step = forgets_applied.before_append(backend)
    assert step is not None
    if between == "a forget appended":
        with (root / EVENTS).open("ab") as fh:
            fh.write(b'{"id":"ev-2-bb","ts":1,"type":"fact.forgotten","record":"yyyyyy"}\n')
    else:
        stones = root / ".memvault" / "tombstones.jsonl"
        stones.write_bytes(stones.read_bytes() + b"\n")
    ours = b'{"id":"ev-3-cc","ts":1,"type":"fact.remembered","record":"xxxxxx"}\n'
    backend.append(EVENTS, ours)
    forgets_applied.after_append(backend, step, ours)
    assert not forgets_applied.in_step(root)
