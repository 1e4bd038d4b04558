"""Semantic recall with the built-in offline model (a sentence transformer shipped inside
memvault): meaning without shared words, vectors cached per text and purged with
forgotten text, a large memory's first embedding spread over calls, the lexical fallback,
the optional static model, an OpenAI-compatible embeddings endpoint (a loopback stand-in
written from the public API shape), and cold commands that never load the model."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from memvault import Vault
from memvault.embeddings import static

T0 = 1_784_000_000
FILLER = ("Invoice {i} for the boiler inspection was paid", "The {i}th ticket tracks the Redis "
          "upgrade", "My colleague number {i} is moving to Porto", "I lent a drill to "
          "neighbour {i}", "The warranty on printer {i} ends in 2028")


def write_memory(root: Path, extra: list[str], filler: int = 200) -> None:
    lines = [f"- {FILLER[i % len(FILLER)].format(i=i)} [other] <!-- id:fil{i:04d} "
             f"updated:{T0 + i} -->" for i in range(filler)]
    (root / "Pilot" / "Memory.md").write_text("# Memory\n\n" + "\n".join([*lines, *extra])
                                              + "\n", encoding="utf-8")


PET = "- My dog is a border collie named Pixel [identity] <!-- id:pet001 updated:1700000000 -->"
TEA = "- I drink tea, never coffee [preference] <!-- id:tea001 updated:1700000001 -->"


def vector_rows(root: Path) -> int:
    conn = sqlite3.connect(root / ".memvault" / "index.sqlite")
    try:
        return conn.execute("SELECT count(*) FROM vectors").fetchone()[0]
    finally:
        conn.close()


def test_context_finds_a_fact_by_meaning_and_says_so(cli, vault_dir):
    write_memory(vault_dir, [PET, TEA])
    block = json.loads(cli("context", "--json", "--request",
                           "what kind of pet do I have?").stdout)
    chosen = {r["id"]: r["whyApplied"] for r in block["selected"]}
    assert "pet001" in chosen and "close in meaning to the request" in chosen["pet001"]
    assert block["selected"][0]["id"] == "pet001"


def test_memory_search_ranks_by_meaning_too(cli, vault_dir):
    write_memory(vault_dir, [PET, TEA])
    results = json.loads(cli("search", "--memory", "--json",
                             "which hot beverage do I like?").stdout)["results"]
    assert results and results[0]["id"] == "tea001"
    scores = [r["score"] for r in results]
    assert scores == sorted(scores, reverse=True)
    by_id = json.loads(cli("search", "--memory", "--json", "pet001").stdout)["results"]
    assert [r["id"] for r in by_id] == ["pet001"] and by_id[0]["match"] == "words"


def test_vectors_are_computed_once_per_text_and_purged_with_forgotten_text(cli, vault_dir):
    write_memory(vault_dir, [PET, TEA], filler=50)
    vault = Vault.open(vault_dir)
    vault.search.memory_scores("a pet")
    assert vector_rows(vault_dir) == 52
    vault.memory.remember("I keep bees on the roof", "other")
    vault.search.memory_scores("honey")
    assert vector_rows(vault_dir) == 53  # only the new text was embedded
    cli("forget", "pet001", "--yes")
    vault.search.memory_scores("a pet")
    assert vector_rows(vault_dir) == 52  # the forgotten text's vector is gone


def test_semantic_recall_can_be_turned_off(cli, vault_dir):
    with open(vault_dir / ".memvault" / "config.toml", "a", encoding="utf-8") as fh:
        fh.write('\n[embeddings]\nkind = "none"\n')
    write_memory(vault_dir, [PET, TEA])
    block = json.loads(cli("context", "--json", "--request",
                           "what kind of pet do I have?").stdout)
    assert "pet001" not in {r["id"] for r in block["selected"][:5]}
    assert not any("close in meaning" in r["whyApplied"] for r in block["selected"])
    assert vector_rows(vault_dir) == 0


def test_with_semantic_recall_off_a_fact_sharing_some_words_is_chosen_by_them(cli, vault_dir):
    """Words alone rank the block when meaning cannot: a request that shares two of its
    three words with an old fact brings that fact in first, ahead of 400 newer ones."""
    with open(vault_dir / ".memvault" / "config.toml", "a", encoding="utf-8") as fh:
        fh.write('\n[embeddings]\nkind = "none"\n')
    write_memory(vault_dir, [PET, TEA], filler=400)
    block = json.loads(cli("context", "--json", "--request",
                           "what does my border collie eat?").stdout)
    first = block["selected"][0]
    assert first["id"] == "pet001"
    assert first["whyApplied"].startswith("shares words with the request")
    assert block["counts"]["fact"]["not_shown"] > 300  # not everything fit: it was chosen


class EmbeddingsStandIn:
    """`POST /v1/embeddings` as the public API documents it: {model, input: [..]} ->
    {data: [{index, embedding}]}. Vectors: word counts hashed into 64 buckets."""

    def __init__(self, *, serve: int | None = None) -> None:
        self.auth: list[str | None] = []
        self.inputs: list[int] = []
        self.serve = serve
        """Answer this many requests, then fail every one with a 500 (None: never fail)."""
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # quiet
                pass

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                stand_in.auth.append(self.headers.get("Authorization"))
                if stand_in.serve is not None and len(stand_in.inputs) >= stand_in.serve:
                    self.send_response(500)
                    self.end_headers()
                    return
                stand_in.inputs.append(len(body.get("input") or []))
                if self.path != "/v1/embeddings" or not isinstance(body.get("input"), list):
                    self.send_response(404)
                    self.end_headers()
                    return
                data = []
                for n, text in enumerate(body["input"]):
                    vec = [0.0] * 64
                    for word in text.lower().split():
                        vec[sum(map(ord, word.strip("?,."))) % 64] += 1.0
                    data.append({"object": "embedding", "index": n, "embedding": vec})
                out = json.dumps({"object": "list", "data": data, "model": body["model"]})
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(out.encode())

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_an_openai_compatible_endpoint_can_embed_with_the_key_from_the_environment(
        cli, vault_dir, monkeypatch):
    stand_in = EmbeddingsStandIn()
    try:
        with open(vault_dir / ".memvault" / "config.toml", "a", encoding="utf-8") as fh:
            fh.write(f'\n[embeddings]\nkind = "endpoint"\nbase_url = "{stand_in.url}"\n'
                     'model = "tiny"\napi_key_env = "MY_EMB_KEY"\n')
        monkeypatch.setenv("MY_EMB_KEY", "sk-secret-123")
        write_memory(vault_dir, [PET, TEA], filler=20)
        results = json.loads(cli("search", "--memory", "--json", "tea never").stdout)
        assert results["results"][0]["id"] == "tea001"
        assert stand_in.auth and set(stand_in.auth) == {"Bearer sk-secret-123"}
        conn = sqlite3.connect(vault_dir / ".memvault" / "index.sqlite")
        assert {m for (m,) in conn.execute("SELECT DISTINCT model FROM vectors")} == \
            {"endpoint:tiny"}
        conn.close()
    finally:
        stand_in.close()
    # the endpoint is gone: search still answers (by words) and says why, key-free
    out = cli("search", "--memory", "--json", "tea never")
    data = json.loads(out.stdout)
    assert data["results"][0]["id"] == "tea001"
    assert any("semantic recall skipped" in n for n in data["notices"])
    assert "sk-secret-123" not in out.stdout + out.stderr


def test_an_interrupted_first_embedding_keeps_what_it_did_and_says_how_far_it_is(
        cli, vault_dir, monkeypatch):
    from memvault.index import vectors

    monkeypatch.setattr(vectors, "EMBED_CHUNK", 20)
    stand_in = EmbeddingsStandIn(serve=1)  # one chunk, then the endpoint breaks down
    try:
        with open(vault_dir / ".memvault" / "config.toml", "a", encoding="utf-8") as fh:
            fh.write(f'\n[embeddings]\nkind = "endpoint"\nbase_url = "{stand_in.url}"\n'
                     'model = "tiny"\n')
        write_memory(vault_dir, [PET, TEA], filler=50)
        data = json.loads(cli("search", "--memory", "--json", "tea never").stdout)
        assert data["results"][0]["id"] == "tea001"
        assert any("semantic recall skipped" in n for n in data["notices"])
        assert vector_rows(vault_dir) == 20  # the first chunk was kept
        stand_in.serve = None
        monkeypatch.setattr(vectors, "PROGRESS_EVERY", 0.0)
        out = cli("search", "--memory", "--json", "tea never")
        assert vector_rows(vault_dir) == 52
        assert stand_in.inputs[1:] == [20, 12, 1]  # only the 32 missing texts, then the query
        assert "note: embedding memory records for recall by meaning (endpoint:tiny): " \
               "20 of 32 (62%" in out.stderr
        assert not any("skipped" in n for n in json.loads(out.stdout)["notices"])
    finally:
        stand_in.close()


@pytest.mark.parametrize("table, message", [
    ('kind = "magic"', "kind must be one of"),
    ('kind = "endpoint"\nbase_url = "ftp://x"\nmodel = "m"', "base_url must be an http"),
    ('kind = "endpoint"\nbase_url = "http://x"\nmodel = "m"\napi_key_env = "sk-123"',
     "name of an environment variable"),
])
def test_a_bad_embeddings_table_is_refused_naming_the_file(cli, vault_dir, table, message):
    with open(vault_dir / ".memvault" / "config.toml", "a", encoding="utf-8") as fh:
        fh.write(f"\n[embeddings]\n{table}\n")
    write_memory(vault_dir, [PET], filler=5)
    result = cli("search", "--memory", "pet", expect=1)
    assert ".memvault/config.toml" in result.stderr and message in result.stderr


_PROBE = """
import json, sys
sys.argv = ["memvault", *sys.argv[2:]]
from memvault.cli.app import main
try:
    main()
