"""Packaging metadata says what the code does: every library memvault imports is declared,
every declared library is used (or named below with the reason it is kept), and the
licence is declared the current way with its text shipped beside the code."""

from __future__ import annotations

import ast
import functools
import re
import sys
import tomllib
from importlib.metadata import PackageNotFoundError, packages_distributions, requires
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src" / "memvault"
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))

# Declared for planned work before any module imports it: name -> what it will do.
# Remove an entry as soon as the library is imported.
DECLARED_FOR_PLANNED_USE: dict[str, str] = {}
# Declared for the files their wheels carry, read as data and never imported: name -> why.
DECLARED_FOR_FILES: dict[str, str] = {
    "wordllama": "its wheel holds the optional static model's weights and tokenizer, "
                 "which memvault/embeddings/static.py reads from the package folder",
}


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirement_name(requirement: str) -> str:
    match = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement)
    assert match, requirement
    return _norm(match.group(0))


def _with_extras(requirement: str) -> set[str]:
    """The distribution a requirement names, plus those its `[extras]` pull in."""
    names = {_requirement_name(requirement)}
    extras = re.search(r"\[([^\]]+)\]", requirement)
    if extras:
        wanted = {e.strip() for e in extras.group(1).split(",")}
        try:
            needs = requires(_requirement_name(requirement)) or []
        except PackageNotFoundError:
            needs = []
        for need in needs:
            extra = re.search(r"""extra\s*==\s*["']([^"']+)""", need)
            if extra and extra.group(1) in wanted:
                names.add(_requirement_name(need))
    return names


def _declared() -> set[str]:
    project = PYPROJECT["project"]
    names: set[str] = set()
    for requirement in project["dependencies"]:
        names |= _with_extras(requirement)
    for group in project.get("optional-dependencies", {}).values():
        for requirement in group:
            if not requirement.startswith("memvault"):
                names |= _with_extras(requirement)
    return names


def _imported_top_level_modules() -> set[str]:
    found = set()
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.Import):
                found |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
    return {m for m in found if m not in sys.stdlib_module_names and m != "memvault"}


@functools.cache
def _module_to_distributions() -> dict[str, list[str]]:
    return packages_distributions()


def _distributions_for(module: str) -> set[str]:
    return {_norm(d) for d in _module_to_distributions().get(module, [module])}


def test_every_imported_library_is_declared() -> None:
    declared = _declared()
    missing = {m: sorted(_distributions_for(m)) for m in _imported_top_level_modules()
               if not _distributions_for(m) & declared}
    assert missing == {}, f"imported but not declared in pyproject.toml: {missing}"


def test_every_declared_runtime_library_is_used_or_planned() -> None:
    used = set()
    for module in _imported_top_level_modules():
        used |= _distributions_for(module)
    runtime = {_requirement_name(r) for r in PYPROJECT["project"]["dependencies"]}
    unused = runtime - used - {_norm(n) for n in (*DECLARED_FOR_PLANNED_USE,
                                                  *DECLARED_FOR_FILES)}
    assert unused == set(), f"declared but never imported: {sorted(unused)}"


def test_licence_is_an_spdx_expression_with_its_file() -> None:
    project = PYPROJECT["project"]
    assert project["license"] == "MIT"
    assert not any(c.startswith("License ::") for c in project.get("classifiers", []))
    for name in project["license-files"]:
        assert "MIT License" in (REPO / name).read_text("utf-8")
    backend = " ".join(PYPROJECT["build-system"]["requires"])
    version = re.search(r"setuptools>=(\d+)", backend)
    assert version and int(version.group(1)) >= 77, "SPDX licence strings need setuptools 77"


def test_project_has_classifiers_and_urls() -> None:
    project = PYPROJECT["project"]
    assert any(c.startswith("Programming Language :: Python :: 3.11")
               for c in project["classifiers"])
    assert {"Homepage", "Repository", "Issues"} <= set(project["urls"])


def test_a_library_declared_for_its_files_is_read_where_it_says() -> None:
    """wordllama is declared (the `static` extra) for its model files: the loader must
    still name it."""
    from memvault.embeddings import static

    extra = PYPROJECT["project"]["optional-dependencies"]["static"]
    for name in DECLARED_FOR_FILES:
        assert name in {_requirement_name(r) for r in extra}
    assert static.PACKAGE == "wordllama"


def test_the_built_in_model_files_ship_in_the_package_with_their_licence() -> None:
    """The default recall model's weights and tokenizer are package data (a wheel without
    them would leave recall by words only), with the Apache-2.0 text they came under."""
    from memvault.embeddings import minilm

    package_data = PYPROJECT["tool"]["setuptools"]["package-data"]["memvault"]
    assert "embeddings/data/*" in package_data
    for path in (minilm.WEIGHTS, minilm.TOKENIZER, minilm.DATA / "NOTICE.md",
                 minilm.DATA / "LICENSE-Apache-2.0.txt"):
        assert path.is_file(), path
    assert "Apache License" in (minilm.DATA / "LICENSE-Apache-2.0.txt").read_text()
