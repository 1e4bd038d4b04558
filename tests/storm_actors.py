"""Actors for the storm test, each run as its own process for a number of seconds.

    python -m tests.storm_actors api VAULT TAG SECONDS   # Vault.memory.remember in a loop
    python -m tests.storm_actors cli VAULT TAG SECONDS   # `memvault remember` processes
    python -m tests.storm_actors mcp VAULT TAG SECONDS   # memory_remember over MCP stdio

Each prints `ok <text>` for every remember it was told succeeded (the user would have
seen "remembered"), and `failed <text>: <error>` for every one that was refused.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _texts(tag: str, seconds: float):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    n = 0
    while time.monotonic() < deadline:
        yield f"{tag} remembered number {n}"
        n += 1


def api(vault: str, tag: str, seconds: float) -> None:
    from memvault import Vault
    from memvault.errors import VaultError

    for text in _texts(tag, seconds):
        try:
            Vault.open(vault).memory.remember(text)
        except VaultError as exc:
            print(f"failed {text}: {exc}", flush=True)
        else:
            print(f"ok {text}", flush=True)


def cli(vault: str, tag: str, seconds: float) -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    for text in _texts(tag, seconds):
        done = subprocess.run([sys.executable, "-m", "memvault", "--vault", vault, "remember",
                               text], env=env, capture_output=True, text=True, timeout=120)
        if done.returncode == 0 and done.stdout.startswith("remembered "):
            print(f"ok {text}", flush=True)
        else:
            print(f"failed {text}: {done.stderr.strip()}", flush=True)


def mcp(vault: str, tag: str, seconds: float) -> None:
    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    params = StdioServerParameters(command=sys.executable, env=env,
                                   args=["-m", "memvault", "--vault", vault, "serve",
                                         "--access", "write"])

    async def session() -> None:
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as client:
                await client.initialize()
                for text in _texts(tag, seconds):
                    result = await client.call_tool("memory_remember", {"text": text})
                    if result.is_error:
                        print(f"failed {text}: {result.content[0].text}", flush=True)
                    else:
                        print(f"ok {text}", flush=True)

    anyio.run(session)


if __name__ == "__main__":
    mode, vault_path, actor_tag, duration = sys.argv[1:5]
    {"api": api, "cli": cli, "mcp": mcp}[mode](vault_path, actor_tag, float(duration))
