"""Vault format versions and migrations, tested from a vault that memvault 0.1.0 really made.

`tests/data/vault-0.1.0/` was produced by the 0.1.0 release (commit 9e51925) in a
throw-away virtualenv: `init`, three `remember`s (one with accents, an emoji and Arabic),
`propose` + `accept`, `propose` + `reject`, a pending `propose`, `forget` and
`forget --permanent`, `profile set`, `policy set`, `trade record`, `lesson propose` +
`accept`, `config set capture manual`; then edited by hand: a child bullet, a `*` bullet
without metadata ending in CRLF, a heading and prose with trailing spaces and no final
newline in Memory.md, a comment and a `[context]` table in config.toml, and a note
outside the home folder. Git-ignored caches (`lock`, the index) were left out.
"""

from __future__ import annotations

import fnmatch
import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from memvault import Vault
from memvault.backends.fs import FsBackend
from memvault.services.migrations import CURRENT_FORMAT, MIGRATIONS, event_id
from memvault.state_paths import CACHE_PATTERNS, CONFIG, EVENTS, GITIGNORE, STATE_DIR
from tests.conftest import run_memvault

FIXTURE = Path(__file__).parent / "data" / "vault-0.1.0"
FORMAT_LINE = f"vault_format = {CURRENT_FORMAT}\n".encode()


def _is_cache(rel: str) -> bool:
    inner = rel.split("/", 1)[1] if rel.startswith(STATE_DIR + "/") else None
    return inner is not None and any(
        inner.startswith(p) if p.endswith("/") else fnmatch.fnmatch(inner, p)
        for p in CACHE_PATTERNS)  # "folder/": everything in it, as in git


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and not _is_cache(p.relative_to(root).as_posix())}


@pytest.fixture
def old_vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    shutil.copytree(FIXTURE, root)
    return root


def _list_facts(root: Path) -> list[tuple[str, str]]:
    proc = run_memvault("--vault", str(root), "memory", "list", "--all", "--json")
    assert proc.returncode == 0, proc.stderr
    return sorted((f["id"], f["text"]) for f in json.loads(proc.stdout)["facts"])


def test_the_fixture_is_an_unmigrated_0_1_0_vault() -> None:
    config = (FIXTURE / CONFIG).read_bytes()
    assert b"vault_format" not in config and b"# my note: keep capture manual" in config
    types = {json.loads(line)["type"] for line in (FIXTURE / EVENTS).read_text().splitlines()}
    assert {"fact.remembered", "fact.forgotten", "proposal.accepted", "proposal.rejected",
            "trade"} <= types
    memory = (FIXTURE / "Pilot/Memory.md").read_bytes()
    assert b"[Preference]\r\n" in memory and not memory.endswith(b"\n")


def test_opening_a_0_1_0_vault_migrates_it_without_changing_a_byte_of_user_text(
        old_vault: Path) -> None:
    before = _files(old_vault)
    facts = _list_facts(old_vault)  # a real process opens (and so migrates) the vault
    after = _files(old_vault)

    assert set(after) == set(before)
    for rel in before:
        if rel not in (CONFIG, EVENTS, GITIGNORE):  # memvault's own files the upgrade extends
            assert after[rel] == before[rel], f"{rel} changed"
    # .gitignore: its old lines, then the caches added to memvault since 0.1.0
    assert after[GITIGNORE].startswith(before[GITIGNORE])
    old_patterns = before[GITIGNORE].decode().splitlines()
    assert after[GITIGNORE][len(before[GITIGNORE]):].decode().splitlines() == [
        p for p in CACHE_PATTERNS if p not in old_patterns]
    # config.toml: one line added, every old byte kept in place
    assert after[CONFIG].count(FORMAT_LINE) == 1
    assert after[CONFIG].replace(FORMAT_LINE, b"", 1) == before[CONFIG]
    # the journal: the old bytes, then one record per migration
    assert after[EVENTS].startswith(before[EVENTS])
    added = [json.loads(line) for line in after[EVENTS][len(before[EVENTS]):].splitlines()]
    assert [(e["type"], e["to"], e["migration"]) for e in added] == [
        ("vault.migrated", m.version, m.name) for m in MIGRATIONS]
    # and the vault reads as it did: the five facts, the hand-written one included
    assert facts == [("5xkp3e", "I prefer concise answers without preamble"),
                     ("f4yiv1", "I like tables for comparisons"),
                     ("gkfrc6", "My main project is Aurora, a Rust async runtime"),
                     ("vj4ho3", "I drink tea, not coffee"),
                     ("w7glva", "Café au lait ☕ — réponses courtes; أفضل الإجابات المختصرة")]


def test_the_migrated_vault_works_with_this_memvault(old_vault: Path) -> None:
    for args, expect in [(("proposals", "list", "--json"), "Explain a rejected trade"),
                         (("lesson", "list", "--json"), "Lead with the fill price"),
                         (("trade", "list", "--json"), "0xcde752a9"),
                         (("policy", "show", "--json"), "2500"),
                         (("config", "get", "--json"), '"manual"')]:
        proc = run_memvault("--vault", str(old_vault), *args)
        assert proc.returncode == 0 and expect in proc.stdout, (args, proc.stderr)
    doctor = run_memvault("--vault", str(old_vault), "doctor", "--json")
    assert doctor.returncode == 0, doctor.stdout
    # a forgotten text stays forgotten across the upgrade
    again = run_memvault("--vault", str(old_vault), "propose", "I live in Bergen", "--json")
    assert again.returncode == 0 and json.loads(again.stdout)["status"] == "tombstoned"


