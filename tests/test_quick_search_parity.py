"""The quick search path (`cli/quick.py`) and the click command print the same bytes.

`memvault search ... --json` is answered without click when the quick path can prove the
ordinary command would print the same and change nothing (see `memvault.cli.quick`).
Here both run as real subprocesses on identical copies of a real vault, over many
command lines (plain ones, odd spellings of the options, errors, help) and vault states
(a fresh index, an edited note, no index yet, a ticked inbox box, another principal's
notes): stdout, stderr, the exit code and the files left behind must be the same. For
the plain command lines the test also checks that the quick path really answered
(click was never imported), so it cannot pass by always declining.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from memvault import Vault
from memvault.services.setup import init_vault

# Runs one path in a fresh interpreter; writes which CLI libraries it imported.
PROBE = """
import json, os, sys
sys.argv = ["memvault", *sys.argv[2:]]
if os.environ["PROBE_PATH"] == "click":
    from memvault.cli.app import main
else:
    from memvault.cli.entry import main
try:
    main()
finally:
    with open(os.environ["PROBE_OUT"], "w") as fh:
        json.dump(sorted({m.split(".")[0] for m in sys.modules} & {"click", "rich"}), fh)
"""

NOTES = {
    "Harbor.md": "---\naliases: [Port, Haven]\ntags: [travel, sea/north]\n---\n# Harbor\n\n"
                 "The harbor at dawn, boats and gulls. zeppelin over the water.\n",
    "Projects/Zeppelin plan.md": "# Zeppelin plan\n\nA zeppelin trip to the harbor #travel\n",
    "Projects/Budget.md": "---\ntags: [money]\n---\nThe budget for the zeppelin, in euros.\n",
    "Daily/2026-11-30.md": "Tea in the morning; the harbor was foggy. Ünïcode café naïve.\n",
    "Pilot/scopes/other/Notes about other.md": "zeppelin secrets of another principal\n",
    "Pilot/Private.md": "zeppelin notes in the default principal's home\n",
    "Templates/Zeppelin day.md": "# {{date}} zeppelin log\n",  # a templates folder
    ".obsidian/templates.json": '{"folder": "Templates"}',
}


@pytest.fixture(scope="module")
def base_vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("quick") / "vault"
    init_vault(root)
    for rel, text in NOTES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    env = _env(root.parent)
    done = subprocess.run([sys.executable, "-m", "memvault", "--vault", str(root), "index",
                           "rebuild", "--json"], capture_output=True, text=True, env=env,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return root


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVAULT_")}
    env.update(HOME=str(home / "home"), XDG_DATA_HOME=str(home / "home" / "share"))
    return env


def _snapshot(root: Path) -> dict[str, bytes]:
    """Every file's bytes, except the index (a cache whose pages a refresh rewrites) and
    the parse cache (its entries name the digests of stamped files), with the clock taken
    out (journal event ids and times, `updated:` stamps and the safety net's digests of
    stamped files): the two runs happen a moment apart."""
    from memvault.state_paths import PARSED

    out = {}
    for p in sorted(root.rglob("*")):
        if not p.is_file() or p.name.startswith("index.sqlite") or \
                p.relative_to(root).as_posix().startswith(PARSED + "/"):
            continue
        data = re.sub(rb"updated:\d+", b"updated:T", p.read_bytes())
        data = re.sub(rb'"sha1": "[0-9a-f]+"', b'"sha1": "S"', data)  # of stamped bytes
        if p.suffix == ".jsonl":
            lines = [json.loads(line) for line in data.splitlines() if line.strip()]
            data = json.dumps([{k: v for k, v in e.items() if k not in ("id", "ts")}
                               for e in lines]).encode()
        out[p.relative_to(root).as_posix()] = data
    return out


def _run(path: str, root: Path, argv: list[str], tmp: Path, cwd: Path | None = None,
         env: dict[str, str] | None = None) -> tuple[int, str, str, list[str]]:
    out = tmp / f"probe-{path}.json"
    env = dict(_env(tmp), PROBE_PATH=path, PROBE_OUT=str(out), **(env or {}))
    args = [a.replace("{vault}", str(root)) for a in argv]
    done = subprocess.run([sys.executable, "-c", PROBE, "memvault", *args], capture_output=True,
                          env=env, timeout=60, cwd=cwd or tmp)
    text = str(root)
    imported = json.loads(out.read_text()) if out.exists() else ["?"]
    return (done.returncode, done.stdout.decode("utf-8", "replace").replace(text, "{vault}"),
            done.stderr.decode("utf-8", "replace").replace(text, "{vault}"), imported)


def _copy(source: Path, dest: Path) -> None:
    """Copy a vault as `cp -a` would (modification times kept, symlinks as links). Every
    copied file has a new change time, which no program can set back, so an index that
    was in step with the source is not in step with the copy until a refresh: when it was,
    the copy's index is brought in step by an ordinary refresh, which must find every
    file's bytes unchanged (a copy is hashed, never parsed again)."""
    from memvault.index.fresh import fresh_connection

    shutil.copytree(source, dest, symlinks=True)
    home = Vault.open(source).config.home
    conn = fresh_connection(str(source), home)
    if conn is None:
        return  # the copy is as stale as its source
    conn.close()
    vault = Vault.open(dest)
    result = vault.search.refresh()
    vault.search.close()
    assert (result.added, result.updated, result.removed) == (0, 0, 0), result
    assert result.unchanged == result.scanned, result
    assert fresh_connection(str(dest), home) is not None


