"""One validated trade execution, as input: a pydantic model and its canonical form.

`parse_trade_batch(text)` reads one JSON object, a JSON array or JSON lines, and
`validate_trade(obj)` checks one execution. Only `status: "validated"` is accepted: the
app around memvault validates an execution (it landed and matches what was approved);
memvault records only those, and refuses pending, failed or merely "confirmed" ones.

Metrics (`fill_price`, `value_usd`, `gas`, `gas_usd`, `slippage_bps`, `fees`) are
optional and kept exactly as given (decimal text, never floats); a missing metric stays
missing (`None`) and is written as `unavailable`, never estimated or derived.

The hash becomes a file name, so it must be hex (`0x` optional, 8-128 digits).
Unknown fields are refused so a typo never silently becomes "unavailable".
Import lazily (pydantic).
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import re
from decimal import Decimal
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from memvault.errors import InvalidInput

HASH_RE = re.compile(r"(0x)?[0-9a-f]{8,128}\Z")
_NETWORK = re.compile(r"[a-z0-9][a-z0-9._-]{0,39}\Z")
_SYMBOL = re.compile(r"[^\s\[\]|#^/\\:*?\"<>{},]{1,32}\Z")
_WALLET = re.compile(r"[A-Za-z0-9:._-]{4,128}\Z")
METRICS = ("fill_price", "value_usd", "gas", "gas_usd", "slippage_bps", "fees")
ACCEPTED_STATUS = "validated"
# The range a trade time must fall in, and the size of amounts (docs/notes.md#trades):
# anything outside is a unit mix-up (milliseconds), a typo or an attack.
EARLIEST = _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC)
LATEST = _dt.datetime(2100, 1, 1, tzinfo=_dt.UTC)
MAX_EXPONENT = 40  # an amount is between 1e-40 and 1e40 (or zero)
MAX_NUMBER_CHARS = 80


def check_hash(value: Any) -> str:
    """A lower-case hex transaction hash, or InvalidInput (it becomes a file name)."""
    text = value.strip().lower() if isinstance(value, str) else ""
    if not HASH_RE.match(text):
        raise InvalidInput(f"hash {value!r} is not a transaction hash (hex digits, optional "
                           "0x, 8 to 128 long)")
    return text


def _hash(value: Any) -> str:
    try:
        return check_hash(value)
    except InvalidInput:
        raise ValueError(f"{value!r} is not a transaction hash (hex digits, optional 0x, "
                         "8 to 128 long)") from None


def _match(pattern: re.Pattern[str], what: str, lower: bool = False) -> Any:
    def check(value: Any) -> str:
        if not isinstance(value, str) or not pattern.match(value.strip().lower() if lower
                                                           else value.strip()):
            raise ValueError(f"{value!r} is not a valid {what}")
        return value.strip().lower() if lower else value.strip()
    return check


def _text(value: Any) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > 64 or \
            any(ord(c) < 32 for c in value) or "[[" in value or "]]" in value:
        raise ValueError(f"{value!r} is not a valid name (1-64 characters, one line)")
    return value.strip()


def _status(value: Any) -> str:
    if not isinstance(value, str) or value.strip().lower() != ACCEPTED_STATUS:
        raise ValueError(f"is {value!r}; only validated executions are recorded")
    return ACCEPTED_STATUS


def _shown(value: Any) -> str:
    """A value as an error message quotes it: numbers as written, text quoted, at most
    60 characters."""
    text = str(value) if isinstance(value, (int, float, Decimal)) else repr(value)
    return text if len(text) <= 60 else text[:59] + "\u2026"


def _decimal(value: Any) -> Any:
    given = value
    if isinstance(value, bool):
        raise ValueError("must be a number")
    if isinstance(value, float):
        value = Decimal(repr(value))
    if isinstance(value, str):
        if len(value.strip()) > MAX_NUMBER_CHARS:
            raise ValueError(f"must be a number of at most {MAX_NUMBER_CHARS} characters")
        try:
            value = Decimal(value.strip())
        except ArithmeticError:
            raise ValueError(f"{_shown(value)} is not a number") from None
    if isinstance(value, int):
        value = Decimal(value)
    if isinstance(value, Decimal) and value.is_finite() and value and not (
            -MAX_EXPONENT <= value.adjusted() <= MAX_EXPONENT):
        raise ValueError(f"{_shown(given)} is out of range for an amount (at most "
                         f"1e{MAX_EXPONENT})")
    return value


def _timestamp(value: Any) -> Any:
    """A UTC time from ISO 8601 text with a zone, or from Unix seconds, in range."""
    if isinstance(value, (int, float, Decimal)) and not isinstance(value, bool):
        number = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
        if not number.is_finite() or not EARLIEST.timestamp() <= number < LATEST.timestamp():
            raise ValueError(f"{_shown(value)} is not a time between {EARLIEST:%Y-%m-%d} and "
                             f"{LATEST:%Y-%m-%d} in Unix seconds (milliseconds are not read)")
        return _dt.datetime.fromtimestamp(float(number), _dt.UTC)
    if isinstance(value, str):
        text = value.strip()
        if len(text) > 64:
            raise ValueError(f"{_shown(value)} is not an ISO 8601 time")
        try:
            parsed = _dt.datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
        except ValueError:
            raise ValueError(f"{_shown(value)} is not an ISO 8601 time") from None
        if parsed.tzinfo is None:
            raise ValueError(f"{_shown(value)} has no time zone (add Z or +00:00)")
        try:
            utc = parsed.astimezone(_dt.UTC)
        except OverflowError:  # year 1 east of UTC, year 9999 west of it
            utc = None
        if utc is None or not EARLIEST <= utc < LATEST:
            raise ValueError(f"{_shown(value)} is not a time between {EARLIEST:%Y-%m-%d} and "
                             f"{LATEST:%Y-%m-%d}")
        return utc
    raise ValueError("must be an ISO 8601 time or Unix seconds")


Positive = Annotated[Decimal, BeforeValidator(_decimal), Field(gt=0, allow_inf_nan=False)]
NonNeg = Annotated[Decimal, BeforeValidator(_decimal), Field(ge=0, allow_inf_nan=False)]
Symbol = Annotated[str, BeforeValidator(_match(_SYMBOL, "token symbol"))]


class TradeInput(BaseModel):
    """One validated execution, as the app hands it to `memvault trade record`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    hash: Annotated[str, BeforeValidator(_hash)]
    network: Annotated[str, BeforeValidator(_match(_NETWORK, "network name", lower=True))]
    wallet: Annotated[str, BeforeValidator(_match(_WALLET, "wallet address"))]
    timestamp: Annotated[_dt.datetime, BeforeValidator(_timestamp)]
    status: Annotated[str, BeforeValidator(_status)]
    venue: Annotated[str, BeforeValidator(_text)]
    asset_in: Symbol
    amount_in: Positive
    asset_out: Symbol
    amount_out: Positive
    fill_price: Positive | None = None
    value_usd: NonNeg | None = None
    gas: NonNeg | None = None
    gas_asset: Symbol | None = None
    gas_usd: NonNeg | None = None
    slippage_bps: Annotated[Decimal, BeforeValidator(_decimal),
                            Field(ge=-10000, le=10000, allow_inf_nan=False)] | None = None
    fees: NonNeg | None = None
    fee_asset: Symbol | None = None