def test_a_second_open_changes_nothing(old_vault: Path) -> None:
    _list_facts(old_vault)
    migrated = _files(old_vault)
    Vault.open(old_vault)
    _list_facts(old_vault)
    assert _files(old_vault) == migrated


def test_every_migration_is_idempotent(old_vault: Path) -> None:
    Vault.open(old_vault)
    backend = FsBackend(old_vault)
    for migration in MIGRATIONS:
        assert migration.apply(backend) == [], f"{migration.name} is not idempotent"


def test_migrations_are_ordered_named_and_described() -> None:
    assert [m.version for m in MIGRATIONS] == list(range(2, CURRENT_FORMAT + 1))
    names = [m.name for m in MIGRATIONS]
    assert len(set(names)) == len(names)
    assert all(n.replace("-", "").isalnum() and n == n.lower() for n in names)
    assert all(m.summary for m in MIGRATIONS)


def test_a_new_vault_is_current_and_opening_it_writes_nothing(tmp_path: Path) -> None:
    root = tmp_path / "new"
    run_memvault("init", str(root))
    assert FORMAT_LINE in (root / CONFIG).read_bytes()
    before = _files(root)
    Vault.open(root)
    assert _files(root) == before


def test_a_vault_of_a_newer_format_is_refused_and_left_alone(old_vault: Path) -> None:
    config = old_vault / CONFIG
    config.write_bytes(f"vault_format = {CURRENT_FORMAT + 1}\n".encode() + config.read_bytes())
    before = _files(old_vault)
    proc = run_memvault("--vault", str(old_vault), "memory", "list")
    assert proc.returncode == 1
    assert proc.stderr.startswith(f"error: {CONFIG}: this vault has format {CURRENT_FORMAT + 1}")
    assert len(proc.stderr.strip().splitlines()) == 1
    assert _files(old_vault) == before


def test_an_interrupted_migration_is_finished_once(old_vault: Path) -> None:
    """A crash after some files of the step were installed: re-running completes it."""
    (old_vault / GITIGNORE).write_bytes(b"# mine\nindex.sqlite\n")
    first = MIGRATIONS[0]
    with open(old_vault / EVENTS, "ab") as fh:  # the journal line already landed
        fh.write(json.dumps({"id": event_id(first), "ts": 1, "type": "vault.migrated",
                             "scope": "default", "from": 1, "to": first.version,
                             "migration": first.name}).encode() + b"\n")
    Vault.open(old_vault)
    assert (old_vault / GITIGNORE).read_bytes() == b"# mine\nindex.sqlite\n" + b"".join(
        p.encode() + b"\n" for p in CACHE_PATTERNS if p != "index.sqlite")
    assert (old_vault / EVENTS).read_text().count(event_id(first)) == 1
    assert FORMAT_LINE in (old_vault / CONFIG).read_bytes()


def test_a_failed_migration_leaves_the_vault_as_it_was(old_vault: Path) -> None:
    """A step is one commit: if one file cannot be written, none is."""
    gitignore = old_vault / GITIGNORE
    gitignore.write_bytes(b"index.sqlite\n")
    gitignore.chmod(stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)  # the person made it read-only
    before = _files(old_vault)
    proc = run_memvault("--vault", str(old_vault), "memory", "list")
    assert proc.returncode == 1 and GITIGNORE in proc.stderr, proc.stderr
    assert _files(old_vault) == before
    gitignore.chmod(0o644)
    assert _list_facts(old_vault)
    assert FORMAT_LINE in (old_vault / CONFIG).read_bytes()


def test_two_processes_opening_an_old_vault_at_once_migrate_it_once(old_vault: Path) -> None:
    env = dict(os.environ)
    cmd = [sys.executable, "-m", "memvault", "--vault", str(old_vault), "memory", "list",
           "--json"]
    procs = [subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for _ in range(2)]
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    assert (old_vault / CONFIG).read_bytes().count(FORMAT_LINE) == 1
    journal = (old_vault / EVENTS).read_text()
    assert all(journal.count(event_id(m)) == 1 for m in MIGRATIONS)


@pytest.mark.parametrize("value,message", [
    ('"2"', "vault_format must be a whole number, not '2' (line 1)"),
    ("true", "vault_format must be a whole number, not True (line 1)"),
    ("0", "vault_format must be 1 or more, not 0 (line 1)")])
def test_a_mistyped_format_is_one_line_error(old_vault: Path, value: str, message: str) -> None:
    config = old_vault / CONFIG
    config.write_bytes(f"vault_format = {value}\n".encode() + config.read_bytes())
    before = _files(old_vault)
    proc = run_memvault("--vault", str(old_vault), "memory", "list")
    assert proc.returncode == 1
    assert proc.stderr == f"error: {CONFIG}: {message}\n"
    assert _files(old_vault) == before
