"""A newcomer's first session, exactly as the README shows it.

The console block under "A first session" in README.md is replayed command by command in
a fresh HOME with no vault, each command a real `memvault` process on a pseudo-terminal
(80 columns, no colour: what a person sees, prompts and all; the forget prompt is
answered `y`). Every printed line must match the README's, apart from the fact ids and
times, which differ per run. Then the files are checked: the vault is memory only (no
trading folders, no Policy.md) and nothing printed mentions trading. A second run
without `init` uses the per-user vault and must say where it put it.
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import shlex
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
TIME = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d")
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
TRADING = re.compile(r"(?i)\b(trade|trades|trading|venues?|tokens?|signing|approvals?|"
                     r"policy|limits?)\b")
TRADING_FOLDERS = ("Trades", "Journal", "Reflections", "Venues", "Tokens")

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")


def readme_session() -> list[tuple[str, list[str]]]:
    """(command line, expected output lines) for each `$ ` line of the README session."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## A first session"):]
    block = section[section.index("```console\n") + len("```console\n"):]
    block = block[:block.index("```\n")]
    steps: list[tuple[str, list[str]]] = []
    for line in block.splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        else:
            steps[-1][1].append(line)
    return steps


def on_terminal(argv: list[str], env: dict[str, str], answer: str | None = None,
                timeout: float = 60) -> tuple[int, str]:
    """Run `argv` on a pseudo-terminal of 80 columns; answer a [y/N] prompt once."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env,
                            close_fds=True)
    os.close(slave)
    out, answered = b"", False
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.1)
            if ready:
                try:
                    chunk = os.read(master, 4096)
                except OSError:  # the child closed the terminal
                    break
                if not chunk:
                    break
                out += chunk
                if answer is not None and not answered and b"[y/N]: " in out:
                    os.write(master, answer.encode() + b"\n")
                    answered = True
            elif proc.poll() is not None:
                break
        code = proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
        os.close(master)
    text = ANSI.sub("", out.decode("utf-8", "replace").replace("\r\n", "\n"))
    return code, text


class Session:
    """A shell-like replay: `export` sets the environment, `memvault …` runs it."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVAULT_")}
        self.env.update(HOME=str(home), XDG_DATA_HOME=str(home / ".local" / "share"),
                        NO_COLOR="1", TERM="dumb", COLUMNS="80", LINES="24")
        self.ids: dict[str, str] = {}  # README id -> this run's id
        self.transcript: list[str] = []

    def expand(self, word: str) -> str:
        word = self.ids.get(word, word)
        return str(self.home) + word[1:] if word.startswith("~") else word

    def run(self, command: str) -> tuple[int, list[str]]:
        words = [self.expand(w) for w in shlex.split(command, comments=True)]
        if words[0] == "export":
            key, _, value = words[1].partition("=")
            self.env[key] = self.expand(value)
            return 0, []
        assert words[0] == "memvault", command
        answer = "y" if words[1] == "forget" and "--yes" not in words else None
        code, out = on_terminal([sys.executable, "-m", "memvault", *words[1:]], self.env,
                                answer)
        self.transcript.append(out)
        return code, out.splitlines()

    def expected(self, lines: list[str], actual: list[str]) -> list[str]:
        """The README's lines with this run's ids, HOME and times put in."""
        for readme_line, line in zip(lines, actual, strict=False):
            got = re.match(r"remembered (\w{6}):", line)
            want = re.match(r"remembered (\w{6}):", readme_line)
            if got and want:
                self.ids[want.group(1)] = got.group(1)
        out = []
        for line in lines:
            for readme_id, real in self.ids.items():
                line = line.replace(readme_id, real)
            out.append(TIME.sub("<time>", line.replace("/home/sam", str(self.home))))
        return out


def test_the_readme_first_session_prints_what_the_readme_shows(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)  # the fresh HOME conftest gives every test
    session = Session(home)
    steps = readme_session()
    assert [c.split()[1] for c, _ in steps if c.startswith("memvault")] == [
        "init", "remember", "remember", "memory", "memory", "forget", "context"]
    for command, lines in steps:
        code, actual = session.run(command)
        assert code == 0, (command, actual)
        actual = [TIME.sub("<time>", line.rstrip()) for line in actual]
        assert actual == session.expected(lines, actual), command

    vault = home / "Notes"
    home_folder = vault / "Pilot"
    assert sorted(p.name for p in home_folder.iterdir()) == [
        "Inbox.md", "Lessons.md", "Memory.md", "Profile.md"]
    assert not any((home_folder / f).exists() for f in TRADING_FOLDERS)
    assert not (home / ".local" / "share" / "memvault").exists()  # no hidden second vault
    pref_id = next(v for k, v in session.ids.items() if k == "k3v9qa")
    memory = (home_folder / "Memory.md").read_text(encoding="utf-8")
    facts = [line for line in memory.splitlines() if line.startswith("- ")]
    assert len(facts) == 1 and re.fullmatch(
        rf"- I prefer short answers \[preference\] <!-- id:{pref_id} updated:\d+ -->", facts[0])
    assert "Aurora" not in memory
    assert "Aurora" not in (vault / ".memvault" / "tombstones.jsonl").read_text()
    ignored = (vault / ".memvault" / ".gitignore").read_text()
    assert "index.sqlite" in ignored and "lock" in ignored
    printed = "\n".join(session.transcript)
    assert not TRADING.search(printed), TRADING.search(printed)


def test_the_same_session_without_init_uses_the_per_user_vault_and_says_where(
        tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)  # the fresh HOME conftest gives every test
    session = Session(home)
    default = home / ".local" / "share" / "memvault" / "vault"
    code, first = session.run('memvault remember "I prefer concise answers without preamble" '
                              "--category preference")
    assert code == 0
    assert first[0] == (f"memvault: created your vault at {default} (the per-user default; "
                        "--vault or MEMVAULT_VAULT picks another folder, `memvault init PATH` "
                        "makes one)")
    assert first[1].startswith("remembered ")
    code, again = session.run('memvault remember "My main project is Aurora" -c project')
    assert code == 0 and len(again) == 1  # said once, on first use only
    code, context = session.run("memvault context")
    assert code == 0 and context[0] == "## What you know about the user"
    assert not TRADING.search("\n".join(session.transcript))
    assert sorted(p.name for p in (default / "Pilot").iterdir()) == [
        "Inbox.md", "Lessons.md", "Memory.md", "Profile.md"]
