"""The `.memvault/` state folder is named in one module (`memvault.state_paths`).

A new file in the state folder, or a rename, is then a one-line change; these tests fail
when code spells the folder itself again, and check that what `init` writes and what
`sync --setup` git-ignores agree with that one list.
"""

from __future__ import annotations

import ast
import subprocess
from pathlib import Path

import memvault
from memvault import state_paths
from memvault.services.setup import init_vault

SRC = Path(memvault.__file__).parent


def _docstring_nodes(tree: ast.AST) -> set[int]:
    nodes: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                nodes.add(id(body[0].value))
    return nodes


def _names_state_folder(text: str) -> bool:
    return ".memvault/" in text or text.strip() == ".memvault"


def test_no_module_but_state_paths_spells_the_state_folder() -> None:
    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        if path.name == "state_paths.py":
            continue
        tree = ast.parse(path.read_text("utf-8"))
        docs = _docstring_nodes(tree)  # prose for readers may name the folder
        for node in ast.walk(tree):
            if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                    and id(node) not in docs and _names_state_folder(node.value)):
                offenders.append(f"{path.relative_to(SRC)}:{node.lineno}: {node.value!r}")
    assert offenders == [], "use memvault.state_paths instead:\n" + "\n".join(offenders)


def test_init_writes_the_named_files_and_ignores_exactly_the_caches(tmp_path: Path) -> None:
    root = tmp_path / "v"
    init_vault(root)
    assert (root / state_paths.CONFIG).is_file()
    ignore = (root / state_paths.GITIGNORE).read_text("utf-8").splitlines()
    assert [line for line in ignore if not line.startswith("#")] == list(
        state_paths.CACHE_PATTERNS)


def test_git_ignores_the_caches_and_keeps_the_history(tmp_path: Path) -> None:
    """Real git decides: caches are ignored, config and journals are not."""
    root = tmp_path / "v"
    init_vault(root)
    subprocess.run(["git", "init", "-q", str(root)], check=True, timeout=30)
    probes = [state_paths.INDEX, state_paths.INDEX + "-wal", state_paths.INDEX + "-lock",
              state_paths.LOCK, state_paths.state_path(".x.tmp"),
              state_paths.PARSED + "/Pilot%2FMemory.md", *state_paths.JOURNALS,
              state_paths.CONFIG, state_paths.GITIGNORE]
    (root / state_paths.PARSED).mkdir()
    for rel in probes:
        (root / rel).touch()
    ignored = subprocess.run(["git", "check-ignore", *probes], cwd=root, capture_output=True,
                             text=True, timeout=30).stdout.split()
    assert sorted(ignored) == sorted(probes[:6])


def test_the_parse_cache_ignores_itself_in_a_vault_whose_gitignore_predates_it(
        tmp_path: Path) -> None:
    """A vault of format 3 has no `parsed/` line in `.memvault/.gitignore`: the folder's
    own `.gitignore` keeps it out of git all the same (real git decides)."""
    from memvault import Vault

    root = tmp_path / "v"
    init_vault(root)
    ignore = root / state_paths.GITIGNORE
    ignore.write_text(ignore.read_text().replace("parsed/\n", ""))
    subprocess.run(["git", "init", "-q", str(root)], check=True, timeout=30)
    Vault.open(root).memory.remember("I drink tea")
    entries = sorted(p.relative_to(root).as_posix() for p in (root / state_paths.PARSED).iterdir())
    assert any(e.endswith(".Pilot%2FMemory.md") for e in entries)
    assert state_paths.PARSED + "/.key" in entries
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"],
                            cwd=root, capture_output=True, text=True, timeout=30).stdout
    assert "Pilot/Memory.md" in status and state_paths.PARSED not in status