def _num(value: Decimal | None) -> str | None:
    return None if value is None else format(value, "f")


def canonical(trade: TradeInput) -> dict[str, str | None]:
    """The trade as plain text values (what the note, the event and comparisons use)."""
    out: dict[str, str | None] = {
        "hash": trade.hash, "network": trade.network, "wallet": trade.wallet,
        "timestamp": trade.timestamp.strftime("%Y-%m-%dT%H:%M:%SZ"), "status": trade.status,
        "venue": trade.venue, "asset_in": trade.asset_in, "amount_in": _num(trade.amount_in),
        "asset_out": trade.asset_out, "amount_out": _num(trade.amount_out)}
    for name in METRICS:
        out[name] = _num(getattr(trade, name))
    out["gas_asset"] = trade.gas_asset
    out["fee_asset"] = trade.fee_asset
    return out


def fingerprint(data: dict[str, Any]) -> str:
    raw = json.dumps(data, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(raw).hexdigest()[:16]


def validate_trade(obj: Any, where: str = "trade") -> TradeInput:
    if not isinstance(obj, dict):
        raise InvalidInput(f"{where}: expected a JSON object, got {type(obj).__name__}")
    try:
        return TradeInput.model_validate(obj)
    except ValidationError as exc:
        problems = [_problem(err) for err in exc.errors()]
        more = (f" (and {len(problems) - 1} more problem{'s' if len(problems) > 2 else ''})"
                if len(problems) > 1 else "")
        raise InvalidInput(f"{where}: {problems[0]}{more}; nothing was written",
                           problems=[f"{where}: {p}" for p in problems]
                           if len(problems) > 1 else None) from None


def _problem(err: Any) -> str:
    """One validation problem as `field reason`."""
    field = ".".join(str(p) for p in err["loc"]) or "input"
    if err["type"] == "extra_forbidden":
        reason = "is not a known field (see docs/notes.md#trades)"
    elif err["type"] == "missing":
        reason = "is missing"
    elif err["type"] == "value_error":
        reason = str((err.get("ctx") or {}).get("error", err["msg"]))
    else:
        reason = str(err["msg"]).lower()
    return f"{field} {reason}"


def _json_int(text: str) -> int | Decimal:
    """A JSON integer; a very long one stays a Decimal (Python refuses to turn more than
    4,300 digits into an int) and is then refused by the range checks."""
    return int(text) if len(text) <= 40 else Decimal(text)


def parse_trade_batch(text: str, source: str = "input") -> list[Any]:
    """One JSON object, a JSON array of objects, or JSON lines -> a list of objects."""
    stripped = text.strip()
    if not stripped:
        raise InvalidInput(f"{source}: no trade given (empty input)")
    try:
        data = json.loads(stripped, parse_float=Decimal, parse_int=_json_int)
    except ValueError:
        data = None
        items = []
        for n, line in enumerate(stripped.split("\n"), 1):
            if not line.strip():
                continue
            try:
                items.append(json.loads(line, parse_float=Decimal, parse_int=_json_int))
            except ValueError as exc:
                why = getattr(exc, "msg", None) or str(exc)[:80]
                raise InvalidInput(f"{source}: line {n} is not valid JSON ({why})") from None
        return items
    return data if isinstance(data, list) else [data]
