"""A vault for someone who only wants memory gets memory only; the trading parts appear
when they are first used, with links that resolve; a folder never initialised keeps its
search cache out of git; vaults with the trading parts (as 0.1.0 made them) keep them."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from tests.conftest import run_memvault
from tests.trade_helpers import START, make_trade

TRADING_FOLDERS = ("Trades", "Venues", "Tokens", "Reflections", "Journal")
TRADING_WORDS = ("Policy", "Limits", "limits", "venues", "approvals", "signing", "trade")


def mv(root: Path, *args: str, expect: int = 0) -> subprocess.CompletedProcess[str]:
    done = run_memvault("--vault", str(root), *args)
    assert done.returncode == expect, (args, done.stdout, done.stderr)
    return done


def test_init_creates_memory_files_only(tmp_path: Path) -> None:
    root = tmp_path / "Notes"
    out = run_memvault("init", str(root)).stdout
    assert sorted(p.name for p in (root / "Pilot").iterdir()) == [
        "Inbox.md", "Lessons.md", "Memory.md", "Profile.md"]
    assert "Policy" not in out and "Trades" not in out
    for name in ("Memory.md", "Lessons.md", "Inbox.md", "Profile.md"):
        text = (root / "Pilot" / name).read_text()
        assert not re.search(r"(?i)trade|venue|token|signing", text), name


def test_init_trading_creates_policy_and_the_folders(tmp_path: Path) -> None:
    root = tmp_path / "Notes"
    run_memvault("init", str(root), "--trading")
    assert (root / "Pilot" / "Policy.md").is_file()
    assert all((root / "Pilot" / f).is_dir() for f in TRADING_FOLDERS)


def test_context_and_lessons_in_a_memory_only_vault_say_nothing_of_trading(
        memory_vault_dir: Path) -> None:
    mv(memory_vault_dir, "remember", "I prefer concise answers", "-c", "preference")
    text = mv(memory_vault_dir, "context").stdout
    assert text.startswith("## What you know about the user\n")
    assert "> Preferences:" in text
    for word in TRADING_WORDS:
        assert word not in text, word
    refused = mv(memory_vault_dir, "lesson", "propose", "Be bold", "-c", "risk-posture",
                 expect=2)  # bad input: nothing written
    assert "trading lesson category" in refused.stderr
    assert "response-detail, evidence-layout, comparison-emphasis" in refused.stderr
    for command in (("lesson", "propose", "Be bold"), ("propose", "Be bold", "--kind", "lesson")):
        unknown = mv(memory_vault_dir, *command, "-c", "bogus", expect=2).stderr
        assert "unknown category 'bogus'" in unknown, command
        assert "use one of: response-detail, evidence-layout, comparison-emphasis\n" in \
            unknown, command
        assert "risk-posture" not in unknown and "approval" not in unknown, command
    helped = run_memvault("lesson", "propose", "-h", env={"COLUMNS": "120"}).stdout
    assert "response-detail, evidence-layout or comparison-emphasis;" in helped


def test_the_first_trade_brings_the_trading_notes_and_every_link_resolves(
        memory_vault_dir: Path, tmp_path: Path) -> None:
    trade = make_trade(1, START, asset_in="ETH", asset_out="USDC", venue="Uniswap v3")
    source = tmp_path / "trade.json"
    source.write_text(json.dumps(trade))
    mv(memory_vault_dir, "trade", "record", str(source))
    home = memory_vault_dir / "Pilot"
    assert {"Trades", "Reflections", "Journal", "Tokens", "Venues"} <= {
        p.name for p in home.iterdir()}
    assert (home / "Tokens" / "ETH.md").read_text().startswith("---\ntags:")
    assert "# Uniswap v3" in (home / "Venues" / "Uniswap v3.md").read_text()
    notes = [p for p in home.rglob("*.md") if p.parent.name in TRADING_FOLDERS]
    links = {m.group(1) for p in notes for m in re.finditer(r"\[\[([^\]|#]+)", p.read_text())}
    assert links, "trade notes link to their tokens, venue, day and reflection"
    for link in links:
        assert (home / f"{link}.md").is_file(), f"[[{link}]] does not resolve"
    # Now the vault uses trading: the context block has its limits section again.
    assert mv(memory_vault_dir, "context").stdout.startswith("## Limits (authoritative)\n")


def test_a_second_trade_keeps_existing_token_notes_as_the_user_wrote_them(
        memory_vault_dir: Path, tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text(json.dumps(make_trade(1, START)))
    mv(memory_vault_dir, "trade", "record", str(tmp_path / "a.json"))
    usdc = memory_vault_dir / "Pilot" / "Tokens" / "USDC.md"
    usdc.write_text("# USDC\n\nMy own research notes.\n")
    (tmp_path / "b.json").write_text(json.dumps(make_trade(2, START)))
    mv(memory_vault_dir, "trade", "record", str(tmp_path / "b.json"))
    assert usdc.read_text() == "# USDC\n\nMy own research notes.\n"


def test_a_vault_with_the_trading_parts_keeps_its_limits_and_categories(vault_dir: Path) -> None:
    """A vault laid out as 0.1.0 made every vault (Policy.md and the trade folders)."""
    text = mv(vault_dir, "context").stdout
    assert text.startswith("## Limits (authoritative)\n")
    assert "venues, approvals or signing" in text or "Nothing is remembered" in text
    done = mv(vault_dir, "lesson", "propose", "Be careful", "-c", "risk-posture", "--json")
    assert json.loads(done.stdout)["status"] == "proposed"


def test_search_in_a_folder_never_initialised_keeps_the_index_out_of_git(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    root.mkdir()
    (root / "Idea.md").write_text("# Graph view\n\nLinks between notes.\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True, timeout=30)
    done = mv(root, "search", "graph")
    assert "Idea.md" in done.stdout
    assert (root / ".memvault" / "index.sqlite").is_file()
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True, timeout=30)
    staged = subprocess.run(["git", "-C", str(root), "diff", "--cached", "--name-only"],
                            capture_output=True, text=True, check=True, timeout=30).stdout
    assert sorted(staged.split()) == [".memvault/.gitignore", "Idea.md"]
