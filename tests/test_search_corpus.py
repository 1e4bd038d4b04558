"""Search over a real Obsidian vault: the Obsidian help in ~36 languages (6,000+ notes).

The corpus is extracted once per session into a temp folder and indexed once; every
test reads that index. The last test checks that no file in the vault was modified.
"""

from __future__ import annotations

import hashlib
import json
import tarfile
from pathlib import Path

import pytest

from memvault import Vault
from memvault.services.setup import init_vault
from tests.conftest import corpus_file, run_memvault

pytestmark = pytest.mark.corpus


def _snapshot(root: Path) -> dict[str, tuple[str, int]]:
    out = {}
    for path in root.rglob("*"):
        if path.is_file() and ".memvault" not in path.relative_to(root).parts:
            out[path.relative_to(root).as_posix()] = (
                hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns)
    return out


@pytest.fixture(scope="session")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> dict:
    tarball = corpus_file("obsidian-help-md.tar.gz")
    root = tmp_path_factory.mktemp("corpus") / "vault"
    root.mkdir()
    with tarfile.open(tarball) as tar:
        tar.extractall(root, filter="data")
    init_vault(root)
    before = _snapshot(root)
    vault = Vault.open(root)
    result = vault.search.refresh()
    return {"root": root, "vault": vault, "before": before, "built": result}


def top(corpus: dict, query: str, n: int = 3, **kw) -> list[str]:
    return [h.path for h in corpus["vault"].search.search(query, limit=n, **kw)]


def test_thousands_of_notes_are_indexed_without_problems(corpus):
    built = corpus["built"]
    assert built.added > 6000
    assert built.skipped == []
    status = corpus["vault"].search.status()
    assert status["notes"] > 6000 and status["state"] == "complete"


@pytest.mark.parametrize("query, expected", [
    ("Internal links", "en/Linking notes and files/Internal links.md"),
    ("Graph view", "en/Plugins/Graph view.md"),
    ("テーマ", "ja/Obsidian の拡張/テーマ.md"),
    ("关系图谱", "zh/插件/关系图谱.md"),
    ("Горячие клавиши", "ru/Интерфейс пользователя/Горячие клавиши.md"),
    ("روابط داخلية", "ar/ربط الملاحظات والملفات/روابط داخلية.md"),
    ("개요", "ko/플러그인/개요.md"),
    ("หน้าหลัก", "th/หน้าหลัก.md"),
])
def test_known_titles_are_found_first_in_many_languages(corpus, query, expected):
    assert top(corpus, query)[0] == expected


def test_aliases_find_their_note(corpus):
    assert top(corpus, "Local vault")[0] == "en/Getting started/Create a vault.md"
    assert "ja/Obsidian の拡張/CSSスニペット.md" in top(corpus, "カスタムスタイルの追加", 5)


def test_phrases_are_found_with_highlighted_snippets(corpus):
    hits = corpus["vault"].search.search('"custom URI protocol"', limit=5)
    assert hits[0].path == "en/Extending Obsidian/Obsidian URI.md"
    assert "\x02custom URI protocol\x03" in hits[0].snippet


def test_tag_and_path_filters_narrow_the_results(corpus):
    hits = corpus["vault"].search.search("sync", limit=20, tag="insider")
    assert hits and all("insider" in h.tags for h in hits)
    assert all(p.startswith("de/") for p in top(corpus, "Canvas", 10, path_glob="de/*"))


@pytest.mark.parametrize("typo, expected", [
    ("Grpah veiw", "en/Plugins/Graph view.md"),
    ("Intenal lnks", "en/Linking notes and files/Internal links.md"),
    ("Comand palete", "en/Plugins/Command palette.md"),
])
def test_a_typo_in_a_title_still_finds_it(corpus, typo, expected):
    assert top(corpus, typo)[0] == expected


def test_the_tag_example_in_search_help_returns_results_here(corpus):
    import shlex

    from memvault.cli.search import search

    example = next(line.split("Example:", 1)[1].strip()
                   for line in (search.help or "").splitlines() if "Example:" in line)
    argv = shlex.split(example)
    assert argv[:2] == ["memvault", "search"] and "--tag" in argv
    proc = run_memvault("--vault", str(corpus["root"]), *argv[1:], "--json")
    assert proc.returncode == 0, proc.stderr
    results = json.loads(proc.stdout)["results"]
    tag = argv[argv.index("--tag") + 1]
    assert results and all(tag in r["tags"] for r in results)


def test_a_typo_in_a_body_word_finds_the_notes_that_have_it(corpus):
    right = top(corpus, "frontmatter", 5, path_glob="en/*")
    hits = corpus["vault"].search.search("frontmattter", limit=5, path_glob="en/*")
    assert hits and hits[0].match == "typo corrected"
    assert [h.path for h in hits] == right


def test_a_cold_cli_search_uses_the_index_and_prints_json(corpus):
    proc = run_memvault("--vault", str(corpus["root"]), "search", "--json", "--limit", "2",
                        "Internal links")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["results"][0]["path"] == "en/Linking notes and files/Internal links.md"
    assert "**" in data["results"][0]["snippet"]


def test_nothing_in_the_vault_is_modified_by_indexing_or_search(corpus):
    corpus["vault"].search.search("obsidian", limit=5)
    assert _snapshot(corpus["root"]) == corpus["before"]
