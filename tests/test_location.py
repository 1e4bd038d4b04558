"""Vault location and layout: --vault, MEMVAULT_VAULT, the nearest .memvault/, the
per-user default vault; `init` is idempotent and never overwrites; scopes are isolated."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from memvault import Vault
from memvault.cli.app import app
from memvault.config import locate_vault
from memvault.services.setup import TRADING_FOLDERS, memory_files
from tests.conftest import run_memvault


def _invoke(*args: str, expect: int = 0):
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == expect, (result.output, result.stderr, result.exception)
    return result


def _facts(*args: str) -> list[str]:
    out = _invoke(*args, "memory", "list", "--all", "--json").stdout
    return [f["text"] for f in json.loads(out)["facts"]]


# -- where the vault is --------------------------------------------------------------------


def test_vault_option_beats_the_environment(vault_dir: Path, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    other = tmp_path / "other"
    monkeypatch.setenv("MEMVAULT_VAULT", str(other))
    _invoke("--vault", str(vault_dir), "remember", "in the chosen vault")
    assert "in the chosen vault" in (vault_dir / "Pilot/Memory.md").read_text()
    assert not other.exists()


def test_environment_variable_selects_the_vault(vault_dir: Path, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MEMVAULT_VAULT", str(vault_dir))
    _invoke("remember", "via the environment")
    assert _facts("--vault", str(vault_dir)) == ["via the environment"]
    assert locate_vault() == (vault_dir, "MEMVAULT_VAULT")


def test_nearest_parent_holding_dot_memvault_is_used(vault_dir: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    deep = vault_dir / "Pilot" / "Journal" / "2026"
    deep.mkdir(parents=True)
    monkeypatch.chdir(deep)
    assert locate_vault() == (vault_dir, "nearest .memvault/")
    out = run_memvault("remember", "found by walking up", "--json", cwd=deep)
    assert out.returncode == 0, out.stderr
    assert "found by walking up" in (vault_dir / "Pilot/Memory.md").read_text()
    assert not (deep / ".memvault").exists()


def test_default_per_user_vault_is_created_on_first_use(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    nowhere = tmp_path / "nowhere"
    nowhere.mkdir()
    monkeypatch.chdir(nowhere)
    default = tmp_path / "home" / ".local" / "share" / "memvault" / "vault"  # XDG_DATA_HOME
    assert not default.exists()
    result = _invoke("remember", "stored in the default vault")
    assert result.stderr == (f"memvault: created your vault at {default} (the per-user "
                             "default; --vault or MEMVAULT_VAULT picks another folder, "
                             "`memvault init PATH` makes one)\n")
    assert (default / ".memvault" / "config.toml").is_file()
    for name in memory_files():
        assert (default / "Pilot" / name).is_file()
    assert not (default / "Pilot" / "Policy.md").exists()  # memory only
    assert not any((default / "Pilot" / folder).exists() for folder in TRADING_FOLDERS)
    assert "created your vault" not in _invoke("memory", "list").stderr  # only the first time
    assert "stored in the default vault" in (default / "Pilot/Memory.md").read_text()
    assert not (nowhere / ".memvault").exists()
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert locate_vault() == (tmp_path / "xdg" / "memvault" / "vault",
                              "default per-user vault")


def test_default_vault_without_xdg_lives_under_home(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.chdir(tmp_path)
    root, how = locate_vault()
    assert root == tmp_path / "home" / ".local" / "share" / "memvault" / "vault"
    assert how == "default per-user vault"


def test_vault_path_that_is_a_file_is_an_error(tmp_path: Path) -> None:
    f = tmp_path / "file.md"
    f.write_bytes(b"not a folder")
    result = _invoke("--vault", str(f), "memory", "list", expect=1)
    assert result.stderr.startswith("error: ") and "is a file" in result.stderr
    assert _invoke("init", str(f), expect=1).stderr.count("\n") == 1
    assert f.read_bytes() == b"not a folder"


# -- init ----------------------------------------------------------------------------------


def test_init_is_idempotent_and_never_overwrites(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    first = json.loads(_invoke("init", str(root), "--json").stdout)
    assert ".memvault/config.toml" in first["created"] and first["kept"] == []
    edited = {
        root / "Pilot/Memory.md": b"# Mine\r\n- my own fact\r\n",
        root / "Pilot/Profile.md": b"---\nname: Sam\n---\nhand-edited\n",
        root / ".memvault/config.toml": (root / ".memvault/config.toml").read_bytes()
        + b"# my comment\n",
    }
    for path, data in edited.items():
        path.write_bytes(data)
    (root / "Pilot/Lessons.md").unlink()
    snapshot = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in root.rglob("*")
                if p.is_file()}
    second = json.loads(_invoke("init", str(root), "--json").stdout)
    assert second["created"] == ["Pilot/Lessons.md"]
    assert "Pilot/Memory.md" in second["kept"] and ".memvault/config.toml" in second["kept"]
    for path, before in snapshot.items():
        assert (path.read_bytes(), path.stat().st_mtime_ns) == before, path
    assert _invoke("init", str(root)).stdout.count("created") == 0


def test_init_with_a_scope_creates_that_principals_home(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    _invoke("init", str(root))
    out = json.loads(_invoke("--scope", "Wallet-1", "init", str(root), "--json").stdout)
    assert "Pilot/scopes/wallet-1/Memory.md" in out["created"]
    assert (root / "Pilot/Memory.md").is_file()


# -- scopes -------------------------------------------------------------------------------


def test_scopes_never_see_each_others_facts(vault_dir: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    v = ("--vault", str(vault_dir))
    _invoke(*v, "remember", "default principal fact")
    _invoke(*v, "--scope", "alice", "remember", "alice likes tea")
    _invoke(*v, "--scope", "bob", "remember", "bob likes coffee")
    _invoke(*v, "--scope", "bob", "remember", "alice likes tea")  # same text, other principal
    assert _facts(*v) == ["default principal fact"]
    assert _facts(*v, "--scope", "alice") == ["alice likes tea"]
    assert sorted(_facts(*v, "--scope", "bob")) == ["alice likes tea", "bob likes coffee"]
    assert (vault_dir / "Pilot/scopes/alice/Memory.md").is_file()
    # Forgetting in one scope leaves the other alone, and its history stays private.
    alice_id = json.loads(_invoke(*v, "--scope", "alice", "memory", "list", "--json").stdout)[
        "facts"][0]["id"]
    _invoke(*v, "--scope", "alice", "forget", "tea", "--yes")
    assert sorted(_facts(*v, "--scope", "bob")) == ["alice likes tea", "bob likes coffee"]
    assert not Vault.open(vault_dir, scope="bob").tombstones.is_tombstoned("alice likes tea")
    _invoke(*v, "--scope", "bob", "memory", "show", alice_id, expect=1)
    monkeypatch.setenv("MEMVAULT_SCOPE", "bob")
    assert sorted(_facts(*v)) == ["alice likes tea", "bob likes coffee"]


@pytest.mark.parametrize("scope", ["../escape", "a/b", ".hidden", "con", "a..b", "x" * 65,
                                   "-dash", "wallet:0xabc"])
def test_invalid_scope_names_are_refused(vault_dir: Path, scope: str) -> None:
    before = sorted(p for p in vault_dir.rglob("*"))
    result = _invoke("--vault", str(vault_dir), "--scope", scope, "remember", "x", expect=1)
    assert result.stderr.startswith("error: ") and "scope" in result.stderr
    assert result.stderr.count("\n") == 1
    assert sorted(p for p in vault_dir.rglob("*")) == before
    assert not (vault_dir.parent / "escape").exists()


def test_scope_named_default_is_the_default_principal(vault_dir: Path) -> None:
    v = ("--vault", str(vault_dir))
    fid = json.loads(_invoke(*v, "remember", "unscoped fact", "--json").stdout)["fact"]["id"]
    assert _facts(*v, "--scope", "Default") == ["unscoped fact"]
    shown = json.loads(_invoke(*v, "--scope", "default", "memory", "show", fid,
                               "--json").stdout)
    assert shown["state"] == "active"  # not "forgotten" seen from a look-alike principal
    assert not (vault_dir / "Pilot/scopes/default").exists()


def test_a_missing_vault_folder_is_an_error_not_a_new_vault(tmp_path) -> None:
    from tests.conftest import run_memvault

    typo = tmp_path / "Notez"
    out = run_memvault("--vault", str(typo), "memory", "list")
    assert out.returncode == 1
    assert out.stderr.strip().splitlines() == [
        f"error: {typo}: no such folder; create the vault with `memvault init {typo}`"]
    assert not typo.exists()
