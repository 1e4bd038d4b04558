"""The user's hard limits (Policy.md frontmatter) as a validated pydantic model.

Every key is optional: a key that is absent or empty sets no limit. Values arrive as
text (the frontmatter is read without YAML 1.1 typing) and are validated here; anything
that does not validate makes the whole policy invalid, and callers fail closed.

`validate_policy(values, lines)` returns the model or a list of `PolicyIssue`s naming the
key, the value, the reason and the line. `parse_policy_value(key, text)` turns a
command-line value into the typed value `memvault policy set` writes.

This module never reads or writes files, and nothing in it may be called from memory,
proposals, inference or import code to *change* a limit. Import it lazily (pydantic).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

# Keys Obsidian or the user may add to any note; they are not limits and are ignored.
IGNORED_KEYS = ("tags", "aliases", "cssclasses", "publish", "title", "created", "updated",
                "description")
_NAME = re.compile(r"[^\s,#\[\]{}\"'][^,#\[\]{}\"'\n]{0,63}\Z")

# Bounds of the numeric limits (docs/policy.md): beyond them a value is a typo or an
# attack, never a limit, and huge numbers would make every reader slow or crash.
MAX_USD = Decimal("1000000000000")  # a trillion US dollars
MAX_COUNT = 1_000_000
MAX_DECIMALS = 18
MAX_NUMBER_CHARS = 40
MAX_SHOWN = 60
_HOURS = re.compile(r"([01]\d|2[0-3]):([0-5]\d)-([01]\d|2[0-3]):([0-5]\d)\Z")


def _empty_to_none(value: Any) -> Any:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    return value


def shown(value: Any) -> str:
    """A value as messages quote it: its repr, cut to 60 characters."""
    text = repr(value) if not isinstance(value, (list, dict)) or len(value) < 50 else \
        f"<a {type(value).__name__} of {len(value)} items>"
    return text if len(text) <= MAX_SHOWN else text[:MAX_SHOWN - 1] + "\u2026"


def check_number(text: str) -> Decimal:
    """A finite decimal number from text of at most 40 characters with at most 18
    decimal places and at most 16 digits before the point, else ValueError."""
    text = text.strip().replace("_", "")
    if len(text) > MAX_NUMBER_CHARS:
        raise ValueError(f"must be a number of at most {MAX_NUMBER_CHARS} characters")
    try:
        number = Decimal(text)
    except InvalidOperation:
        raise ValueError("must be a number") from None
    if not number.is_finite():
        raise ValueError("must be a number")
    if number and number.adjusted() > 15:
        raise ValueError("is far too large for a limit")
    exponent = number.as_tuple().exponent  # an int: the number is finite
    if isinstance(exponent, int) and exponent < -MAX_DECIMALS and number != number.quantize(
            Decimal(1).scaleb(-MAX_DECIMALS)):
        raise ValueError(f"has more than {MAX_DECIMALS} decimal places")
    return number


def _number(value: Any) -> Any:
    value = _empty_to_none(value)
    if isinstance(value, str):
        return check_number(value)
    return value


def _whole(value: Any) -> Any:
    value = _number(value)
    if isinstance(value, Decimal):
        if value != value.to_integral_value():
            raise ValueError("must be a whole number")
        return int(value)
    return value


def _as_list(value: Any) -> Any:
    value = _empty_to_none(value)
    if isinstance(value, str):
        if "," in value or " " in value.strip():
            raise ValueError("must be a list (write [a, b] or one item per '- ' line)")
        return [value.strip()]
    return value


def _as_bool(value: Any) -> Any:
    value = _empty_to_none(value)
    if isinstance(value, str):
        low = value.strip().lower()
        if low in ("true", "false"):
            return low == "true"
        raise ValueError("must be true or false")
    return value


def _name(value: Any) -> str:
    if not isinstance(value, str) or not _NAME.match(value.strip()):
        raise ValueError(f"list items must be plain names, not {shown(value)}")
    return value.strip()


def _hours(value: Any) -> Any:
    value = _empty_to_none(value)
    if value is not None and (not isinstance(value, str) or not _HOURS.match(value.strip())):
        raise ValueError("must look like 09:00-17:30 (24-hour clock, Profile time zone)")
    return value.strip() if isinstance(value, str) else value


Amount = Annotated[Annotated[Decimal, Field(ge=0, le=MAX_USD, allow_inf_nan=False)] | None,
                   BeforeValidator(_number)]
Count = Annotated[Annotated[int, Field(ge=0, le=MAX_COUNT)] | None, BeforeValidator(_whole)]
Names = Annotated[list[Annotated[str, BeforeValidator(_name)]] | None,
                  BeforeValidator(_as_list)]
Flag = Annotated[bool | None, BeforeValidator(_as_bool)]


class Policy(BaseModel):
    """The hard limits. Amounts are US dollars; an absent key sets no limit."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_trade_usd: Amount = Field(None, description="Largest value of a single trade.")
    daily_limit_usd: Amount = Field(None, description="Total value of all trades in one day "
                                                      "(Profile time zone).")
    max_slippage_bps: Annotated[
        Annotated[Decimal, Field(ge=0, le=10000, allow_inf_nan=False)] | None,
        BeforeValidator(_number)] = Field(
        None, description="Largest accepted slippage, in basis points (50 = 0.50 %).")
    allowed_networks: Names = Field(None, description="Networks trades may use; any other "
                                                      "is refused.")
    allowed_venues: Names = Field(None, description="Venues (DEXs, exchanges) trades may "
                                                    "use; any other is refused.")
    require_approval_above_usd: Amount = Field(None, description="Trades above this value "
                                                                 "need the user's approval.")
    require_approval_for_new_tokens: Flag = Field(None, description="true: a token never "
                                                  "traded before needs the user's approval.")
    allowed_tokens: Names = Field(None, description="Only these tokens may be traded.")
    blocked_tokens: Names = Field(None, description="These tokens are never traded.")
    max_open_positions: Count = Field(None, description="Most positions open at once.")
    max_trades_per_day: Count = Field(None, description="Most trades in one day.")
    max_gas_usd: Amount = Field(None, description="Largest network fee for one trade.")
    trading_hours: Annotated[str | None, BeforeValidator(_hours)] = Field(
        None, description="When trades may run, HH:MM-HH:MM in the Profile time zone.")