def _both(base: Path, tmp: Path, argv: list[str], prepare=None):  # type: ignore[no-untyped-def]
    """Run both paths, each on its own copy of the vault; return (quick, click) results
    and the two vaults."""
    if prepare is not None and not getattr(prepare, "per_copy", False):
        staged = tmp / "staged" / "vault"
        _copy(base, staged)
        prepare(staged)  # once: ids it makes are the same in both copies
        base, prepare = staged, None
    results = []
    for path in ("quick", "click"):
        root = tmp / path / "vault"
        _copy(base, root)
        if prepare is not None:
            prepare(root)  # FIFOs, which cannot be copied
        results.append((_run(path, root, argv, tmp / path), root))
    (quick, quick_root), (click, click_root) = results
    assert quick[:3] == click[:3], f"argv {argv}:\nquick {quick[:3]}\nclick {click[:3]}"
    assert _snapshot(quick_root) == _snapshot(click_root)
    return quick, click


PLAIN = [
    ["--vault", "{vault}", "search", "--json", "zeppelin"],
    ["--vault", "{vault}", "--json", "search", "harbor"],
    ["--vault={vault}", "search", "zeppelin", "--json", "--limit", "2"],
    ["--vault", "{vault}", "search", "--json", "-n", "1", "zeppelin"],
    ["--vault", "{vault}", "search", "--json", "-n3", "harbor"],
    ["--vault", "{vault}", "search", "--json", "--limit=1000", "the"],
    ["--vault", "{vault}", "search", "--json", "--path", "Projects/*", "zeppelin"],
    ["--vault", "{vault}", "search", "--json", "-p", "Daily/*", "harbor"],
    ["--vault", "{vault}", "search", "--json", "--tag", "travel", "harbor"],
    ["--vault", "{vault}", "search", "--json", "-t", "#sea", "harbor"],
    ["--vault", "{vault}", "search", "--json", "--tag=sea/north", "--path=*", "harbor"],
    ["--vault", "{vault}", "search", "--json", "--tag", "money", "--", ""],
    ["--vault", "{vault}", "search", "--json", "harbr"],            # a typo, corrected
    ["--vault", "{vault}", "search", "--json", "Zepelin"],          # a fuzzy title
    ["--vault", "{vault}", "search", "--json", "Haven"],            # an alias
    ["--vault", "{vault}", "search", "--json", '"boats and gulls"'],
    ["--vault", "{vault}", "search", "--json", "harbor -fog*"],
    ["--vault", "{vault}", "search", "--json", "tea OR budget"],
    ["--vault", "{vault}", "search", "--json", "cafe naive"],
    ["--vault", "{vault}", "search", "--json", "nothingmatchesthis"],
    ["--vault", "{vault}", "search", "--json", "--", "-zeppelin harbor"],
    ["--vault", "{vault}", "search", "-q", "--json", "-v", "zeppelin"],
    ["-q", "--vault", "{vault}", "-v", "search", "--json", "zeppelin"],
    ["--vault", "{vault}", "--scope", "other", "search", "--json", "zeppelin"],
    ["--vault", "{vault}", "--scope", "default", "search", "--json", "zeppelin"],
    ["--vault", "{vault}", "--scope=Other", "search", "--json", "secrets"],
]

