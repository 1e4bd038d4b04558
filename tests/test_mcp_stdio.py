"""`memvault serve` as a real subprocess, driven by the SDK's stdio ClientSession."""

from __future__ import annotations

from pathlib import Path

from memvault import Vault
from tests.mcp_helpers import call, ok, run, stdio_params, tool_names


async def _session(params, body):  # type: ignore[no-untyped-def]
    from mcp import ClientSession
    from mcp.client.stdio import stdio_client

    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            assert init.server_info.name == "memvault"
            await body(session)


def test_stdio_session_default_access(vault_dir: Path) -> None:
    Vault.open(vault_dir).memory.remember("I prefer concise answers", "preference")
    (vault_dir / "Notes").mkdir()
    (vault_dir / "Notes" / "Aurora.md").write_text("# Aurora\n\nA Rust async runtime "
                                                   "with a work-stealing scheduler.\n")
    memory = vault_dir / "Pilot" / "Memory.md"

    async def body(session) -> None:  # type: ignore[no-untyped-def]
        names = await tool_names(session)
        assert {"memory_context", "memory_search", "memory_list", "memory_propose"} <= names
        assert "memory_remember" not in names
        first = await ok(session, "memory_context", {"request": "summarise my week"})
        assert "I prefer concise answers" in first["text"]
        found = await ok(session, "memory_search", {"query": "scheduler", "limit": 5})
        assert [hit["path"] for hit in found["notes"]] == ["Notes/Aurora.md"]
        proposed = await ok(session, "memory_propose", {"text": "I review PRs on Mondays"})
        assert proposed["status"] == "proposed"
        is_error, text = await call(session, "memory_remember", {"text": "sneaky"})
        assert is_error
        # a hand edit while the server runs shows in the very next call
        memory.write_text(memory.read_text().replace("concise answers", "answers in haiku"),
                          encoding="utf-8")
        second = await ok(session, "memory_context", {})
        assert "I prefer answers in haiku" in second["text"]
        assert "concise" not in second["text"]

    run(_session, stdio_params(vault_dir), body)
    inbox = (vault_dir / "Pilot" / "Inbox.md").read_text()
    assert "- [ ] I review PRs on Mondays" in inbox
    assert "sneaky" not in memory.read_text()


def test_stdio_session_write_access(vault_dir: Path) -> None:
    async def body(session) -> None:  # type: ignore[no-untyped-def]
        names = await tool_names(session)
        assert {"memory_remember", "memory_edit", "memory_forget", "proposal_accept",
                "proposal_reject"} <= names
        made = await ok(session, "memory_remember", {"text": "My cat is called Miso",
                                                     "category": "identity"})
        assert made["created"] is True
        listed = await ok(session, "memory_list", {})
        assert [f["text"] for f in listed["facts"]] == ["My cat is called Miso"]

    run(_session, stdio_params(vault_dir, "--access", "write"), body)
    assert "My cat is called Miso [identity]" in (vault_dir / "Pilot" / "Memory.md").read_text()


def test_serve_refuses_an_unknown_access_level(vault_dir: Path) -> None:
    from tests.conftest import run_memvault

    done = run_memvault("--vault", str(vault_dir), "serve", "--access", "admin")
    assert done.returncode == 2
    assert "--access must be one of read, propose, write" in done.stderr
    assert done.stdout == ""


def test_served_vault_applies_a_ticked_box_without_any_call(vault_dir: Path) -> None:
    """The server runs the vault watcher: ticking a box in Obsidian is applied even while
    the agent is idle."""
    import time

    import anyio

    memory = vault_dir / "Pilot" / "Memory.md"
    inbox = vault_dir / "Pilot" / "Inbox.md"

    async def body(session) -> None:  # type: ignore[no-untyped-def]
        await ok(session, "memory_propose", {"text": "I water the plants on Sundays"})
        await anyio.sleep(0.5)  # let the watcher take its first snapshot
        inbox.write_text(inbox.read_text().replace("- [ ] I water", "- [x] I water"))
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and "plants" not in memory.read_text():
            await anyio.sleep(0.1)

    run(_session, stdio_params(vault_dir), body)
    assert "I water the plants on Sundays" in memory.read_text()
    assert "plants" not in inbox.read_text()
