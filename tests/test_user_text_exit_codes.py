"""Exit codes of the commands that take the user's text, as a script sees them.

- Text that cannot be stored (empty, whitespace only, over 2,000 characters, a line
  break, ...), an unknown category or an empty forget, given to `remember`, `propose`,
  `lesson propose`, `correct`, `memory edit`, `feedback … corrected --text` or `forget`:
  exit 2 with one `error:` line on stderr (one JSON document on stdout with `--json`),
  and nothing written: every file of the vault byte for byte as before.
- A command that changes the vault and whose stdout cannot take its report (a full
  device, a closed stdout, a pipe whose reader left) once the change is made: exit 0,
  with one `warning:` line on stderr saying what was done (a pipe: nothing); the change
  is there exactly once. A command that only reads still exits 1.

Every case runs `python -m memvault` as a real process.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from memvault import Vault
from memvault.services.setup import init_vault
from tests.conftest import set_up_unavailable
from tests.hostile import vault_files

ROOT = Path(__file__).resolve().parents[1]
LONG = "x" * 2001


def _env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(ROOT / "src"), NO_COLOR="1")


def _mv(root: Path, *args: str, redirect: str = "") -> subprocess.CompletedProcess[str]:
    line = " ".join(shlex.quote(a) for a in [sys.executable, "-m", "memvault", "--vault",
                                             str(root), *args])
    return subprocess.run(["sh", "-c", f"{line} {redirect}"], env=_env(), capture_output=True,
                          text=True, timeout=60)


def _into_a_left_pipe(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run with stdout on a pipe whose reading end is already closed (`| head` gone)."""
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run([sys.executable, "-m", "memvault", "--vault", str(root), *args],
                              env=_env(), stdout=write, stderr=subprocess.PIPE, text=True,
                              timeout=60)
    finally:
        os.close(write)


@pytest.fixture
def vault(tmp_path: Path) -> tuple[Path, str, str]:
    """A vault with a fact (its journal event is a lesson's evidence) and a pending
    proposal: (root, fact id, proposal id)."""
    root = tmp_path / "vault"
    init_vault(root)
    v = Vault.open(root)
    fact = v.memory.remember("I drink tea", "preference").fact.id
    v.events.append("feedback", event_id=f"ev-{fact}", record=fact, outcome="used")
    proposal = v.proposals.propose("I like long walks").proposal
    assert proposal is not None
    return root, fact, proposal.id


def _needs_dev_full() -> None:
    if not os.path.exists("/dev/full"):
        assert not sys.platform.startswith("linux"), "/dev/full is missing on Linux"
        set_up_unavailable("this system has no /dev/full")


BAD_TEXT = [("", "the text is empty"), ("   ", "the text is empty"),
            (" \t ", "the text is empty"), (LONG, "the text is 2,001 characters"),
            ("x" * 9000, "the text is 9,000 characters"), ("two\nlines", "line break")]
COMMANDS = {
    "remember": lambda t, f, p: ["remember", t],
    "propose": lambda t, f, p: ["propose", t],
    "lesson propose": lambda t, f, p: ["lesson", "propose", t, "-c", "evidence-layout",
                                       "-e", f"ev-{f}"],
    "correct": lambda t, f, p: ["correct", p, t],
    "memory edit": lambda t, f, p: ["memory", "edit", f, t],
    "feedback": lambda t, f, p: ["feedback", f, "corrected", "--text", t],
}


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize(("text", "reason"), BAD_TEXT,
                         ids=["empty", "spaces", "tab", "2001", "9000", "line-break"])
def test_text_that_cannot_be_stored_exits_2_and_writes_nothing(
        vault: tuple[Path, str, str], command: str, text: str, reason: str) -> None:
    root, fact, proposal = vault
    before = vault_files(root)
    args = COMMANDS[command](text, fact, proposal)
    done = _mv(root, *args)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and reason in lines[0], \
        done.stderr
    assert vault_files(root) == before
    as_json = _mv(root, "--json", *args)
    assert as_json.returncode == 2 and as_json.stderr == ""
    assert reason in json.loads(as_json.stdout)["error"]
    assert vault_files(root) == before


