"""Building validated-trade JSON inputs for the trade and inference tests."""

from __future__ import annotations

import datetime as dt
import hashlib
from pathlib import Path
from typing import Any

START = dt.datetime(2026, 11, 20, 9, 0, tzinfo=dt.UTC)


def trade_hash(n: int, salt: str = "") -> str:
    return "0x" + hashlib.sha256(f"trade-{n}-{salt}".encode()).hexdigest()


def make_trade(n: int, when: dt.datetime, **over: Any) -> dict[str, Any]:
    t: dict[str, Any] = {
        "hash": trade_hash(n), "network": "base", "wallet": "0x7c3f5e2a91b04d6e8a2c",
        "timestamp": when.strftime("%Y-%m-%dT%H:%M:%SZ"), "status": "validated",
        "venue": "Uniswap", "asset_in": "ETH", "amount_in": "0.50",
        "asset_out": "USDC", "amount_out": "1708.35", "fill_price": "3416.70",
        "value_usd": "1708.35", "gas": "0.00002", "gas_asset": "ETH", "gas_usd": "0.07",
        "slippage_bps": "12", "fees": "5.12", "fee_asset": "USDC"}
    t.update(over)
    return {k: v for k, v in t.items() if v is not None}


def fifty_trades() -> list[dict[str, Any]]:
    """50 trades over 10 days: 5 a day, 2 hours apart."""
    return [make_trade(n, START + dt.timedelta(days=n // 5, hours=2 * (n % 5)))
            for n in range(50)]


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file() and p.name != "lock"}
