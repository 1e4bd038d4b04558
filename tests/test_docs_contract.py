"""The repository is self-contained: its contract lives in docs/, and nothing points outside.

- No source, test or doc cites a document that is not in the repository (a numbered
  section sign, the old spec and edge-case files, other outside notes): state the rule or
  link a docs page instead.
- Every relative link in README.md and docs/*.md reaches a file in the repository, and
  every `#anchor` names a heading of that file (GitHub's slug rules), so a reader
  following the contract never hits a dead end.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
TEXT_SUFFIXES = {".py", ".md", ".toml", ".txt", ".json", ".sh", ""}
# Assembled so this file does not match itself.
OUTSIDE_CITATIONS = re.compile("|".join([
    "\u00a7", "SP" + "EC", "EDGE" + "_CASES", "GITHUB" + "_NOTES", "MCP" + "_NOTES",
    "STYLE" + r"\.md"]))
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def _files(*roots: str) -> list[Path]:
    out = []
    for root in roots:
        for path in sorted((REPO / root).rglob("*")):
            if path.is_file() and path.suffix in TEXT_SUFFIXES and "__pycache__" not in path.parts:
                out.append(path)
    return out


def test_no_citation_of_documents_outside_the_repository() -> None:
    offenders = []
    for path in _files("src", "tests", "docs", "scripts", "benchmarks", "examples") + [
            REPO / "README.md"]:
        if path.parent.name == "golden" and path.suffix != ".md":
            continue
        if path.parent == REPO / "src" / "memvault" / "embeddings" / "data" and \
                path.suffix != ".md":
            continue  # the model's published tokenizer: its vocabulary holds every sign
        try:
            text = path.read_text("utf-8")
        except (UnicodeDecodeError, FileNotFoundError):
            continue  # byte-exact fixtures (Latin-1, UTF-16)
        for number, line in enumerate(text.split("\n"), 1):
            if OUTSIDE_CITATIONS.search(line):
                offenders.append(f"{path.relative_to(REPO)}:{number}: {line.strip()[:100]}")
    assert offenders == [], "describe the rule or link docs/ instead:\n" + "\n".join(offenders)


def github_slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to '-'."""
    text = re.sub(r"`([^`]*)`", r"\1", heading)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    in_fence = False
    for line in path.read_text("utf-8").split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
            continue
        match = None if in_fence else HEADING.match(line)
        if match:
            slug = github_slug(match.group(2))
            count = seen.get(slug, 0)
            seen[slug] = count + 1
            out.add(slug if count == 0 else f"{slug}-{count}")
    return out


def _doc_links() -> list[tuple[Path, str]]:
    links = []
    for path in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        text = re.sub(r"```.*?```", "", path.read_text("utf-8"), flags=re.S)
        text = re.sub(r"`[^`\n]*`", "", text)  # inline code is not a link
        for target in LINK.findall(text):
            if not re.match(r"[a-z]+:", target):
                links.append((path, target))
    return links


@pytest.mark.parametrize("source,target", _doc_links(),
                         ids=lambda v: v.name if isinstance(v, Path) else v)
def test_relative_links_in_the_docs_resolve(source: Path, target: str) -> None:
    file_part, _, anchor = target.partition("#")
    dest = (source.parent / file_part).resolve() if file_part else source
    assert dest.exists(), f"{source.relative_to(REPO)} links to missing {file_part}"
    assert REPO in dest.parents or dest == REPO, f"{target} leaves the repository"
    if anchor and dest.suffix == ".md":
        assert anchor in _anchors(dest), (
            f"{source.relative_to(REPO)}: no heading '#{anchor}' in {dest.relative_to(REPO)}")


def test_the_slug_rule_matches_githubs_for_our_headings() -> None:
    assert github_slug("Policy.md — the hard line") == "policymd--the-hard-line"
    assert github_slug("`memvault forget TEXT_OR_ID [--permanent] [--yes]`") == (
        "memvault-forget-text_or_id---permanent---yes")
    assert github_slug("Trades: `memvault trade record FILE|-`") == (
        "trades-memvault-trade-record-file-")