FIELD_KINDS: dict[str, str] = {
    "max_trade_usd": "number", "daily_limit_usd": "number", "max_slippage_bps": "number",
    "allowed_networks": "list", "allowed_venues": "list",
    "require_approval_above_usd": "number", "require_approval_for_new_tokens": "boolean",
    "allowed_tokens": "list", "blocked_tokens": "list", "max_open_positions": "integer",
    "max_trades_per_day": "integer", "max_gas_usd": "number", "trading_hours": "text",
}
assert set(FIELD_KINDS) == set(Policy.model_fields)


@dataclass(frozen=True, slots=True)
class PolicyIssue:
    """Why Policy.md is invalid: the key (None for the file), the value, the reason."""

    key: str | None
    value: Any
    reason: str
    line: int | None

    def __str__(self) -> str:
        where = f" (line {self.line})" if self.line else ""
        if self.key is None:
            return f"{self.reason}{where}"
        got = "empty" if self.value in (None, "") else shown(self.value)
        return f"{shown_key(self.key)} {self.reason}, got {got}{where}"

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "value": self.value, "reason": self.reason, "line": self.line}


def shown_key(key: str) -> str:
    return key if len(key) <= MAX_SHOWN else key[:MAX_SHOWN - 1] + "\u2026"


def describe_keys() -> list[dict[str, str]]:
    return [{"key": k, "type": FIELD_KINDS[k], "meaning": f.description or ""}
            for k, f in Policy.model_fields.items()]


def validate_policy(values: dict[str, Any], lines: dict[str, int | None]
                    ) -> tuple[Policy | None, list[PolicyIssue]]:
    """Validate frontmatter values (keys matched case-insensitively)."""
    data: dict[str, Any] = {}
    written: dict[str, str] = {}
    issues: list[PolicyIssue] = []
    for key, value in values.items():
        fold = str(key).casefold()
        if fold in IGNORED_KEYS:
            continue
        if fold not in Policy.model_fields:
            near = difflib.get_close_matches(fold, list(Policy.model_fields), n=1)
            hint = f" (did you mean {near[0]}?)" if near else ""
            issues.append(PolicyIssue(str(key), value, f"is not a policy key{hint}",
                                      lines.get(str(key))))
            continue
        data[fold] = value
        written[fold] = str(key)
    try:
        policy = Policy(**data)
    except ValidationError as exc:
        for err in exc.errors():
            loc = str(err["loc"][0]) if err["loc"] else None
            shown = written.get(loc or "", loc)
            issues.append(PolicyIssue(shown, data.get(loc or ""), _reason(err),
                                      lines.get(shown or "")))
        return None, issues
    if policy.allowed_tokens and policy.blocked_tokens:
        both = sorted({t.casefold() for t in policy.allowed_tokens} &
                      {t.casefold() for t in policy.blocked_tokens})
        if both:
            key = written["blocked_tokens"]
            issues.append(PolicyIssue(key, data[key.casefold()],
                                      f"also lists allowed token(s) {', '.join(both)}",
                                      lines.get(key)))
    return (None, issues) if issues else (policy, [])


def _reason(err: Any) -> str:
    kind = err["type"]
    ctx = err.get("ctx") or {}
    if kind in ("greater_than_equal", "greater_than"):
        return f"must be ≥ {ctx.get('ge', ctx.get('gt'))}"
    if kind in ("less_than_equal", "less_than"):
        return f"must be ≤ {ctx.get('le', ctx.get('lt'))}"
    if kind.startswith(("decimal", "float", "finite")):
        return "must be a number"
    if kind.startswith("int"):
        return "must be a whole number"
    if kind.startswith("list"):
        return "must be a list"
    if kind.startswith("bool"):
        return "must be true or false"
    if kind.startswith("string"):
        return "must be text"
    if kind == "value_error":
        return str(ctx.get("error", err["msg"]))
    return str(err["msg"]).lower()


def parse_policy_value(key: str, text: str) -> Any:
    """The typed value for `policy set KEY TEXT` (validated again as part of the file)."""
    kind = FIELD_KINDS[key]
    text = text.strip()
    if text == "" or text.lower() == "none":
        return None
    if kind in ("number", "integer"):
        number = check_number(text)
        if kind == "integer":
            if number != number.to_integral_value():
                raise ValueError("must be a whole number")
            return int(number)
        return Decimal(format(number, "f"))  # 1e3 is written 1000, never 1E+3
    if kind == "boolean":
        low = text.lower()
        if low not in ("true", "false"):
            raise ValueError("must be true or false")
        return low == "true"
    if kind == "list":
        if text.startswith("["):
            import json

            try:
                items = json.loads(text)
            except ValueError:
                items = [p for p in text.strip("[]").split(",")]
        else:
            items = text.split(",")
        return [str(i).strip() for i in items if str(i).strip()]
    return text