DECLINED = [
    ["--vault", "{vault}", "search", "zeppelin"],                   # not JSON: rich output
    ["--vault", "{vault}", "search", "--json"],                     # no query
    ["--vault", "{vault}", "search", "--json", "a", "b"],           # two queries
    ["--vault", "{vault}", "search", "--json", ""],                 # nothing to search for
    ["--vault", "{vault}", "search", "--json", "--limit", "0", "x"],
    ["--vault", "{vault}", "search", "--json", "--limit", "1001", "x"],
    ["--vault", "{vault}", "search", "--json", "--limit", "abc", "x"],
    ["--vault", "{vault}", "search", "--json", "--limit", "-3", "x"],
    ["--vault", "{vault}", "search", "--json", "--limit"],
    ["--vault", "{vault}", "search", "--json", "-zeppelin"],        # an unknown option
    ["--vault", "{vault}", "search", "--json", "--nope", "x"],
    ["--vault", "{vault}", "search", "--json=yes", "x"],
    ["--vault", "{vault}", "search", "-qv", "--json", "x"],
    ["--vault", "{vault}", "search", "--json", "--help"],
    ["--vault", "{vault}", "search", "--json", "-h"],
    ["--vault", "{vault}", "search", "--json", "--memory", "tea"],
    ["--vault", "{vault}", "--version", "search", "--json", "x"],
    ["--vault", "{vault}", "--scope", "bad scope!", "search", "--json", "x"],
    ["--vault", "{vault}/missing", "search", "--json", "x"],
    ["--vault", "{vault}/Harbor.md", "search", "--json", "x"],
    ["--vault", "{vault}", "search", "--scope", "other", "--json", "x"],
    ["--vault", "{vault}", "search", "--json", "--path", "", "x"],
    ["--vault", "{vault}", "sear", "--json", "x"],
    ["--vault", "{vault}", "--json", "index", "search", "x"],
    # bytes that are not UTF-8 (a Latin-1 terminal): a usage error from both paths
    ["--vault", "{vault}", "search", "--json", "\udcffzeppelin"],
    ["--vault", "{vault}", "search", "--json", "caf\udce9"],
    ["--vault", "{vault}", "search", "--json", "--path", "Caf\udce9/*", "zeppelin"],
    ["--vault", "{vault}", "search", "--json", "--tag", "caf\udce9", "zeppelin"],
    ["--vault", "{vault}", "search", "--json", "--memory", "\udcffzeppelin"],
]


@pytest.mark.parametrize("argv", PLAIN, ids=lambda a: " ".join(a[2:]))
def test_plain_searches_print_the_same_from_the_quick_path(base_vault, tmp_path,
                                                          argv) -> None:
    quick, click = _both(base_vault, tmp_path, argv)
    assert quick[0] == 0, quick[2]
    assert quick[3] == [], f"the quick path did not answer {argv}: {quick[2]}"
    assert "click" in click[3]
    assert isinstance(json.loads(quick[1])["results"], list)


