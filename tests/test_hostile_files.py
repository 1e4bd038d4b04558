"""Hostile files fail fast: a named pipe (FIFO) where a note or a memory file should be.

Opening a FIFO for reading blocks until something writes to it, so a command that opens
one the ordinary way hangs for good. Every command here runs as a real process with a
timeout; each must finish quickly, change nothing, and leave the next command working.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import run_memvault
from tests.mcp_helpers import call, ok, run, stdio_params

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")

TIMEOUT = 30  # a hang is the failure; a loaded machine may still be slow to start Python


def _state(vault_dir: Path) -> dict[str, bytes | str]:
    """Every entry of the vault (bytes of regular files, the kind of anything else),
    except the lock file, the search index and the parse cache (caches a read command
    may build)."""
    from memvault.state_paths import INDEX, PARSED

    out: dict[str, bytes | str] = {}
    for p in sorted(vault_dir.rglob("*")):
        rel = p.relative_to(vault_dir).as_posix()
        if p.name == "lock" or rel.startswith((INDEX, PARSED + "/")) or p.is_dir():
            continue
        out[rel] = p.read_bytes() if p.is_file() and not p.is_symlink() else "special"
    return out


def _mv(vault_dir: Path, *args: str):  # type: ignore[no-untyped-def]
    return run_memvault("--vault", str(vault_dir), *args, timeout=TIMEOUT)


@pytest.fixture
def fifo_note(vault_dir: Path) -> Path:
    (vault_dir / "Notes").mkdir()
    (vault_dir / "Notes" / "Aurora.md").write_text("# Aurora\n\nA work-stealing scheduler.\n")
    pipe = vault_dir / "Notes" / "pipe.md"
    os.mkfifo(pipe)
    return pipe


def test_a_fifo_note_does_not_hang_search_index_or_doctor(vault_dir: Path,
                                                          fifo_note: Path) -> None:
    before = _state(vault_dir)
    found = _mv(vault_dir, "search", "scheduler", "--json")
    assert found.returncode == 0, found.stderr
    assert "Notes/Aurora.md" in found.stdout
    rebuilt = _mv(vault_dir, "index", "rebuild")
    assert rebuilt.returncode == 0, rebuilt.stderr
    doctor = _mv(vault_dir, "doctor")
    assert "Notes/pipe.md" in doctor.stdout + doctor.stderr
    assert "not a regular file" in doctor.stdout + doctor.stderr
    assert _state(vault_dir) == before
    assert _mv(vault_dir, "remember", "Still working").returncode == 0


@pytest.mark.parametrize("name", ["Memory.md", "Inbox.md", "Lessons.md"])
def test_a_fifo_memory_file_is_a_one_line_error_for_every_command(vault_dir: Path,
                                                                  name: str) -> None:
    pipe = vault_dir / "Pilot" / name
    pipe.unlink(missing_ok=True)
    os.mkfifo(pipe)
    failed = set()
    for args in (("memory", "list"), ("remember", "A new fact"), ("context",),
                 ("propose", "A proposal"), ("search", "anything")):
        before = _state(vault_dir)
        result = _mv(vault_dir, *args)
        assert "Traceback" not in result.stderr
        if result.returncode != 0:  # a command that needs the file: one line, no change
            *warnings, error = result.stderr.splitlines()
            assert all(w.startswith("warning: ") for w in warnings), result.stderr
            assert error.startswith(f"error: Pilot/{name}: is a named pipe (FIFO), not a "
                                    "regular file"), (args, result.stderr)
            assert _state(vault_dir) == before
            failed.add(args[0])
    assert failed  # at least the commands that write this file refused
    assert pipe.exists() and not pipe.is_file()  # never replaced behind the user's back
    doctor = _mv(vault_dir, "doctor")
    assert doctor.returncode == 1
    assert f"Pilot/{name}" in doctor.stdout and "not a regular file" in doctor.stdout
    pipe.unlink()
    assert _mv(vault_dir, "remember", "Works again").returncode == 0
    assert "Works again" in _mv(vault_dir, "memory", "list").stdout


def test_a_fifo_journal_does_not_hang_a_write(vault_dir: Path) -> None:
    events = vault_dir / ".memvault" / "events.jsonl"
    events.unlink(missing_ok=True)
    os.mkfifo(events)
    result = _mv(vault_dir, "remember", "A fact")
    assert result.returncode == 1
    assert "not a regular file" in result.stderr and "events.jsonl" in result.stderr


def test_the_mcp_server_answers_beside_fifos(vault_dir: Path, fifo_note: Path) -> None:
    import anyio

    memory = vault_dir / "Pilot" / "Memory.md"
    memory.unlink(missing_ok=True)
    os.mkfifo(memory)

    async def session() -> None:
        from mcp import ClientSession
        from mcp.client.stdio import stdio_client

        with anyio.fail_after(TIMEOUT):
            async with stdio_client(stdio_params(vault_dir)) as (read, write):
                async with ClientSession(read, write) as client:
                    await client.initialize()
                    found = await ok(client, "memory_search", {"query": "scheduler"})
                    assert [h["path"] for h in found["notes"]] == ["Notes/Aurora.md"]
                    is_error, text = await call(client, "memory_list", {})
                    assert is_error and "not a regular file" in text

    run(session)
