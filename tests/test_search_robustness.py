"""Search and its neighbours keep working, with one-line errors, when the world is odd.

Every case runs the real console script (`python -m memvault`, the same entry as the
`memvault` script) as a subprocess on a real vault folder:

- a note whose file name is not valid UTF-8 (a Latin-1 `Caf\\xe9.md` from an old
  archive or a Windows share): skipped, counted and named by `doctor`, never a traceback;
- a query whose bytes are not UTF-8: a one-line usage error (exit 2);
- stdout in an encoding that is not UTF-8: valid JSON (non-ASCII escaped), readable
  human output;
- stdout closed or full: one line on stderr, exit 1.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memvault import Vault
from memvault.services.setup import init_vault

LATIN1_NAME = b"Caf\xe9.md"  # "Café.md" written by a Latin-1 system


def _env(tmp: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("MEMVAULT_", "PYTHONIOENCODING", "LC_", "PYTHONUTF8"))}
    env.update(HOME=str(tmp / "home"), XDG_DATA_HOME=str(tmp / "home" / "share"),
               LANG="C.UTF-8")
    env.update(extra)
    return env


def _memvault(tmp: Path, *args: str | bytes, env: dict[str, str] | None = None,
              shell_redirect: str = "") -> subprocess.CompletedProcess[bytes]:
    """`memvault ARGS` as the console script runs it (optionally with a shell
    redirection of its stdout, e.g. `>&-`)."""
    cmd: list[str | bytes] = [sys.executable, "-m", "memvault", *args]
    if shell_redirect:
        import shlex

        line = " ".join(shlex.quote(os.fsdecode(a)) for a in cmd) + " " + shell_redirect
        return subprocess.run(["sh", "-c", line], capture_output=True, env=env or _env(tmp),
                              timeout=120)
    return subprocess.run(cmd, capture_output=True, env=env or _env(tmp), timeout=120)


@pytest.fixture()
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    init_vault(root)
    (root / "Airship.md").write_text("# Airship\n\nA zeppelin over the café.\n",
                                     encoding="utf-8")
    return root


def _no_traceback(done: subprocess.CompletedProcess[bytes]) -> None:
    assert b"Traceback" not in done.stderr, done.stderr.decode("utf-8", "replace")


# -- a file name that is not UTF-8 -----------------------------------------------------------


def _add_latin1_note(root: Path) -> None:
    with open(os.path.join(os.fsencode(root), LATIN1_NAME), "wb") as fh:
        fh.write(b"zeppelin, a note from a Latin-1 archive\n")


def test_a_note_named_in_latin1_is_skipped_and_named_by_doctor(vault: Path,
                                                               tmp_path: Path) -> None:
    _add_latin1_note(vault)
    v = str(vault)
    done = _memvault(tmp_path, "--vault", v, "search", "--json", "zeppelin")
    _no_traceback(done)
    assert done.returncode == 0
    assert [r["path"] for r in json.loads(done.stdout)["results"]] == ["Airship.md"]

    human = _memvault(tmp_path, "--vault", v, "search", "zeppelin")
    _no_traceback(human)
    assert human.returncode == 0 and b"Airship.md" in human.stdout

    rebuilt = _memvault(tmp_path, "--vault", v, "index", "rebuild")
    _no_traceback(rebuilt)
    assert rebuilt.returncode == 0 and b"1 could not be read" in rebuilt.stdout

    memory = _memvault(tmp_path, "--vault", v, "search", "--memory", "--json", "x")
    _no_traceback(memory)
    assert memory.returncode == 0

    doctor = _memvault(tmp_path, "--vault", v, "doctor")
    _no_traceback(doctor)
    assert doctor.returncode == 1  # something needs attention: the file's name
    lines = [line for line in doctor.stdout.decode().splitlines() if "Caf" in line]
    assert len(lines) == 1, doctor.stdout
    assert lines[0].startswith("warning Caf\\xe9.md: not searchable")
    assert "not valid UTF-8" in lines[0]
    assert (vault / os.fsdecode(LATIN1_NAME)).read_bytes().startswith(b"zeppelin, a note")


def test_renaming_the_file_makes_it_searchable(vault: Path, tmp_path: Path) -> None:
    _add_latin1_note(vault)
    v = str(vault)
    assert _memvault(tmp_path, "--vault", v, "search", "--json", "zeppelin").returncode == 0
    os.rename(os.path.join(os.fsencode(vault), LATIN1_NAME), vault / "Café.md")
    done = _memvault(tmp_path, "--vault", v, "search", "--json", "Latin")
    assert [r["path"] for r in json.loads(done.stdout)["results"]] == ["Café.md"]
    doctor = _memvault(tmp_path, "--vault", v, "doctor")
    assert b"not searchable" not in doctor.stdout


def test_a_real_file_of_the_escaped_name_is_still_searched(vault: Path,
                                                           tmp_path: Path) -> None:
    """The escaped name (`Caf\\xe9.md`, with a backslash) is a legal file name too: that
    file is indexed as itself, never mistaken for the undecodable one."""
    _add_latin1_note(vault)
    (vault / "Caf\\xe9.md").write_text("backslash balloon\n", encoding="utf-8")
    done = _memvault(tmp_path, "--vault", str(vault), "search", "--json", "balloon")
    _no_traceback(done)
    assert [r["path"] for r in json.loads(done.stdout)["results"]] == ["Caf\\xe9.md"]


def test_a_folder_named_in_latin1_and_a_watcher_refresh(vault: Path) -> None:
    """A folder whose name is not UTF-8 hides its notes the same way, and refreshing
    only named paths (what the watcher does) takes such a path without failing."""
    folder = os.path.join(os.fsencode(vault), b"Archiv\xe9")
    os.mkdir(folder)
    with open(os.path.join(folder, b"old.md"), "wb") as fh:
        fh.write(b"zeppelin in an old folder\n")
    api = Vault.open(vault)
    try:
        result = api.search.refresh()
        assert result.skipped == [("Archiv\\xe9/old.md", result.skipped[0][1])]
        with open(os.path.join(folder, b"old.md"), "ab") as fh:
            fh.write(b"more\n")
        api.search.refresh_paths({os.fsdecode(os.path.join(b"Archiv\xe9", b"old.md"))})
        assert [h.path for h in api.search.search("zeppelin")] == ["Airship.md"]
        skipped = api.search.status()["skipped"]
        assert [item["path"] for item in skipped] == ["Archiv\\xe9/old.md"]
    finally:
        api.search.close()


# -- a query that is not UTF-8 ---------------------------------------------------------------


@pytest.mark.parametrize("args", [
    ["search", "--json", b"\xffzeppelin"],
    ["search", b"caf\xe9"],
    ["search", "--memory", "--json", b"\xffzeppelin"],
    ["search", "--memory", b"caf\xe9"],
    ["search", "--json", "--path", b"Caf\xe9/*", "zeppelin"],
    ["search", "--tag", b"caf\xe9", "zeppelin"],
], ids=lambda a: " ".join(os.fsdecode(x).encode("ascii", "backslashreplace").decode()
                          for x in a))
def test_a_query_that_is_not_utf8_is_a_usage_error(vault: Path, tmp_path: Path,
                                                   args: list[str | bytes]) -> None:
    done = _memvault(tmp_path, "--vault", str(vault), *args)
    _no_traceback(done)
    assert done.returncode == 2
    message = (json.loads(done.stdout)["error"] if "--json" in args
               else done.stderr.decode().strip())
    assert "not valid UTF-8 text" in message and "\n" not in message
    if "--json" not in args:
        assert done.stdout == b"" and message.startswith("error: ")