@pytest.mark.parametrize("argv", DECLINED, ids=lambda a: " ".join(a[2:]))
def test_everything_else_is_left_to_click_with_the_same_result(base_vault, tmp_path,
                                                              argv) -> None:
    quick, _click = _both(base_vault, tmp_path, argv)
    assert "click" in quick[3], f"{argv} should have been left to click"


def _touch_a_note(root: Path) -> None:
    note = root / "Harbor.md"
    note.write_text(note.read_text(encoding="utf-8") + "\nA zeppelin again.\n",
                    encoding="utf-8")


def _same_size_edit_time_put_back(root: Path) -> None:
    """An edit keeping the size, then the old modification time put back (`touch -r`)."""
    note = root / "Harbor.md"
    st = note.stat()
    note.write_bytes(note.read_bytes().replace(b"zeppelin", b"walruses"))
    os.utime(note, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (note.stat().st_size, note.stat().st_mtime_ns) == (st.st_size, st.st_mtime_ns)


def _drop_the_index(root: Path) -> None:
    for path in (root / ".memvault").glob("index.sqlite*"):
        path.unlink()


def _tick_the_inbox(root: Path) -> None:
    """The person ticks a proposal's box in Obsidian."""
    vault = Vault.open(root)
    vault.proposals.propose("I drink tea, not coffee", "preference")
    inbox = root / "Pilot" / "Inbox.md"
    text = inbox.read_text(encoding="utf-8")
    assert "- [ ] I drink tea" in text
    inbox.write_text(text.replace("- [ ] I drink tea", "- [x] I drink tea"), encoding="utf-8")


def _new_note(root: Path) -> None:
    (root / "Zeppelin facts.md").write_text("zeppelin zeppelin\n", encoding="utf-8")


def _link_a_note_outside(root: Path) -> None:
    outside = root.parent.parent / "outside.md"
    outside.write_text("zeppelin from outside the vault\n", encoding="utf-8")
    (root / "Linked.md").symlink_to(Path("..", "..", "outside.md"))


def _tick_then_refresh(root: Path) -> None:
    """A ticked box the index already saw (a watcher refreshed it; nobody applied it)."""
    _tick_the_inbox(root)
    vault = Vault.open(root)
    vault.search.refresh()
    vault.search.close()


def _fifo_inbox(root: Path) -> None:
    inbox = root / "Pilot" / "Inbox.md"
    inbox.unlink()
    os.mkfifo(inbox)


def _fifo_note(root: Path) -> None:
    os.mkfifo(root / "Pipe.md")


_fifo_inbox.per_copy = _fifo_note.per_copy = True  # type: ignore[attr-defined]


def _linked_home(root: Path) -> None:
    (root / "Elsewhere").mkdir()
    (root / "Pilot").rename(root / "Elsewhere" / "Pilot")
    (root / "Pilot").symlink_to("Elsewhere/Pilot")


@pytest.mark.parametrize("prepare", [_touch_a_note, _same_size_edit_time_put_back,
                                     _drop_the_index, _tick_the_inbox,
                                     _tick_then_refresh, _new_note, _fifo_inbox, _fifo_note,
                                     _linked_home],
                         ids=lambda f: f.__name__.strip("_"))
def test_a_vault_that_changed_is_refreshed_by_the_ordinary_path(base_vault, tmp_path,
                                                               prepare) -> None:
    """Whatever changed, the quick path never answers from a stale index: it leaves the
    refresh (or the inbox decision, or a hostile file) to the ordinary command, and the
    result is the same."""
    quick, _click = _both(base_vault, tmp_path, ["--vault", "{vault}", "search", "--json",
                                                 "zeppelin"], prepare)
    assert "click" in quick[3]
    if prepare is _same_size_edit_time_put_back:
        assert "Harbor.md" not in [r["path"] for r in json.loads(quick[1])["results"]]
    if prepare is _new_note:
        assert "Zeppelin facts.md" in [r["path"] for r in json.loads(quick[1])["results"]]
    if prepare in (_tick_the_inbox, _tick_then_refresh):
        assert "inbox: accepted" in quick[2]  # the ordinary path applied the decision


def test_a_symlink_out_of_the_vault_is_not_searched_on_either_path(base_vault,
                                                                   tmp_path) -> None:
    """A link to a file outside the vault is not a note: the index stays in step, the
    quick path answers, and the linked text is not found."""
    quick, _click = _both(base_vault, tmp_path, ["--vault", "{vault}", "search", "--json",
                                                 "outside"], _link_a_note_outside)
    assert quick[3] == [] and json.loads(quick[1])["results"] == []


def test_another_principals_notes_never_reach_the_quick_answer(base_vault, tmp_path) -> None:
    quick, _ = _both(base_vault, tmp_path, ["--vault", "{vault}", "search", "--json",
                                            "zeppelin"])
    paths = {r["path"] for r in json.loads(quick[1])["results"]}
    assert "Pilot/scopes/other/Notes about other.md" not in paths
    assert "Templates/Zeppelin day.md" not in paths  # Obsidian's templates folder
    assert "Harbor.md" in paths and quick[3] == []
    other, _ = _both(base_vault, tmp_path / "o", ["--vault", "{vault}", "--scope", "other",
                                                  "search", "--json", "zeppelin"])
    paths = {r["path"] for r in json.loads(other[1])["results"]}
    assert "Pilot/Private.md" not in paths and other[3] == []


def test_the_quick_path_writes_nothing(base_vault, tmp_path) -> None:
    root = tmp_path / "vault"
    _copy(base_vault, root)
    before = {p: (p.stat().st_size, p.stat().st_mtime_ns) for p in root.rglob("*")
              if p.is_file() and not p.name.endswith(("-wal", "-shm"))}
    result = _run("quick", root, ["--vault", "{vault}", "search", "--json", "zeppelin"],
                  tmp_path)
    assert result[0] == 0 and result[3] == []
    after = {p: (p.stat().st_size, p.stat().st_mtime_ns) for p in root.rglob("*")
             if p.is_file() and not p.name.endswith(("-wal", "-shm"))}
    assert after == before


@pytest.mark.parametrize("where", ["vault folder", "a note folder", "MEMVAULT_VAULT",
                                   "MEMVAULT_SCOPE"])
def test_the_vault_found_without_vault_is_the_same_on_both_paths(base_vault, tmp_path,
                                                                 where) -> None:
    """Without `--vault`: the nearest folder holding `.memvault/` (from the vault or a
    folder inside it), or the environment's vault and principal."""
    results = []
    for path in ("quick", "click"):
        root = tmp_path / path / "vault"
        _copy(base_vault, root)
        cwd = {"vault folder": root, "a note folder": root / "Projects"}.get(where)
        env = {"MEMVAULT_VAULT": str(root)} if where.startswith("MEMVAULT") else {}
        if where == "MEMVAULT_SCOPE":
            env["MEMVAULT_SCOPE"] = "other"
        results.append(_run(path, root, ["search", "--json", "zeppelin"], tmp_path / path,
                            cwd=cwd, env=env))
    quick, click = results
    assert quick[:3] == click[:3]
    assert quick[0] == 0 and quick[3] == [], quick[2]
    paths = {r["path"] for r in json.loads(quick[1])["results"]}
    assert ("Pilot/scopes/other/Notes about other.md" in paths) == (where == "MEMVAULT_SCOPE")


def _latin1_new_note(root: Path) -> None:
    """A note whose file name is not UTF-8 (a Latin-1 `Caf\\xe9.md`), not yet seen."""
    with open(os.path.join(os.fsencode(root), b"Caf\xe9.md"), "wb") as fh:
        fh.write(b"zeppelin from a Latin-1 archive\n")


def _latin1_named_note(root: Path) -> None:
    """The same note, already seen by a refresh (which skipped it)."""
    _latin1_new_note(root)
    vault = Vault.open(root)
    vault.search.refresh()
    vault.search.close()


@pytest.mark.parametrize("prepare", [_latin1_new_note, _latin1_named_note],
                         ids=lambda f: f.__name__.strip("_"))
def test_a_note_named_in_latin1_is_skipped_on_both_paths(base_vault, tmp_path,
                                                         prepare) -> None:
    """New, the odd name makes the quick path leave the refresh to click (which skips
    the file instead of failing); once seen, the index is in step and the quick path
    answers."""
    quick, _click = _both(base_vault, tmp_path, ["--vault", "{vault}", "search", "--json",
                                                 "zeppelin"], prepare)
    assert quick[0] == 0, quick[2]
    assert (quick[3] == []) == (prepare is _latin1_named_note)
    paths = [r["path"] for r in json.loads(quick[1])["results"]]
    assert "Harbor.md" in paths and not any(p.startswith("Caf") for p in paths)


def _another_principal_proposed(root: Path) -> None:
    """The default principal has a proposal waiting; `other` has facts and no inbox
    (the trading set-up: one principal per wallet). The index is in step."""
    Vault.open(root).proposals.propose("I drink tea, not coffee", "preference")
    Vault.open(root, scope="other").memory.remember("the other wallet trades at dawn")
    assert not (root / "Pilot" / "scopes" / "other" / "Inbox.md").exists()
    vault = Vault.open(root, scope="other")
    vault.search.refresh()
    vault.search.close()


def _own_inbox_without_a_fingerprint(root: Path) -> None:
    """`other` has an Inbox.md memvault never fingerprinted on this machine (a fresh
    clone: the safety net is not synced) while the default principal's proposal waits."""
    _another_principal_proposed(root)
    inbox = root / "Pilot" / "scopes" / "other" / "Inbox.md"
    inbox.write_text("# Inbox\n\nNothing waiting here.\n", encoding="utf-8")
    vault = Vault.open(root, scope="other")
    vault.search.refresh()
    vault.search.close()


@pytest.mark.parametrize("prepare", [_another_principal_proposed,
                                     _own_inbox_without_a_fingerprint],
                         ids=lambda f: f.__name__.strip("_"))
def test_another_principals_proposal_leaves_the_quick_path_answering(base_vault, tmp_path,
                                                                    prepare) -> None:
    """Only this principal's own waiting proposals can make its inbox undecided: a
    proposal of another principal in the shared journal must not send every search of
    this one to the ordinary path, search after search."""
    argv = ["--vault", "{vault}", "--scope", "other", "search", "--json", "zeppelin"]
    quick, _click = _both(base_vault, tmp_path, argv, prepare)
    assert quick[0] == 0 and quick[3] == [], quick[2]
    assert "Pilot/scopes/other/Notes about other.md" in [
        r["path"] for r in json.loads(quick[1])["results"]]


def _own_proposal_without_a_fingerprint(root: Path) -> None:
    """`other`'s own proposal waits and its Inbox.md has no fingerprint here: a line
    the person deleted would reject it, so the quick path must leave it to click."""
    Vault.open(root, scope="other").proposals.propose("I drink tea, not coffee",
                                                      "preference")
    from memvault.services.inbox_state import seen_path

    (root / seen_path("Pilot/scopes/other/Inbox.md")).unlink()
    vault = Vault.open(root, scope="other")
    vault.search.refresh()
    vault.search.close()


def test_this_principals_own_waiting_proposal_still_sends_it_to_click(base_vault,
                                                                      tmp_path) -> None:
    argv = ["--vault", "{vault}", "--scope", "other", "search", "--json", "zeppelin"]
    quick, _click = _both(base_vault, tmp_path, argv, _own_proposal_without_a_fingerprint)
    assert quick[0] == 0 and "click" in quick[3]
