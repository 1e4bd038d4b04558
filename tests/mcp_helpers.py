"""Helpers for the MCP tests: an in-process client over a real server, and a stdio one."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio


def run(coro_fn: Callable[..., Awaitable[Any]], *args: Any) -> Any:
    return anyio.run(coro_fn, *args)


@asynccontextmanager
async def in_process(vault_dir: Path, access: str = "propose"):  # type: ignore[no-untyped-def]
    """The SDK's in-process Client over a real server for this vault."""
    from mcp import Client

    from memvault.mcp.server import build_server
    from memvault.mcp.session import VaultSession

    session = VaultSession.open(vault_dir, access=access)
    try:
        async with Client(build_server(session)) as client:
            yield client
    finally:
        session.close()


def stdio_params(vault_dir: Path, *extra: str):  # type: ignore[no-untyped-def]
    from mcp import StdioServerParameters

    env = dict(os.environ)
    src = str(Path(__file__).resolve().parents[1] / "src")
    env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    return StdioServerParameters(command=sys.executable,
                                 args=["-m", "memvault", "--vault", str(vault_dir), "serve",
                                       *extra],
                                 env=env)


async def call(client: Any, name: str, args: dict[str, Any] | None = None) -> Any:
    """Call a tool; returns (is_error, structured content or error text)."""
    result = await client.call_tool(name, args or {})
    if result.is_error:
        return True, result.content[0].text
    data = result.structured_content
    if data is None and result.content:
        data = json.loads(result.content[0].text)
    return False, data


async def ok(client: Any, name: str, args: dict[str, Any] | None = None) -> Any:
    is_error, data = await call(client, name, args)
    assert not is_error, f"{name} failed: {data}"
    return data


async def tool_names(client: Any) -> set[str]:
    return {t.name for t in (await client.list_tools()).tools}
