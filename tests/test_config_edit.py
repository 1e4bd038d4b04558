"""`memvault config set` changes one value in config.toml and nothing else: the person's
comments, spacing, quoting, blank lines, tables and line endings stay byte for byte."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from memvault import Vault
from memvault.config import set_config_value
from memvault.errors import InvalidInput
from memvault.services.migrations import CURRENT_FORMAT
from tests.conftest import Cli

COMMENTED = (
    "# My vault's settings (hand-written; keep this header)\n"
    "\n"
    "home   = \"Pilot\"      # the memory folder\n"
    "backend = 'fs'\n"
    "\n"
    "# Ask before saving anything from chat.\n"
    "capture = \"ask\"  # changed on 2026-11-02 after the trip\n"
    "learning=true\n"
    "\"retrieval\" = true # quoted key\n"
    "tombstone_salt = \"0123456789abcdef0123456789abcdef\"\n"
    f"vault_format = {CURRENT_FORMAT}\n"
    "\n"
    "[context]   # budgets\n"
    "budget = 3000  # a bit shorter than the default\n"
    "\n"
    "# the end\n"
)


def _write_config(root: Path, text: str) -> Path:
    path = root / ".memvault" / "config.toml"
    path.write_bytes(text.encode("utf-8"))
    return path


@pytest.mark.parametrize("eol", ["\n", "\r\n"], ids=["lf", "crlf"])
@pytest.mark.parametrize("key,arg,before,after", [
    ("capture", "silent", 'capture = "ask"  #', 'capture = "silent"  #'),
    ("learning", "off", "learning=true\n", "learning=false\n"),
    ("retrieval", "false", '"retrieval" = true #', '"retrieval" = false #'),
])
def test_config_set_changes_only_the_value(cli: Cli, vault_dir: Path, eol: str, key: str,
                                           arg: str, before: str, after: str) -> None:
    original = COMMENTED.replace("\n", eol)
    path = _write_config(vault_dir, original)
    cli("config", "set", key, arg)
    expected = original.replace(before.replace("\n", eol), after.replace("\n", eol))
    assert expected != original
    assert path.read_bytes() == expected.encode("utf-8")
    assert str(cli("config", "get", key).stdout).strip().endswith(
        {"silent": "silent", "off": "false", "false": "false"}[arg])


def test_a_new_setting_is_one_added_line_before_the_first_table(vault_dir: Path) -> None:
    original = COMMENTED.replace('tombstone_salt = "0123456789abcdef0123456789abcdef"\n', "")
    path = _write_config(vault_dir, original)
    vault = Vault.open(vault_dir)
    salt = vault.tombstones.salt  # created on first use: one new config line
    new = path.read_text("utf-8").split("\n")
    old = original.split("\n")
    added = [line for line in new if line not in old]
    assert added == [f'tombstone_salt = "{salt}"']
    assert [line for line in new if line in old] == old  # every old line, in order
    assert new.index(added[0]) < new.index("[context]   # budgets")


def test_a_file_without_a_final_newline_keeps_having_none() -> None:
    assert set_config_value('capture = "ask"', "capture", "manual") == 'capture = "manual"'
    assert set_config_value('capture = "ask"', "learning", False) == (
        'capture = "ask"\nlearning = false')


def test_an_invalid_value_or_file_changes_nothing(cli: Cli, vault_dir: Path) -> None:
    path = _write_config(vault_dir, COMMENTED)
    result = cli("config", "set", "capture", "always", expect=1)
    assert "capture must be one of" in result.stderr
    assert path.read_text("utf-8") == COMMENTED
    broken = COMMENTED + "oops = \n"
    path.write_text(broken, "utf-8")
    proc = subprocess.run([sys.executable, "-m", "memvault", "--vault", str(vault_dir),
                           "config", "set", "capture", "manual"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert proc.stderr.startswith("error: .memvault/config.toml: invalid TOML")
    assert path.read_text("utf-8") == broken


def test_a_table_is_not_a_setting() -> None:
    with pytest.raises(InvalidInput, match="table"):
        set_config_value(COMMENTED, "context", "x")