except SystemExit:
    pass
heavy = sorted({m.split(".")[0] for m in sys.modules} & {"numpy", "tokenizers", "wordllama"})
open(sys.argv[1] if False else OUT, "w").write(json.dumps(heavy))
"""


@pytest.mark.parametrize("kind, shadowed, reason", [
    # a `tokenizers` without its Tokenizer stands first on the path (a damaged install)
    ("builtin", "tokenizers", "numpy or tokenizers could not be imported"),
    # a `wordllama` package without its model files: the real lookup finds no model
    ("static", "wordllama", "without its model files"),
])
def test_without_the_model_recall_is_by_words_and_search_says_why(
        vault_dir, tmp_path, kind, shadowed, reason):
    shadow = tmp_path / "shadow" / shadowed
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("")
    if kind != "builtin":
        with open(vault_dir / ".memvault" / "config.toml", "a", encoding="utf-8") as fh:
            fh.write(f'\n[embeddings]\nkind = "{kind}"\n')
    env = dict(os.environ)
    env["PYTHONPATH"] = str(tmp_path / "shadow") + os.pathsep + env.get("PYTHONPATH", "")
    write_memory(vault_dir, [PET, TEA], filler=20)

    def memvault(*args: str) -> dict:
        done = subprocess.run([sys.executable, "-m", "memvault", "--vault", str(vault_dir),
                               *args], capture_output=True, text=True, timeout=120, env=env)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    data = memvault("search", "--memory", "--json", "collie")
    assert [r["id"] for r in data["results"]] == ["pet001"]
    assert any("semantic recall is off" in n and reason in n for n in data["notices"])
    block = memvault("context", "--json", "--request", "what kind of pet do I have?")
    assert block["selected"] and not any("close in meaning" in r["whyApplied"]
                                         for r in block["selected"])
    assert vector_rows(vault_dir) == 0


@pytest.mark.parametrize("argv", [
    ("context", "--json"),
    ("search", "--json", "border"),
    ("memory", "list", "--json"),
])
def test_cold_commands_that_do_not_rank_by_meaning_never_load_the_model(vault_dir, tmp_path,
                                                                        argv):
    write_memory(vault_dir, [PET, TEA], filler=300)
    out = tmp_path / "heavy.json"
    code = _PROBE.replace("OUT", repr(str(out)))
    done = subprocess.run([sys.executable, "-c", code, "x", "--vault", str(vault_dir), *argv],
                          capture_output=True, text=True, timeout=120, env=dict(os.environ))
    assert out.exists(), done.stderr
    assert json.loads(out.read_text()) == []


def test_near_repeats_do_not_crowd_a_different_relevant_fact_out_of_the_block(cli, vault_dir):
    """Forty "I went to a concert in <city> in <year>" lines all match a concert request
    better than the one line about the user's own music; ranked by relevance alone they
    filled a small budget. Near-repeats of a better-ranked line now lose score, so the
    different fact is shown right after the first concert line."""
    cities = ["Faro", "Riga", "Turin", "Hamburg", "Porto", "Lyon", "Bergen", "Ghent"]
    repeats = [f"- I went to a concert in {city} in {2000 + year} [other] "
               f"<!-- id:con{n:03d} updated:{T0 + 1000 + n} -->"
               for n, (city, year) in enumerate((c, y) for c in cities for y in range(5))]
    jazz = ("- I play bass guitar in a jazz band every weekend [other] "
            "<!-- id:jazz01 updated:1700000000 -->")
    write_memory(vault_dir, [*repeats, jazz])
    block = json.loads(cli("context", "--json", "--budget", "1500", "--request",
                           "Recommend a concert for me this month").stdout)
    shown = [r["id"] for r in block["selected"]]
    assert "jazz01" in shown[:3]
    assert shown[0].startswith("con")


def test_diversify_lowers_only_records_that_repeat_a_better_one():
    import numpy as np

    from memvault.index.recall import diversify
    from memvault.index.vectors import Cosines

    rows = np.asarray([[1.0, 0.0], [0.98, 0.2], [0.0, 1.0]], dtype=np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    cosine = Cosines(["a", "a2", "b"], np.zeros(3, dtype=np.float32), rows)
    scores = diversify({"a": 0.9, "a2": 0.85, "b": 0.6}, cosine)
    assert scores["a"] == pytest.approx(0.9) and scores["b"] == pytest.approx(0.6)
    assert scores["a2"] < 0.6  # a repeat of "a" now ranks below the different "b"
    assert diversify({"a": 0.9, "a2": 0.85}, None) == {"a": 0.9, "a2": 0.85}  # no vectors


KNOWLEDGE = [
    "- I support Benfica [identity] <!-- id:club01 updated:1700000002 -->",
    "- I'm allergic to cats [identity] <!-- id:cats01 updated:1700000003 -->",
    "- I am left-handed [identity] <!-- id:left01 updated:1700000004 -->",
]


@pytest.mark.parametrize("question, expected", [
    ("which football club am I a fan of?", "club01"),
    ("should I adopt a kitten?", "cats01"),
    ("what kind of scissors should I buy?", "left01"),
])
def test_the_built_in_model_answers_questions_that_need_knowledge(cli, vault_dir, question,
                                                                  expected):
    """These share no word with their fact; a static model (averaged word vectors) ranked
    them below hundreds of others on the evaluation set. The transformer reads them in
    context."""
    write_memory(vault_dir, [PET, TEA, *KNOWLEDGE], filler=100)
    results = json.loads(cli("search", "--memory", "--json", question).stdout)["results"]
    assert results[0]["id"] == expected
    block = json.loads(cli("context", "--json", "--request", question).stdout)
    assert block["selected"][0]["id"] == expected


def test_a_large_first_embedding_is_spread_over_calls_and_index_embed_finishes_it(
        cli, vault_dir, monkeypatch):
    from memvault.index import vectors

    # one chunk of 20 texts per call, as a 10,000-fact memory gets ten seconds' worth
    monkeypatch.setattr(vectors, "EMBED_CHUNK", 20)
    monkeypatch.setattr(vectors, "EMBED_BUDGET", 0.0)
    write_memory(vault_dir, [PET, TEA], filler=50)
    first = cli("search", "--memory", "--json", "which hot beverage, tea?")
    data = json.loads(first.stdout)
    assert any("recall is by words until every memory text is embedded" in n
               and "20 of 52 so far" in n and "memvault index embed" in n
               for n in data["notices"])
    assert "note: recall is by words until every memory text is embedded" in first.stderr
    # only the fact sharing a word, nothing by meaning yet
    assert [(r["id"], r["match"]) for r in data["results"]] == [("tea001", "words")]
    assert vector_rows(vault_dir) == 20
    # until then, records are found by their words
    by_words = json.loads(cli("search", "--memory", "--json", "collie").stdout)
    assert by_words["results"][0]["id"] == "pet001"
    assert any("40 of 52 so far" in n for n in by_words["notices"])
    assert vector_rows(vault_dir) == 40
    done = json.loads(cli("index", "embed", "--json").stdout)
    assert (done["embedded"], done["texts"]) == (12, 52)
    assert done["model"] == "minilm-l6-v2-int8"
    assert vector_rows(vault_dir) == 52
    last = json.loads(cli("search", "--memory", "--json", "which hot beverage do I like?")
                      .stdout)
    assert last["results"][0]["id"] == "tea001"
    assert not any("until every memory text" in n for n in last["notices"])
    again = json.loads(cli("index", "embed", "--json").stdout)
    assert again["embedded"] == 0


def test_the_optional_static_model_still_ranks_by_meaning(cli, vault_dir):
    # the test extra installs memvault[static]: its files must be there
    assert static.available(), "pip install -e '.[test]' installs the static model"
    with open(vault_dir / ".memvault" / "config.toml", "a", encoding="utf-8") as fh:
        fh.write('\n[embeddings]\nkind = "static"\n')
    write_memory(vault_dir, [PET, TEA], filler=400)
    results = json.loads(cli("search", "--memory", "--json",
                             "which hot beverage do I like?").stdout)["results"]
    assert results[0]["id"] == "tea001"
    conn = sqlite3.connect(vault_dir / ".memvault" / "index.sqlite")
    try:
        models = {m for (m,) in conn.execute("SELECT DISTINCT model FROM vectors")}
    finally:
        conn.close()
    assert models == {"wordllama-l2-supercat-256"}


def test_a_prefetched_request_embedding_is_the_same_as_one_computed_on_demand():
    """A long-running server starts embedding the request while it reads the memory; what
    it collects must be exactly what it would have computed, and uncollected requests
    must not pile up."""
    import numpy as np

    from memvault.embeddings import minilm

    model = minilm.load()
    request = "which hot beverage do I like?"
    expected = model.embed([request])
    model.prefetch(request)
    assert np.array_equal(model.embed_query(request), expected)
    for n in range(minilm.EARLY_MAX + 3):
        model.prefetch(f"request number {n}")
    assert len(model._early) == minilm.EARLY_MAX
    assert np.array_equal(model.embed_query("request number 0"),
                          model.embed(["request number 0"]))  # dropped: computed again


@pytest.mark.parametrize("keep", [0, 1000, 5_000_000])
def test_a_damaged_model_file_leaves_recall_by_words_with_the_reason(tmp_path, monkeypatch,
                                                                    keep):
    """A half-copied or truncated weights file (a broken install, a full disk during an
    upgrade) is a one-line reason, never a traceback."""
    from memvault.embeddings import minilm, settings

    broken = tmp_path / "minilm-l6-v2-int8.npz"
    broken.write_bytes(minilm.WEIGHTS.read_bytes()[:keep])
    monkeypatch.setattr(minilm, "WEIGHTS", broken)
    monkeypatch.setattr(minilm, "_LOADED", [])
    monkeypatch.setattr(minilm, "_PROBLEM", [])
    assert settings.embedder_for({}) is None
    notice = settings.missing_notice("builtin")
    assert notice.startswith("semantic recall is off (words only): the built-in model could "
                             "not be loaded: the model files could not be read")
    assert "\n" not in notice
