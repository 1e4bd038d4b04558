"""Search that forgives: a typo in a word of a note's text still finds the note (words
corrected from the index's vocabulary), and results are sorted by the score shown."""

from __future__ import annotations

import json
from pathlib import Path


def note(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def search(cli, *args: str) -> list[dict]:
    return json.loads(cli("search", "--json", *args).stdout)["results"]


def test_a_typo_in_a_body_word_finds_the_right_notes_first(cli, vault_dir):
    note(vault_dir, "Trips/Island.md", "# Island\n\nWe watched the zanzibarquoka at dawn.\n")
    note(vault_dir, "Trips/Again.md", "# Again\n\nMore zanzibarquoka photos, and the ferry.\n")
    note(vault_dir, "Trips/Zanzibar.md", "# Zanzibar\n\nSpice market and the old town.\n")
    for i in range(30):
        note(vault_dir, f"Misc/Note {i}.md", f"# Note {i}\n\nquokka zanzibar ferry {i}\n")
    for typo in ("zanzibarqouka", "zanzibarquokka", "zanzbarquoka"):
        results = search(cli, typo)
        assert {r["path"] for r in results[:2]} == {"Trips/Island.md", "Trips/Again.md"}, typo
        assert results[0]["match"] == "typo corrected"
        assert "**zanzibarquoka**" in results[0]["snippet"]
    # a word with a typo next to a correct one: both must match, as typed
    results = search(cli, "zanzibarqouka ferry")
    assert [r["path"] for r in results][:1] == ["Trips/Again.md"]


def test_words_that_exist_are_never_corrected_and_short_words_never(cli, vault_dir):
    note(vault_dir, "a.md", "the quokka sleeps\n")
    note(vault_dir, "b.md", "the quakka sleeps\n")  # a real (if odd) word in another note
    assert [r["path"] for r in search(cli, "quakka")] == ["b.md"]
    assert [r["path"] for r in search(cli, "qukka")] == ["a.md", "b.md"]  # both close
    assert search(cli, "qwzzy") == []  # five letters, but nothing is that close
    assert search(cli, "slp") == []    # too short to correct


def test_results_are_sorted_by_the_score_shown(cli, vault_dir):
    note(vault_dir, "Graph view.md", "# Graph view\n\nThe graph shows links.\n")
    note(vault_dir, "Links.md", "# Links\n\nInternal links connect notes; the graph too.\n")
    note(vault_dir, "Other.md", "# Other\n\nNothing about views here, only links.\n")
    for query in ("graph view", "links", "Grpah veiw", "graph OR links", "linsk notes"):
        scores = [r["score"] for r in search(cli, query, "--limit", "20")]
        assert scores == sorted(scores, reverse=True), (query, scores)
        assert all(0 <= s <= 1 for s in scores)
    first = search(cli, "Graph view")[0]
    assert first["path"] == "Graph view.md" and first["score"] == 1.0  # exact, as typed
    assert search(cli, "graph VIEW")[0]["score"] < 0.975  # the same ignoring case
