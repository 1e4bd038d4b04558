"""The GitHub backend writes whole and frugally: one commit per command, all of it or none
of it whatever request fails, the next run completes it, and a remember costs a handful
of requests with no journal download. Real PyGithub over real HTTP against the stand-in
(tests/github_standin.py), real `memvault` processes."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_memvault
from tests.github_standin import GithubStandin
from tests.test_github_backend import MEMORY, TOKEN, seed, use_github
from tests.trade_helpers import START, make_trade

EVENTS = ".memvault/events.jsonl"
TOMBSTONES = ".memvault/tombstones.jsonl"


@pytest.fixture
def standin():  # type: ignore[no-untyped-def]
    server = GithubStandin(token=TOKEN).start()
    yield server
    server.stop()


@pytest.fixture
def github(standin, monkeypatch):  # type: ignore[no-untyped-def]
    use_github(monkeypatch, standin)
    monkeypatch.setenv("MEMVAULT_GITHUB_RETRIES", "1")
    seed(standin)
    return standin


def cli(*args: str, stdin: str | None = None):  # type: ignore[no-untyped-def]
    return run_memvault("--vault", "/nowhere", *args, input=stdin)


def commits(standin: GithubStandin) -> int:
    return sum(1 for kind, _ in standin.objects.values() if kind == "commit")


# -- one commit per command -------------------------------------------------------------------


def test_a_remember_is_one_commit_holding_the_fact_and_its_journal_line(github) -> None:
    before, head = commits(github), github.head()
    out = cli("remember", "I like tea", "--json")
    assert out.returncode == 0, out.stderr
    fid = json.loads(out.stdout)["fact"]["id"]
    assert commits(github) == before + 1
    new = github.head()
    assert github.objects[new][1]["parents"] == [head]
    files = github.files()
    assert f"id:{fid}" in files[MEMORY].decode()
    assert f'"record":"{fid}"' in files[EVENTS].decode()


def test_a_permanent_forget_is_one_commit_and_warns_about_earlier_commits(github) -> None:
    # Words no id or digest can hold (those are lowercase hex or base36): a check for
    # plain "424" failed whenever a random event id happened to contain it.
    fid = json.loads(cli("remember", "My PIN is Q4242Z", "--json").stdout)["fact"]["id"]
    cli("memory", "edit", fid, "My PIN is Q4243Z")
    before = commits(github)
    out = cli("forget", fid, "--permanent", "--yes")
    assert out.returncode == 0, out.stderr
    assert f"earlier commits of github:{github.repo}@main via {github.base_url} still hold " \
        "these words" in out.stderr
    assert commits(github) == before + 1
    files = github.files()
    for path in (MEMORY, EVENTS):
        assert b"Q424" not in files[path], path
    assert fid.encode() in files[TOMBSTONES]
    cached = list((Path(os.environ["HOME"]) / ".cache/memvault").rglob("*"))
    assert not any(b"q424" in p.read_bytes().lower() for p in cached if p.is_file())


def test_init_honours_backend_github_in_the_folders_config(standin, monkeypatch,
                                                           tmp_path: Path) -> None:
    use_github(monkeypatch, standin)
    monkeypatch.delenv("MEMVAULT_BACKEND")
    monkeypatch.delenv("MEMVAULT_GITHUB_REPO")
    standin.commit_files({"README.md": b"hi\n"})
    folder = tmp_path / "settings"
    (folder / ".memvault").mkdir(parents=True)
    (folder / ".memvault/config.toml").write_text(
        f'backend = "github"\n\n[github]\nrepo = "{standin.repo}"\n')
    before = commits(standin)
    out = run_memvault("--vault", str(folder), "init", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["vault"].startswith("github:owner/vault")
    assert MEMORY in standin.files() and commits(standin) == before + 1  # one commit
    assert sorted(p.name for p in folder.rglob("*")) == [".memvault", "config.toml"]


def test_trade_record_keeps_a_journal_line_another_machine_appended_meanwhile(
        github, tmp_path: Path) -> None:
    def another_machine_appends() -> None:
        line = b'{"id":"elsewhere-1","type":"x","scope":"default"}\n'
        data = github.files().get(EVENTS, b"") + line
        github.commit_files({EVENTS: data}, "another machine")

    github.inject("PATCH", r"/git/refs/heads/main$", before=another_machine_appends)
    trade = tmp_path / "t.json"
    trade.write_text(json.dumps(make_trade(1, START)))
    out = cli("trade", "record", str(trade), "--json")
    assert out.returncode == 0, out.stderr
    journal = github.files()[EVENTS].decode()
    assert "elsewhere-1" in journal and journal.count('"type":"trade"') == 1


# -- frugal --------------------------------------------------------------------------------------


def test_a_remember_on_a_vault_with_a_1_mb_journal_costs_at_most_six_requests(github) -> None:
    line = '{"id":"ev-%06d","ts":1,"type":"fact.remembered","scope":"default","text":"%s"}\n'
    journal = "".join(line % (i, "x" * 60) for i in range(11_000)).encode()
    assert len(journal) > 1_000_000
    github.commit_files({EVENTS: journal}, "a long history")
    assert cli("memory", "list").returncode == 0  # this machine has read the vault before
    github.mark()
    out = cli("remember", "I prefer short answers")
    assert out.returncode == 0, out.stderr
    sent = github.since_mark()
    assert len(sent) <= 6, sent
    assert not any("/git/blobs/" in path for _, path in sent)  # nothing downloaded
    assert [m for m, _ in sent].count("PATCH") == 1


# -- all of it or none of it, at every request --------------------------------------------------


def _state(standin: GithubStandin) -> dict[str, bytes]:
    return standin.files()


def _cut_everywhere(standin: GithubStandin, run: Any, done: Any, undone: Any) -> int:
    """Run the command once to count its requests; then, from a saved repository state,
    cut it at every request index (an outage from there on; once more with the answer of
    that request lost), check the repository holds all of it or none of it, and that the
    next run completes it."""
    saved = standin.save()
    standin.mark()
    assert run().returncode == 0
    total = len(standin.since_mark())
    assert done(_state(standin))
    for index in range(total):
        for lose in (False, True):
            standin.restore(saved)
            standin.mark()
            standin.fail_from(index, 502, lose_answer=lose)
            failed = run()
            standin.heal()
            state = _state(standin)
            if failed.returncode == 0:  # only when the lost answer was the last request
                assert done(state), (index, lose)
                continue
            assert len(failed.stderr.strip().splitlines()) >= 1
            assert done(state) or undone(state), (index, lose, failed.stderr)
            again = run()
            assert again.returncode == 0, (index, lose, again.stderr)
            assert done(_state(standin)), (index, lose)
    return total


def test_remember_cut_at_any_request_leaves_all_or_nothing_and_the_next_run_completes(
        github) -> None:
    def run():  # type: ignore[no-untyped-def]
        return cli("remember", "I like tea")

    def done(files: dict[str, bytes]) -> bool:
        return files[MEMORY].count(b"I like tea") == 1 and \
            files.get(EVENTS, b"").count(b'"text":"I like tea"') == 1

    def undone(files: dict[str, bytes]) -> bool:
        return b"I like tea" not in files[MEMORY] and b"I like tea" not in files.get(EVENTS, b"")

    assert _cut_everywhere(github, run, done, undone) >= 3


def test_a_permanent_forget_cut_at_any_request_leaves_all_or_nothing(github) -> None:
    cli("remember", "My PIN is Q4242Z")

    def run():  # type: ignore[no-untyped-def]
        out = cli("forget", "Q4242Z", "--permanent", "--yes")
        if out.returncode == 1 and "no fact matches" in out.stderr:
            out.returncode = 0  # done by the earlier, cut run: nothing left to forget
        return out

    def done(files: dict[str, bytes]) -> bool:
        return b"Q4242Z" not in files[MEMORY] and b"Q4242Z" not in files[EVENTS] and \
            b'"kind":"forgotten"' in files.get(TOMBSTONES, b"")

    def undone(files: dict[str, bytes]) -> bool:
        return b"Q4242Z" in files[MEMORY] and b"Q4242Z" in files[EVENTS] and \
            b'"kind":"forgotten"' not in files.get(TOMBSTONES, b"")

    assert _cut_everywhere(github, run, done, undone) >= 3


def test_trade_record_cut_at_any_request_leaves_all_or_nothing(github, tmp_path: Path) -> None:
    trade = tmp_path / "t.json"
    trade.write_text(json.dumps(make_trade(7, START)))

    def run():  # type: ignore[no-untyped-def]
        return cli("trade", "record", str(trade))

    def parts(files: dict[str, bytes]) -> list[bool]:
        return [any(p.startswith("Pilot/Trades/") for p in files),
                any(p.startswith("Pilot/Reflections/") for p in files),
                any(p.startswith("Pilot/Journal/") for p in files),
                files.get(EVENTS, b"").count(b'"type":"trade"') == 1]

    assert _cut_everywhere(github, run, lambda f: all(parts(f)),
                           lambda f: not any(parts(f))) >= 3


# -- search through a local copy of the notes ---------------------------------------------------


def test_search_on_github_downloads_a_note_once_and_again_only_when_it_changed(github) -> None:
    github.commit_files({"Notes/tea.md": b"# Tea\n\nOolong is my favourite tea.\n",
                         "Notes/rust.md": b"# Rust\n\nBorrow checker notes.\n"}, "laptop")

    def found(query: str) -> list[str]:
        out = cli("search", query, "--json")
        assert out.returncode == 0, out.stderr
        return [r["path"] for r in json.loads(out.stdout)["results"]]

    assert found("oolong") == ["Notes/tea.md"]
    github.mark()
    assert found("borrow") == ["Notes/rust.md"]
    assert not any("/git/blobs/" in path for _, path in github.since_mark())  # no download
    github.commit_files({"Notes/tea.md": b"# Tea\n\nSencha every morning.\n",
                         "Notes/rust.md": None}, "another machine")
    github.mark()
    assert found("sencha") == ["Notes/tea.md"] and found("oolong") == [] == found("borrow")
    downloads = [path for _, path in github.since_mark() if "/git/blobs/" in path]
    assert len(downloads) == 1  # the changed note, once; the deleted one just goes


def test_a_first_search_fetches_the_notes_in_one_archive_not_a_request_each(github) -> None:
    github.commit_files({f"Notes/n{i:02d}.md": f"# Note {i}\n\nThe harbour, {i}.\n".encode()
                         for i in range(40)}, "laptop")
    github.mark()
    out = cli("search", "harbour", "--limit", "50", "--json")
    assert out.returncode == 0, out.stderr
    assert len(json.loads(out.stdout)["results"]) == 40
    sent = [path for _, path in github.since_mark()]
    assert sum("/tarball/" in p for p in sent) == 1
    assert sum(p.startswith("/_codeload/") for p in sent) == 1
    assert not any("/git/blobs/" in p for p in sent)  # every note came from the archive
    assert len(sent) <= 5, sent


def test_an_archive_mostly_of_attachments_is_not_downloaded(github) -> None:
    notes = {f"Notes/n{i:02d}.md": f"# Note {i}\n\nThe harbour, {i}.\n".encode()
             for i in range(10)}
    github.commit_files({**notes, "Attachments/photo.png": os.urandom(3 << 20)}, "laptop")
    github.mark()
    out = cli("search", "harbour", "--limit", "50", "--json")
    assert out.returncode == 0, out.stderr
    assert len(json.loads(out.stdout)["results"]) == 10
    sent = [path for _, path in github.since_mark()]
    assert not any("/tarball/" in p for p in sent)
    assert sum("/git/blobs/" in p for p in sent) >= 10


def test_a_failing_archive_falls_back_to_reading_the_notes_one_by_one(github) -> None:
    github.commit_files({f"Notes/n{i:02d}.md": f"# Note {i}\n\nThe harbour, {i}.\n".encode()
                         for i in range(12)}, "laptop")
    github.inject("GET", r"/_codeload/", 500, times=10)
    out = cli("search", "harbour", "--limit", "50", "--json")
    assert out.returncode == 0, out.stderr
    assert len(json.loads(out.stdout)["results"]) == 12
    assert "archive not used" in out.stderr


def test_the_mcp_search_tool_searches_the_repository_and_sees_changes_made_elsewhere(
        github, tmp_path: Path) -> None:
    import anyio

    from tests.mcp_helpers import in_process, ok, run

    github.commit_files({"Projects/Aurora.md": b"# Aurora\n\nWork-stealing scheduler.\n"},
                        "laptop")
    fid = json.loads(cli("remember", "My main project is Aurora", "--json").stdout)["fact"]["id"]

    async def go() -> None:
        async with in_process(tmp_path / "never-created", access="read") as client:
            found = await ok(client, "memory_search", {"query": "aurora"})
            assert [h["path"] for h in found["notes"]] == ["Projects/Aurora.md"]
            assert fid in [h["id"] for h in found["memory"]]
            github.commit_files({"Projects/Aurora.md": b"# Aurora\n\nA quokka mascot.\n"},
                                "another machine")
            for _ in range(60):  # the server re-reads the branch within a few seconds
                again = await ok(client, "memory_search", {"query": "quokka"})
                if again["notes"]:
                    break
                await anyio.sleep(0.1)
            assert [h["path"] for h in again["notes"]] == ["Projects/Aurora.md"]

    run(go)
    assert not (tmp_path / "never-created").exists()


def test_a_permanent_forget_from_another_machine_leaves_no_copy_in_this_machines_cache(
        github, tmp_path: Path) -> None:
    """Two machines (two cache folders) on one repository: B has read and searched the
    fact (its blob cache, its copy of the notes and their index hold the words); A forgets
    it permanently; after B's next command, of any kind, nothing in B's cache holds them."""
    homes = {name: tmp_path / name for name in ("a", "b")}
    wordings = (b"Q4242Z", b"Q4243Z")  # the fact's two wordings

    def on(machine: str, *args: str):  # type: ignore[no-untyped-def]
        home = homes[machine]
        return run_memvault("--vault", "/nowhere", *args,
                            env={"HOME": str(home), "XDG_CACHE_HOME": str(home / "cache")})

    def holding(machine: str, *words: bytes) -> list[str]:
        """Files of this machine's cache holding any of the words (whole words: a
        shorter needle could turn up in compressed or binary bytes by chance)."""
        cache = homes[machine] / "cache"
        return sorted(str(p.relative_to(cache)) for p in cache.rglob("*")
                      if p.is_file() and any(w in p.read_bytes() for w in words))

    github.commit_files({"Notes/locker.md": b"# Locker\n\nThe gym locker is by the door.\n"})
    fid = json.loads(on("a", "remember", "My locker PIN is Q4242Z", "--json").stdout
                     )["fact"]["id"]
    on("a", "memory", "edit", fid, "My locker PIN is Q4243Z")
    for args in (("memory", "list", "--json"), ("search", "--memory", "--json", "Q4243Z"),
                 ("search", "--json", "locker"), ("memory", "show", fid, "--json")):
        done = on("b", *args)
        assert done.returncode == 0, done.stderr
    assert holding("b", b"Q4243Z") and holding("b", b"Q4242Z")  # blobs, the note copy, index
    assert on("a", "forget", fid, "--permanent", "--yes").returncode == 0
    assert holding("a", *wordings) == []
    listed = on("b", "profile", "show")  # B's next command reads no memory file at all
    assert listed.returncode == 0, listed.stderr
    assert holding("b", *wordings) == []
    # B still works from its (refilled) cache, and the fact is gone there too
    found = on("b", "search", "--memory", "--json", "Q4243Z")
    assert found.returncode == 0, found.stderr
    assert not any(w.decode() in r["text"] for r in json.loads(found.stdout)["results"]
                   for w in wordings)
    assert json.loads(on("b", "search", "--json", "locker").stdout)["results"]
    assert holding("b", *wordings) == []
    # a later command with nothing new forgotten keeps the cache (no second download)
    github.mark()
    assert on("b", "search", "--json", "locker").returncode == 0
    assert not any("/git/blobs/" in path for _, path in github.since_mark())
