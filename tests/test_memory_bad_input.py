"""Bad input: a one-line error naming the file and the reason, exit 1, nothing changed."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import run_memvault
from tests.golden.support import MEMORY, golden_bytes, put_memory, snapshot

WRITE_COMMANDS = [
    ("remember", "A new fact"),
    ("memory", "edit", "nul002", "changed"),
    ("memory", "delete", "nul002", "--yes"),
    ("forget", "fine", "--yes"),
    ("memory", "clear", "--yes"),
]


def _one_line_error(result, *parts: str) -> str:
    err = result.stderr
    assert err.count("\n") == 1 and err.startswith("error: "), err
    for part in parts:
        assert part in err, (part, err)
    assert "Traceback" not in err
    return err


def _vault_state(vault_dir: Path) -> dict[str, bytes]:
    """Every regular file of the vault except the lock file and the parse cache (which a
    read may fill), with its bytes."""
    from memvault.state_paths import PARSED

    return {str(p.relative_to(vault_dir)): p.read_bytes() for p in vault_dir.rglob("*")
            if p.is_file() and p.name != "lock"
            and not p.relative_to(vault_dir).as_posix().startswith(PARSED + "/")}


# -- unknown ids and read-only items ---------------------------------------------------


@pytest.mark.parametrize("args", [("memory", "show", "zzz999"),
                                  ("memory", "edit", "zzz999", "new text"),
                                  ("memory", "delete", "zzz999", "--yes"),
                                  ("memory", "restore", "zzz999")])
def test_unknown_id_is_a_one_line_error_and_changes_nothing(cli, vault_dir: Path,
                                                            args: tuple[str, ...]) -> None:
    put_memory(vault_dir, "memory_handedited.md")
    before = _vault_state(vault_dir)
    _one_line_error(cli(*args, expect=1), "zzz999")
    assert _vault_state(vault_dir) == before


@pytest.mark.parametrize(("fact_id", "reason"), [
    ("two002", "two metadata comments on one line"),
])
def test_editing_an_ambiguous_item_is_refused(cli, vault_dir: Path, fact_id: str,
                                              reason: str) -> None:
    path = put_memory(vault_dir, "memory_handedited.md")
    before = snapshot(path)
    _one_line_error(cli("memory", "edit", fact_id, "x", expect=1), MEMORY, reason)
    _one_line_error(cli("memory", "delete", fact_id, "--yes", expect=1), MEMORY)
    assert snapshot(path) == before


def test_a_copied_line_gets_its_own_id_on_the_next_write_with_a_warning(cli,
                                                                       vault_dir: Path) -> None:
    # Lines 26 and 27 share id dup001 (a copied line, edited). The next write keeps the id
    # on the first and gives the later copy an id of its own: both texts stay.
    path = put_memory(vault_dir, "memory_handedited.md")
    listed = json.loads(cli("memory", "list", "--all", "--json").stdout)
    before = snapshot(path)
    assert snapshot(path) == before  # reading never writes
    out = cli("memory", "edit", "dup001", "Copied line, corrected")
    assert "duplicate id dup001 on lines 26, 27" in out.stderr and "later copy is now" in \
        out.stderr
    texts = {f["id"]: f["text"] for f in json.loads(
        cli("memory", "list", "--all", "--json").stdout)["facts"]}
    assert texts["dup001"] == "Copied line, corrected"
    assert "Copied line, edited after a sync" in texts.values()
    # Reading showed the copy under the id the write then gave it (derived, not random).
    assert set(texts) == {f["id"] for f in listed["facts"]}


def test_non_utf8_line_round_trips_but_cannot_be_edited(cli, vault_dir: Path) -> None:
    old = golden_bytes("memory_latin1.md")
    path = put_memory(vault_dir, "memory_latin1.md")
    _one_line_error(cli("memory", "edit", "lat001", "café", expect=1),
                    f"{MEMORY}: line 3 is read-only: line is not valid UTF-8")
    assert path.read_bytes() == old
    listed = json.loads(cli("memory", "list", "--all", "--json").stdout)["facts"]
    assert {f["id"]: f["read_only"] for f in listed}["lat001"] == "line is not valid UTF-8"
    cli("memory", "edit", "lat002", "a clean line may change")  # other lines stay editable
    cli("remember", "and facts may be added")
    new = path.read_bytes()
    assert b"- I like caf\xe9 au lait [preference]" in new and b"\xef\xbf\xbd" not in new


# -- files memvault must not write -------------------------------------------------------


@pytest.mark.parametrize(("name", "reason"), [
    ("memory_nul.md", "file contains NUL bytes"),
    ("memory_utf16.md", "file is UTF-16 encoded"),
    ("memory_lone_cr.md", "bare CR line endings"),
    ("memory_unclosed_fence.md", "code fence opened on line 5 is never closed"),
])
def test_unwritable_memory_file_refuses_every_write(cli, vault_dir: Path, name: str,
                                                    reason: str) -> None:
    path = put_memory(vault_dir, name)
    before = _vault_state(vault_dir)
    mtime = path.stat().st_mtime_ns
    for args in WRITE_COMMANDS:
        result = cli(*args, expect=1)
        if "no fact with id" in result.stderr:
            continue  # UTF-16 / lone CR: no fact could be read at all, so no such id
        _one_line_error(result, MEMORY, reason)
    assert _vault_state(vault_dir) == before and path.stat().st_mtime_ns == mtime
    listed = cli("memory", "list", "--json")
    assert reason in json.loads(listed.stdout)["read_only"]
    assert f"{MEMORY} is read-only for memvault" in listed.stderr


def test_nul_file_error_through_a_real_process(vault_dir: Path) -> None:
    path = put_memory(vault_dir, "memory_nul.md")
    before = snapshot(path)
    out = run_memvault("--vault", str(vault_dir), "remember", "something")
    assert out.returncode == 1
    assert out.stderr == f"error: {MEMORY}: file contains NUL bytes (binary?)\n"
    assert snapshot(path) == before


def test_memory_file_that_is_a_folder_is_a_clear_error(cli, vault_dir: Path) -> None:
    (vault_dir / MEMORY).unlink()
    (vault_dir / MEMORY).mkdir()
    (vault_dir / MEMORY / "inside.md").write_bytes(b"- not mine\n")
    before = _vault_state(vault_dir)
    for args in [("memory", "list"), ("memory", "show", "abc"), ("remember", "x y"),
                 ("memory", "edit", "abc", "t"), ("forget", "x", "--yes")]:
        _one_line_error(cli(*args, expect=1), f"{MEMORY}: is a folder, expected a file")
    assert _vault_state(vault_dir) == before


def test_writes_refuse_a_read_only_memory_file(cli, vault_dir: Path) -> None:
    path = put_memory(vault_dir, b"# Memory\n\n- hand-written, no id yet [other]\n")
    os.chmod(path, 0o444)
    before = snapshot(path)
    for args in [("remember", "A new fact"), ("doctor", "--fix"),
                 ("memory", "edit", json.loads(cli("memory", "list", "--json").stdout)[
                     "facts"][0]["id"], "changed")]:
        _one_line_error(cli(*args, expect=1), MEMORY, "file is read-only")
    assert snapshot(path) == before


# -- paths escaping the vault -------------------------------------------------------------


def test_memory_file_symlinked_outside_the_vault_is_refused(cli, vault_dir: Path,
                                                            tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_bytes(b"- secret fact [other] <!-- id:sec001 updated:1 -->\n")
    (vault_dir / MEMORY).unlink()
    (vault_dir / MEMORY).symlink_to(outside)
    for args in [("memory", "list"), ("remember", "leak"), ("memory", "edit", "sec001", "x")]:
        _one_line_error(cli(*args, expect=1), MEMORY, "outside the vault")
    assert outside.read_bytes() == b"- secret fact [other] <!-- id:sec001 updated:1 -->\n"


@pytest.mark.parametrize("home", ["../outside", "/tmp/outside", "a/../../x", ".obsidian"])
def test_config_home_escaping_the_vault_is_refused(cli, vault_dir: Path, home: str) -> None:
    config = vault_dir / ".memvault/config.toml"
    config.write_text(config.read_text().replace('home = "Pilot"', f'home = "{home}"'))
    before = _vault_state(vault_dir)
    _one_line_error(cli("remember", "x", expect=1), ".memvault/config.toml", "home")
    assert _vault_state(vault_dir) == before
    assert not (vault_dir.parent / "outside").exists()


# -- invalid text and usage -------------------------------------------------------------


@pytest.mark.parametrize(("text", "reason"), [
    ("   ", "the text is empty"), ("two\nlines", "line break"),
    ("sneaky <!-- id:x -->", "HTML comment"), ("hide %% this", "%%"),
    ("[x] looks like a task", "task box"), ("nul\x00byte", "NUL"),
])
def test_invalid_fact_text_is_refused(cli, vault_dir: Path, text: str, reason: str) -> None:
    before = _vault_state(vault_dir)
    _one_line_error(cli("remember", text, expect=2), reason)
    assert _vault_state(vault_dir) == before


def test_unknown_category_is_refused_with_the_valid_ones(cli, vault_dir: Path) -> None:
    before = _vault_state(vault_dir)
    _one_line_error(cli("remember", "x y z", "--category", "mood", expect=2),
                    "unknown category 'mood'", "preference")
    assert _vault_state(vault_dir) == before


def test_usage_errors_exit_2(cli) -> None:
    assert cli("remember", expect=2).exit_code == 2
    assert cli("memory", "edit", expect=2).exit_code == 2
    assert cli("memory", "list", "--bogus", expect=2).exit_code == 2


def test_non_utf8_text_prints_on_a_strict_utf8_stdout(vault_dir: Path) -> None:
    put_memory(vault_dir, "memory_latin1.md")
    env = {"PYTHONIOENCODING": "utf-8:strict"}
    for args in (("memory", "list", "--all", "--json"), ("memory", "list", "--all"),
                 ("memory", "show", "lat001"), ("memory", "show", "lat001", "--json")):
        out = run_memvault("--vault", str(vault_dir), *args, env=env)
        assert out.returncode == 0, (args, out.stderr)
        assert "caf\\xe9" in out.stdout or "caf\\udce9" in out.stdout, out.stdout
    facts = json.loads(run_memvault("--vault", str(vault_dir), "memory", "list", "--all",
                                    "--json", env=env).stdout)["facts"]
    text = {f["id"]: f["text"] for f in facts}["lat001"]
    assert text.encode("utf-8", "surrogateescape") == b"I like caf\xe9 au lait"
