"""Start-up stays lean: `memvault memory list --json` never imports heavy libraries.

Each check runs the real CLI entry point in a fresh interpreter and then looks at
`sys.modules`. If this fails after adding a feature, move the new import inside the
function that needs it (see the "Keep CLI start-up lean" rule); if it fails after a
Typer upgrade, look at `memvault/cli/coercion.py` (Typer builds pydantic adapters for
every option unless plain options are coerced without it).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("github", "watchdog", "markdown_it", "pydantic", "pydantic_core", "yaml", "rich",
         "frontmatter", "mcp", "cryptography")

_PROBE = """
import json, sys
out_path, argv = sys.argv[1], sys.argv[2:]
sys.argv = ["memvault", *argv]
from memvault.cli.app import main
code = 0
try:
    main()
except SystemExit as exc:
    code = exc.code or 0
heavy = sorted({m.split(".")[0] for m in sys.modules} & set(json.loads(HEAVY)))
with open(out_path, "w") as fh:
    json.dump({"exit": code, "heavy": heavy}, fh)
"""


def probe(tmp_path: Path, *argv: str) -> tuple[dict, str]:
    out = tmp_path / "probe.json"
    code = _PROBE.replace("json.loads(HEAVY)", repr(json.dumps(list(HEAVY))).join(
        ["json.loads(", ")"]))
    done = subprocess.run([sys.executable, "-c", code, str(out), *argv], capture_output=True,
                          text=True, timeout=60, env=dict(os.environ))
    assert out.exists(), done.stderr
    return json.loads(out.read_text()), done.stdout


def test_memory_list_json_imports_no_heavy_library(vault_dir, tmp_path) -> None:
    result, stdout = probe(tmp_path, "--vault", str(vault_dir), "memory", "list", "--json")
    assert result["exit"] == 0
    assert json.loads(stdout)["facts"] == []
    assert result["heavy"] == []


def test_memory_list_with_options_given_still_imports_no_heavy_library(vault_dir,
                                                                      tmp_path) -> None:
    result, stdout = probe(tmp_path, "--vault", str(vault_dir), "--scope", "wallet-1",
                           "memory", "list", "--all", "--category", "Preference", "--json")
    assert result["exit"] == 0
    assert json.loads(stdout)["path"] == "Pilot/scopes/wallet-1/Memory.md"
    assert result["heavy"] == []


def test_version_imports_no_heavy_library(tmp_path) -> None:
    result, stdout = probe(tmp_path, "--version")
    assert result["exit"] == 0 and stdout.startswith("memvault ")
    assert result["heavy"] == []


@pytest.mark.parametrize("kind,value", [
    (bool, "1"), (bool, "true"), (bool, "YES"), (bool, "off"), (bool, "F"), (bool, "maybe"),
    (bool, ""), (int, "42"), (int, "-3"), (int, "4.5"), (int, "x"), (float, "2.5"),
    (float, "1e3"), (float, "nan?"), (str, "anything at all"), (str, ""),
])
def test_plain_coercion_accepts_and_converts_exactly_what_pydantic_does(kind, value) -> None:
    """memvault/cli/coercion.py replaces Typer's pydantic coercion for plain types; it must
    accept the same values and turn them into the same Python values."""
    from pydantic import TypeAdapter, ValidationError
    from typer._click.exceptions import BadParameter
    from typer.models import OptionInfo

    from memvault.cli.coercion import _plain_runtime_param_class

    plain = _plain_runtime_param_class()(parameter_info=OptionInfo(), annotation=kind)
    try:
        expected = ("ok", TypeAdapter(kind).validate_python(value))
    except ValidationError:
        expected = ("error", None)
    try:
        got = ("ok", plain._coerce_value(value, param=None, ctx=None))
    except BadParameter:
        got = ("error", None)
    assert got == expected
