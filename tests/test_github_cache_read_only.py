"""GitHub backend: a permanent forget made on another machine reaches this machine's
cache; when the cache folder cannot be emptied (read-only here), every command says so in
one line naming the folder, never the words, and the next command with a writable folder
empties it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import run_memvault, set_up_unavailable
from tests.test_github_units import github, standin  # noqa: F401 - fixtures
from tests.test_read_only_vault import _capless_prefix

WORD = b"Q7373Z"


def test_a_read_only_cache_that_keeps_forgotten_words_is_named(github, tmp_path: Path  # noqa: F811
                                                                ) -> None:
    prefix, reason = _capless_prefix()
    if reason:
        set_up_unavailable(reason)
    homes = {name: tmp_path / name for name in ("a", "b")}

    def on(machine: str, *args: str) -> subprocess.CompletedProcess[str]:
        home = homes[machine]
        return run_memvault("--vault", "/nowhere", *args,
                            env={"HOME": str(home), "XDG_CACHE_HOME": str(home / "cache")})

    cache = homes["b"] / "cache"

    def holding() -> list[Path]:
        return [p for p in cache.rglob("*") if p.is_file() and WORD in p.read_bytes()]

    github.commit_files({"Notes/locker.md": b"# Locker\n\nThe gym locker is by the door.\n"})
    fid = json.loads(on("a", "remember", "My locker PIN is Q7373Z", "--json").stdout
                     )["fact"]["id"]
    for args in (("memory", "list", "--json"), ("search", "--memory", "--json", "Q7373Z")):
        assert on("b", *args).returncode == 0
    assert holding()
    assert on("a", "forget", fid, "--permanent", "--yes").returncode == 0
    subprocess.run(["chmod", "-R", "a-w", str(cache)], check=True, timeout=60)
    try:
        env = dict(os.environ, HOME=str(homes["b"]), XDG_CACHE_HOME=str(cache))
        for _ in range(2):  # said by every command while the copies stay
            done = subprocess.run([*prefix, sys.executable, "-m", "memvault", "--vault",
                                   "/nowhere", "memory", "list", "--json"],
                                  capture_output=True, text=True, env=env, timeout=120)
            assert done.returncode == 0, done.stderr
            assert WORD.decode() not in done.stdout
            told = [ln for ln in done.stderr.splitlines() if "cache folder" in ln]
            assert len(told) == 1, done.stderr
            assert "github" in told[0] and "forgotten words" in told[0]
            assert WORD.decode() not in done.stderr and "Traceback" not in done.stderr
        assert holding()  # really kept: the notice is not a false alarm
    finally:
        subprocess.run(["chmod", "-R", "u+w", str(cache)], check=True, timeout=60)
    done = on("b", "memory", "list", "--json")
    assert done.returncode == 0 and "cache folder" not in done.stderr
    assert holding() == []