@pytest.mark.parametrize("args", [
    ["remember", "I like jazz", "--category", "mood"],
    ["propose", "I like jazz", "--category", "mood"],
    ["memory", "edit", "{fact}", "--category", "mood"],
    ["correct", "{proposal}", "I like short walks", "--category", "mood"],
    ["lesson", "propose", "Lead with the summary", "-c", "mood"],
    ["lesson", "propose", "Lead with the summary", "-c", "evidence-layout"],  # no evidence
    ["memory", "edit", "{fact}"],  # nothing to change
    ["feedback", "{fact}", "used", "--text", "I drink green tea"],  # --text: corrected only
    ["forget", "   ", "--yes"],
], ids=lambda a: " ".join(a)[:40])
def test_other_bad_arguments_of_those_commands_exit_2(vault: tuple[Path, str, str],
                                                      args: list[str]) -> None:
    root, fact, proposal = vault
    before = vault_files(root)
    done = _mv(root, *[a.format(fact=fact, proposal=proposal) for a in args])
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert len(done.stderr.splitlines()) == 1 and done.stderr.startswith("error: ")
    assert vault_files(root) == before


def _only_once(root: Path, text: str) -> str:
    facts = [f for f in Vault.open(root).memory.all() if f.text == text]
    assert len(facts) == 1, facts
    events = (root / ".memvault" / "events.jsonl").read_text(encoding="utf-8")
    assert sum(f'"record":"{facts[0].id}"' in ln and '"fact.remembered"' in ln
               for ln in events.splitlines()) == 1
    return facts[0].id


@pytest.mark.parametrize("flags", [[], ["--json"], ["-q"]], ids=["plain", "json", "quiet"])
@pytest.mark.parametrize(("redirect", "why"), [(">/dev/full", "No space left on device"),
                                               (">&-", "it is closed")],
                         ids=["full", "closed"])
def test_a_saved_remember_exits_0_when_stdout_cannot_take_the_report(
        vault: tuple[Path, str, str], redirect: str, why: str, flags: list[str]) -> None:
    if redirect == ">/dev/full":
        _needs_dev_full()
    root, _, _ = vault
    done = _mv(root, *flags, "remember", "I play the cello", redirect=redirect)
    fact_id = _only_once(root, "I play the cello")
    assert done.returncode == 0, done.stderr
    assert done.stderr == f"warning: cannot write to standard output: {why}; remembered " \
                          f"as {fact_id}\n"
    memory = (root / "Pilot" / "Memory.md").read_bytes()
    again = _mv(root, *flags, "remember", "I play the cello", redirect=redirect)
    assert again.returncode == 0 and again.stderr == (
        f"warning: cannot write to standard output: {why}; already remembered as {fact_id}\n")
    assert (root / "Pilot" / "Memory.md").read_bytes() == memory


@pytest.mark.parametrize("flags", [[], ["--json"]], ids=["plain", "json"])
def test_a_saved_remember_exits_0_quietly_when_the_reader_of_its_pipe_left(
        vault: tuple[Path, str, str], flags: list[str]) -> None:
    root, _, _ = vault
    done = _into_a_left_pipe(root, *flags, "remember", "I play the cello")
    assert (done.returncode, done.stderr) == (0, "")
    _only_once(root, "I play the cello")
    listed = _into_a_left_pipe(root, "memory", "list")  # a read: its output was the point
    assert (listed.returncode, listed.stderr) == (1, "")


def test_other_changes_exit_0_and_reads_exit_1_when_stdout_is_full(
        vault: tuple[Path, str, str]) -> None:
    _needs_dev_full()
    root, fact, proposal = vault
    full = ">/dev/full"
    why = "warning: cannot write to standard output: No space left on device;"
    done = _mv(root, "propose", "I like rainy days", redirect=full)
    pid = next(p.id for p in Vault.open(root).proposals.list() if p.text == "I like rainy days")
    assert (done.returncode, done.stderr) == (0, f"{why} proposed as {pid}\n")
    done = _mv(root, "correct", proposal, "I like short walks", redirect=full)
    assert done.returncode == 0 and done.stderr.startswith(f"{why} accepted as ")
    done = _mv(root, "memory", "edit", fact, "I drink green tea", redirect=full)
    assert (done.returncode, done.stderr) == (0, f"{why} edited {fact}\n")
    assert [f.text for f in Vault.open(root).memory.all() if f.id == fact] == \
        ["I drink green tea"]
    done = _mv(root, "forget", fact, "--yes", redirect=full)  # its table comes first
    assert done.returncode == 1 and done.stderr.startswith("error: cannot write")
    assert any(f.id == fact for f in Vault.open(root).memory.all())  # stopped before
    done = _mv(root, "--json", "forget", fact, "--yes", redirect=full)  # no table
    assert (done.returncode, done.stderr) == (0, f"{why} forgot 1 fact(s)\n")
    assert not any(f.id == fact for f in Vault.open(root).memory.all())
    listed = _mv(root, "memory", "list", redirect=full)
    assert (listed.returncode, listed.stderr) == (
        1, "error: cannot write to standard output: No space left on device\n")
