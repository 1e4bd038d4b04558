"""Command-line conventions a user of any serious CLI expects, checked on the real program
(real subprocesses where the terminal or a signal matters): usage errors exit 2, the
shared flags work anywhere, `--json` means one JSON document on stdout (errors too),
help text is wrapped by the terminal and not mid-sentence, Ctrl-C exits 130."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import run_memvault


def test_no_arguments_is_a_usage_error_with_the_usage_on_stderr(tmp_path: Path) -> None:
    for args in ([], ["memory"], ["trade"]):
        done = run_memvault(*args, cwd=tmp_path)
        assert done.returncode == 2, args
        assert done.stdout == ""
        assert done.stderr.startswith("Usage: memvault"), done.stderr[:200]


def test_unknown_option_exits_2_and_with_json_is_one_json_document(vault_dir: Path) -> None:
    human = run_memvault("--vault", str(vault_dir), "memory", "list", "--bogus")
    assert human.returncode == 2 and "No such option" in human.stderr and "--bogus" in human.stderr
    machine = run_memvault("--vault", str(vault_dir), "memory", "list", "--bogus", "--json")
    assert machine.returncode == 2
    doc = json.loads(machine.stdout)
    assert set(doc) == {"error", "problems"} and "--bogus" in doc["error"]


def test_an_error_with_json_is_one_document_on_stdout_and_nothing_else(vault_dir: Path) -> None:
    done = run_memvault("--vault", str(vault_dir), "memory", "show", "nope42", "--json")
    assert done.returncode == 1
    assert json.loads(done.stdout) == {
        "error": "Pilot/Memory.md: no fact with id 'nope42'", "problems": []}
    assert done.stdout.count("\n") == 1  # one line over a pipe, like every result
    plain = run_memvault("--vault", str(vault_dir), "memory", "show", "nope42")
    assert plain.returncode == 1 and plain.stdout == ""
    assert plain.stderr == "error: Pilot/Memory.md: no fact with id 'nope42'\n"


@pytest.mark.parametrize("where", ["before", "after"])
def test_quiet_works_before_or_after_the_command_and_init_honours_it(tmp_path: Path,
                                                                     where: str) -> None:
    target = tmp_path / "notes"
    args = ["-q", "init", str(target)] if where == "before" else ["init", str(target), "-q"]
    done = run_memvault(*args)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "" and done.stderr == ""
    assert (target / "Pilot" / "Memory.md").is_file()
    loud = run_memvault("init", str(target))
    assert "kept" in loud.stdout


def test_sync_setup_accepts_quiet_after_the_command(tmp_path: Path) -> None:
    root = tmp_path / "clone"
    subprocess.run(["git", "init", "-q", str(root)], check=True, timeout=30)
    run_memvault("init", str(root), "--no-git", "-q")
    done = run_memvault("--vault", str(root), "sync", "--setup", "-q")
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    assert "merge=union" in (root / ".gitattributes").read_text()
    assert "merge=memvault" in (root / ".git/info/attributes").read_text()


def test_export_json_writes_the_export_or_reports_the_file(vault_dir: Path,
                                                           tmp_path: Path) -> None:
    run_memvault("--vault", str(vault_dir), "remember", "I drink tea")
    done = run_memvault("--vault", str(vault_dir), "export", "--json")
    assert done.returncode == 0, done.stderr
    assert [f["text"] for f in json.loads(done.stdout)["facts"]] == ["I drink tea"]
    out = tmp_path / "backup.json"
    done = run_memvault("--vault", str(vault_dir), "export", "-o", str(out), "--json")
    assert json.loads(done.stdout) == {"output": str(out), "records": 1}
    assert json.loads(out.read_text())["facts"][0]["text"] == "I drink tea"


def test_help_is_wrapped_by_the_terminal_not_mid_sentence(tmp_path: Path) -> None:
    wide = run_memvault("sync", "--help", env={"COLUMNS": "120"})
    assert "Memory.md, Lessons.md and Inbox.md merge fact by fact; a fact edited " \
           "differently on" in wide.stdout  # the source's line breaks are not kept
    narrow = run_memvault("sync", "--help", env={"COLUMNS": "60"})
    assert max(len(line) for line in narrow.stdout.splitlines()) <= 60


def test_completion_prints_a_script_for_each_shell() -> None:
    for shell in ("bash", "zsh", "fish"):
        done = run_memvault("completion", shell)
        assert done.returncode == 0 and "_MEMVAULT_COMPLETE" in done.stdout, shell
    assert run_memvault("completion", "tcsh").returncode == 2


def test_completion_completes_command_names() -> None:
    env = {"_MEMVAULT_COMPLETE": "bash_complete", "COMP_WORDS": "memvault mem",
           "COMP_CWORD": "1"}
    done = subprocess.run([sys.executable, "-c", "from memvault.cli.app import main; main()"],
                          env={**os.environ, **env}, capture_output=True, text=True, timeout=60)
    assert "plain,memory" in done.stdout.splitlines()


def test_ctrl_c_in_watch_exits_130(vault_dir: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "memvault", "--vault", str(vault_dir),
                             "watch"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        deadline = time.monotonic() + 30
        line = ""
        while "watching" not in line and time.monotonic() < deadline:
            line = proc.stderr.readline()
        assert "watching" in line
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 130
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)


def test_every_problem_of_an_invalid_trade_is_shown_in_text_and_json(vault_dir: Path,
                                                                     tmp_path: Path) -> None:
    from tests.trade_helpers import START, make_trade

    trade = make_trade(1, START, timestamp="2026-11-24T14:02:11")
    trade["fill_prise"] = trade.pop("fill_price")
    source = tmp_path / "trade.json"
    source.write_text(json.dumps(trade))
    human = run_memvault("--vault", str(vault_dir), "trade", "record", str(source))
    assert human.returncode == 1 and human.stdout == ""
    lines = human.stderr.splitlines()
    assert lines[0].startswith("error: trade: timestamp") and "(and 1 more problem)" in lines[0]
    assert lines[1:] == [
        "  - trade: timestamp '2026-11-24T14:02:11' has no time zone (add Z or +00:00)",
        "  - trade: fill_prise is not a known field (see docs/notes.md#trades)"]
    machine = run_memvault("--vault", str(vault_dir), "trade", "record", str(source), "--json")
    doc = json.loads(machine.stdout)
    assert machine.returncode == 1 and set(doc) == {"error", "problems"}
    assert [p.split(":")[1].split()[0] for p in doc["problems"]] == ["timestamp", "fill_prise"]
    assert not (vault_dir / "Pilot" / "Trades" / f"{trade['hash']}.md").exists()


@pytest.mark.parametrize("blocked, args, extra", [
    ("mcp", ["serve"], "mcp"),
    ("github", ["memory", "list"], "github"),
    ("cryptography", ["hosted", "status", "--db", "memory.sqlite"], "hosted"),
])
def test_a_missing_optional_part_is_one_line_naming_the_extra(vault_dir: Path, tmp_path: Path,
                                                             blocked: str, args: list[str],
                                                             extra: str) -> None:
    """As on an install without the extra: the library cannot be imported."""
    code = ("import sys; sys.modules[sys.argv[1]] = None; sys.argv = ['memvault', *sys.argv[2:]]; "
            "from memvault.cli.app import main; main()")
    env = {**os.environ, "MEMVAULT_BACKEND": "github"} if extra == "github" else None
    done = subprocess.run([sys.executable, "-c", code, blocked, "--vault", str(vault_dir),
                           *args], capture_output=True, text=True, timeout=60, cwd=tmp_path,
                          env=env, stdin=subprocess.DEVNULL)
    assert done.returncode == 1, done.stderr
    assert done.stderr.endswith(f"is not installed: pip install 'memvault[{extra}]'\n")
    assert done.stderr.count("\n") == 1 and done.stdout == ""


@pytest.mark.parametrize("blocked, package, extra", [
    ("mcp", "memvault.mcp", "mcp"),
    ("cryptography", "memvault.hosted", "hosted"),
])
def test_importing_a_part_without_its_extra_names_the_extra(blocked: str, package: str,
                                                            extra: str) -> None:
    """Python code importing memvault.mcp or memvault.hosted on an install without the
    extra gets an ImportError whose one line says what to install."""
    code = ("import sys; sys.modules[sys.argv[1]] = None\n"
            "try:\n    __import__(sys.argv[2])\n"
            "except ImportError as exc:\n    print(exc)\n    raise\n")
    done = subprocess.run([sys.executable, "-c", code, blocked, package], capture_output=True,
                          text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 1
    assert done.stdout.endswith(f"is not installed: pip install 'memvault[{extra}]'\n")
    assert done.stdout.count("\n") == 1
    assert done.stderr.splitlines()[-1].startswith("memvault.extras.ExtraNotInstalled: ")
