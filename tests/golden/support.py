"""Helpers shared by the golden, memory and doctor tests (byte-level comparisons)."""

from __future__ import annotations

import os
from pathlib import Path

GOLDEN = Path(__file__).resolve().parent
MEMORY = "Pilot/Memory.md"
OLD_MTIME_NS = 1_600_000_000 * 1_000_000_000  # far in the past: any rewrite moves it


def golden_bytes(name: str) -> bytes:
    return (GOLDEN / name).read_bytes()


def golden_names() -> list[str]:
    return sorted(p.name for p in GOLDEN.glob("memory_*.md"))


def put_memory(vault_dir: Path, data: bytes | str, rel: str = MEMORY) -> Path:
    """Write `data` (bytes, or the name of a golden file) as the vault's Memory.md."""
    if isinstance(data, str):
        data = golden_bytes(data)
    path = vault_dir / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    os.utime(path, ns=(OLD_MTIME_NS, OLD_MTIME_NS))
    return path


def snapshot(path: Path) -> tuple[bytes, int]:
    return path.read_bytes(), path.stat().st_mtime_ns


def lines_keepends(data: bytes) -> list[bytes]:
    """Split on b"\\n" only, keeping each line's ending (CRLF stays with its line)."""
    parts = data.split(b"\n")
    out = [p + b"\n" for p in parts[:-1]]
    if parts[-1]:
        out.append(parts[-1])
    return out


def line_ending(line: bytes) -> bytes:
    if line.endswith(b"\r\n"):
        return b"\r\n"
    if line.endswith(b"\n"):
        return b"\n"
    return b""


def changed_region(old: bytes, new: bytes) -> tuple[int, list[bytes], list[bytes]]:
    """(first differing line index, old lines of the changed region, new lines of it)."""
    a, b = lines_keepends(old), lines_keepends(new)
    start = 0
    while start < min(len(a), len(b)) and a[start] == b[start]:
        start += 1
    end_a, end_b = len(a), len(b)
    while end_a > start and end_b > start and a[end_a - 1] == b[end_b - 1]:
        end_a -= 1
        end_b -= 1
    return start, a[start:end_a], b[start:end_b]
