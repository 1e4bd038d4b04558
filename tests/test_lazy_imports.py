"""Start-up stays lean: `memvault memory list --json` never imports heavy libraries, and
no cold command that does not rank memory by meaning imports the embedding stack
(numpy, tokenizers), although it is part of the default install.

Each check runs the real CLI entry point in a fresh interpreter and then looks at
`sys.modules`. If this fails after adding a feature, move the new import inside the
function that needs it (see the "Keep CLI start-up lean" rule). Commands are imported
lazily (`memvault.cli.app.COMMANDS`): running one command loads its own module only.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("github", "watchdog", "markdown_it", "pydantic", "pydantic_core", "yaml", "rich",
         "frontmatter", "mcp", "cryptography", "typer", "rapidfuzz", "numpy", "tokenizers",
         "safetensors", "wordllama")
EMBEDDING = {"numpy", "tokenizers", "safetensors", "wordllama"}

_PROBE = """
import json, sys
out_path, entry, argv = sys.argv[1], sys.argv[2], sys.argv[3:]
sys.argv = ["memvault", *argv]
if entry == "console-script":
    from memvault.cli.entry import main
else:
    from memvault.cli.app import main
code = 0
try:
    main()
except SystemExit as exc:
    code = exc.code or 0
heavy = sorted({m.split(".")[0] for m in sys.modules} & set(json.loads(HEAVY)))
cli = sorted(m for m in sys.modules if m.startswith("memvault.cli."))
memvault = sorted(m for m in sys.modules if m.startswith("memvault."))
everything = sorted({m.split(".")[0] for m in sys.modules})
with open(out_path, "w") as fh:
    json.dump({"exit": code, "heavy": heavy, "cli": cli, "memvault": memvault,
               "top": everything}, fh)
"""


def probe(tmp_path: Path, *argv: str, entry: str = "click") -> tuple[dict, str]:
    out = tmp_path / "probe.json"
    code = _PROBE.replace("json.loads(HEAVY)", repr(json.dumps(list(HEAVY))).join(
        ["json.loads(", ")"]))
    done = subprocess.run([sys.executable, "-c", code, str(out), entry, *argv],
                          capture_output=True, text=True, timeout=60, env=dict(os.environ))
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


def test_a_command_loads_only_its_own_command_module(vault_dir, tmp_path) -> None:
    result, _ = probe(tmp_path, "--vault", str(vault_dir), "memory", "list", "--json")
    assert result["exit"] == 0
    own = {"memvault.cli.app", "memvault.cli.base", "memvault.cli.state", "memvault.cli.memory"}
    assert set(result["cli"]) <= own | {"memvault.cli.errors", "memvault.cli.json_output",
                                        "memvault.cli.streams"}, \
        result["cli"]
    assert "memvault.cli.memory" in result["cli"]


def test_flags_after_the_command_import_no_heavy_library_either(vault_dir, tmp_path) -> None:
    result, stdout = probe(tmp_path, "--vault", str(vault_dir), "memory", "list", "-q",
                           "--json")
    assert result["exit"] == 0 and json.loads(stdout)["facts"] == []
    assert result["heavy"] == []


@pytest.mark.parametrize("argv", [
    ("context", "--json"),
    ("search", "--json", "harbor"),
    ("memory", "list", "--all", "--json"),
    ("remember", "--json", "I drink tea", "--category", "preference"),
    ("memory", "show", "--json", "nosuchid"),  # an unknown id: exit 1
])
def test_cold_commands_that_do_not_rank_by_meaning_never_import_the_embedding_stack(
        vault_dir, tmp_path, argv) -> None:
    (vault_dir / "Harbor.md").write_text("# Harbor\n\nthe harbor at dawn\n", encoding="utf-8")
    result, _ = probe(tmp_path, "--vault", str(vault_dir), *argv)
    assert result["exit"] == (1 if "nosuchid" in argv else 0)
    assert not set(result["heavy"]) & EMBEDDING, result["heavy"]


def test_a_plain_json_search_skips_click_and_most_of_memvault(vault_dir, tmp_path) -> None:
    """The console script answers `search --json` on an up-to-date index through the
    quick path (`cli/quick.py`): no CLI library, no record types, no note parser, no
    embedding stack, and none of the services a search does not use."""
    for name in ("Harbor", "Port", "Quay"):  # enough hits: no typo or fuzzy fallback
        (vault_dir / f"{name}.md").write_text(f"# {name}\n\nthe harbor at dawn\n",
                                              encoding="utf-8")
    first, _ = probe(tmp_path, "--vault", str(vault_dir), "search", "--json", "harbor",
                     entry="console-script")  # builds the index (the ordinary path)
    assert first["exit"] == 0 and "click" in first["top"]
    result, stdout = probe(tmp_path, "--vault", str(vault_dir), "search", "--json", "harbor",
                           entry="console-script")
    assert result["exit"] == 0
    assert sorted(r["path"] for r in json.loads(stdout)["results"]) == [
        "Harbor.md", "Port.md", "Quay.md"]
    assert not {"click", "rich", "typer"} & set(result["top"]), result["top"]
    # nor the standard library's slow starters: no dataclass, Path or thread on this path
    assert not {"dataclasses", "inspect", "pathlib", "threading"} & set(result["top"])
    assert result["heavy"] == [], result["heavy"]
    assert result["cli"] == ["memvault.cli.entry", "memvault.cli.json_output",
                             "memvault.cli.quick", "memvault.cli.streams"], result["cli"]
    never = {"memvault.core.records", "memvault.core.kinds", "memvault.core.bullets",
             "memvault.core.notes", "memvault.index.store", "memvault.index.scan",
             "memvault.services.vault", "memvault.services.memory",
             "memvault.services.proposals", "memvault.services.safety_net",
             "memvault.backends.fs", "memvault.embeddings"}
    assert not never & set(result["memvault"]), sorted(never & set(result["memvault"]))
