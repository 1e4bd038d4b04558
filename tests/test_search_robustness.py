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
from tests.conftest import set_up_unavailable

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


# -- stdout that is not UTF-8, closed or full ------------------------------------------------

SCRIPT = str(Path(sys.executable).with_name("memvault"))
"""The installed console script (what a user runs)."""
CLICK_ONLY = "import sys; from memvault.cli.app import main; sys.argv[0] = 'memvault'; main()"
"""The click application alone: the quick path never answers."""


def _script(tmp: Path, vault: Path, *args: str, env: dict[str, str] | None = None,
            redirect: str = "", click_only: bool = False
            ) -> subprocess.CompletedProcess[bytes]:
    import shlex

    head = [sys.executable, "-c", CLICK_ONLY] if click_only else [SCRIPT]
    line = " ".join(shlex.quote(a) for a in [*head, "--vault", str(vault), *args])
    return subprocess.run(["sh", "-c", f"{line} {redirect}"], capture_output=True,
                          env=env or _env(tmp), timeout=120)


@pytest.mark.parametrize("setting", [{"PYTHONIOENCODING": "ascii"},
                                     {"LC_ALL": "C", "PYTHONUTF8": "0"},
                                     {"PYTHONIOENCODING": "latin-1"}],
                         ids=["ascii", "C-locale", "latin-1"])
@pytest.mark.parametrize("click_only", [False, True], ids=["script", "click"])
def test_json_on_a_stdout_that_is_not_utf8_is_valid_and_escaped(vault: Path, tmp_path: Path,
                                                                 setting: dict[str, str],
                                                                 click_only: bool) -> None:
    _script(tmp_path, vault, "index", "rebuild")
    env = _env(tmp_path, **setting)
    done = _script(tmp_path, vault, "search", "--json", "zeppelin", env=env,
                   click_only=click_only)
    _no_traceback(done)
    assert done.returncode == 0
    assert done.stdout.isascii()
    found = json.loads(done.stdout)
    assert "café" in found["results"][0]["snippet"]
    if setting.get("PYTHONIOENCODING") != "latin-1":  # a C locale decodes argv as ASCII
        typed = _script(tmp_path, vault, "search", "--json", "café", env=env,
                        click_only=click_only)
        assert typed.returncode == 0, typed.stderr
        assert json.loads(typed.stdout)["query"] == "café"  # the UTF-8 bytes typed
    human = _script(tmp_path, vault, "search", "zeppelin", env=env)
    _no_traceback(human)
    assert human.returncode == 0 and b"Airship.md" in human.stdout
    error = _script(tmp_path, vault, "--json", "memory", "show", "nöpe42", env=env)
    _no_traceback(error)
    assert error.returncode == 1 and error.stdout.isascii()
    message = json.loads(error.stdout)["error"]
    assert "no fact with id" in message
    if "LC_ALL" not in setting:  # (a C locale reads the id typed as two odd bytes)
        assert "nöpe42" in message


@pytest.mark.parametrize("redirect,why", [(">&-", "it is closed"),
                                          (">/dev/full", "No space left on device")],
                         ids=["closed", "full"])
@pytest.mark.parametrize("args", [["search", "--json", "zeppelin"], ["search", "zeppelin"],
                                  ["memory", "list", "--json"], ["--json", "search", "-n",
                                                                 "0", "x"]],
                         ids=lambda a: " ".join(a))
def test_a_closed_or_full_stdout_is_one_line_on_stderr(vault: Path, tmp_path: Path,
                                                       redirect: str, why: str,
                                                       args: list[str]) -> None:
    if redirect == ">/dev/full" and not os.path.exists("/dev/full"):
        # Linux always has it (CI runs there); elsewhere the case cannot be set up.
        assert not sys.platform.startswith("linux"), "/dev/full is missing on Linux"
        set_up_unavailable("this system has no /dev/full")
    _script(tmp_path, vault, "index", "rebuild")
    results = []
    for click_only in (False, True):  # the console script (quick path first) and click
        for unbuffered in ("1", ""):
            env = _env(tmp_path, PYTHONUNBUFFERED=unbuffered)
            done = _script(tmp_path, vault, *args, env=env, redirect=redirect,
                           click_only=click_only)
            results.append((done.returncode, done.stderr))
    assert results[0] == (1, f"error: cannot write to standard output: {why}\n".encode())
    assert set(results) == {results[0]}


def test_a_closed_stdout_is_not_reused_for_a_file(vault: Path, tmp_path: Path) -> None:
    """With stdout closed, a command that writes nothing there still works and no file
    of the vault ends up on its descriptor (where a stray write would land)."""
    done = _script(tmp_path, vault, "-q", "remember", "I prefer tea", redirect=">&-")
    facts = _script(tmp_path, vault, "memory", "list", "--json")
    assert [f["text"] for f in json.loads(facts.stdout)["facts"]] == ["I prefer tea"]
    fact_id = json.loads(facts.stdout)["facts"][0]["id"]
    assert done.returncode == 0 and done.stderr == (  # saved: only the report was lost
        f"warning: cannot write to standard output: it is closed; remembered as "
        f"{fact_id}\n".encode())
