"""The notes a validated trade becomes: Trades/<hash>.md, Reflections/<hash>.md and one
line in Journal/<date>.md. Pure: canonical trade values in, text out.

Frontmatter is written with `memvault.core.frontmatter` (hashes, wallets and amounts
quoted, dates as YYYY-MM-DD). A metric the input lacks is written `unavailable` and the
prose says so; nothing is estimated or computed from other fields. Links to token and
venue notes use `safe_name` slugs, valid on every platform. Appending a journal line
inserts one line and leaves every existing byte of the day note as it was.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any

from memvault.core.frontmatter import Quoted, render_frontmatter
from memvault.core.lines import TextFile
from memvault.core.paths import safe_name
from memvault.errors import ReadOnly

UNAVAILABLE = "unavailable"
METRIC_LABELS = {"fill_price": "fill price", "value_usd": "value in USD", "gas": "gas",
                 "gas_usd": "gas in USD", "slippage_bps": "slippage", "fees": "fees"}


def short(hash_: str) -> str:
    return f"{hash_[:10]}…" if len(hash_) > 12 else hash_


def token_slug(symbol: str) -> str:
    return safe_name(symbol)


def venue_slug(venue: str) -> str:
    return safe_name(venue)


def subject_note(kind: str, name: str) -> str:
    """The note a `[[Tokens/…]]` or `[[Venues/…]]` link points to, created with the first
    trade that mentions it (kind: "token" or "venue"); the user's to extend."""
    what = "A token" if kind == "token" else "A venue"
    return (render_frontmatter([("tags", [kind])])
            + f"# {name}\n\n{what} in your recorded trades (created by `memvault trade "
              "record`). Each trade note links here, so Obsidian's backlinks list them; "
              "write your own notes below.\n")


def token_link(symbol: str) -> str:
    slug = safe_name(symbol)
    return f"[[Tokens/{slug}|{symbol}]]" if slug != symbol else f"[[Tokens/{slug}]]"


def venue_link(venue: str) -> str:
    slug = safe_name(venue)
    return f"[[Venues/{slug}|{venue}]]" if slug != venue else f"[[Venues/{slug}]]"


def unavailable_metrics(t: dict[str, Any]) -> list[str]:
    return [m for m in METRIC_LABELS if t.get(m) is None]


def _metric(t: dict[str, Any], name: str) -> str:
    value = t.get(name)
    if value is None:
        return UNAVAILABLE
    if name == "gas" and t.get("gas_asset"):
        return f"{value} {t['gas_asset']}"
    if name == "fees" and t.get("fee_asset"):
        return f"{value} {t['fee_asset']}"
    if name == "slippage_bps":
        return f"{value} bps"
    if name in ("value_usd", "gas_usd"):
        return f"{value} USD"
    return str(value)


def trade_note(t: dict[str, Any], local: _dt.datetime, tz_name: str) -> str:
    day = local.date().isoformat()
    pairs: list[tuple[str, Any]] = [
        ("hash", _q(t["hash"])), ("network", t["network"]), ("wallet", _q(t["wallet"])),
        ("timestamp", _q(t["timestamp"])), ("date", local.date()),
        ("local_time", local.replace(tzinfo=None)), ("timezone", tz_name),
        ("status", t["status"]), ("venue", t["venue"]),
        ("asset_in", t["asset_in"]), ("amount_in", _q(t["amount_in"])),
        ("asset_out", t["asset_out"]), ("amount_out", _q(t["amount_out"]))]
    for name in METRIC_LABELS:
        pairs.append((name, UNAVAILABLE if t.get(name) is None else _q(t[name])))
        if name == "gas" and t.get("gas_asset"):
            pairs.append(("gas_asset", t["gas_asset"]))
        if name == "fees" and t.get("fee_asset"):
            pairs.append(("fee_asset", t["fee_asset"]))
    pairs.append(("tags", ["trade"]))
    h = t["hash"]
    body = [
        f"# Trade {short(h)}", "",
        f"Swapped {t['amount_in']} {token_link(t['asset_in'])} for {t['amount_out']} "
        f"{token_link(t['asset_out'])} on {venue_link(t['venue'])} ({t['network']}) at "
        f"{local:%H:%M} ({tz_name}), from wallet `{t['wallet']}`. Status: {t['status']}.", "",
    ]
    body += [f"- {label[0].upper()}{label[1:]}: {_metric(t, name)}" for name, label in
             METRIC_LABELS.items()]
    missing = unavailable_metrics(t)
    if missing:
        body += ["", "Metrics marked unavailable were not reported with the trade; memvault "
                     "does not estimate or derive them."]
    body += ["", f"Day: [[Journal/{day}]] · Reflection: [[Reflections/{h}|reflection]]", ""]
    return render_frontmatter(pairs) + "\n".join(body)


def reflection_note(t: dict[str, Any], local: _dt.datetime, tz_name: str) -> str:
    day = local.date().isoformat()
    missing = unavailable_metrics(t)
    reported = [f"{METRIC_LABELS[m]} {_metric(t, m)}" for m in METRIC_LABELS if m not in missing]
    pairs: list[tuple[str, Any]] = [("trade", _q(t["hash"])), ("date", local.date()),
                                    ("unavailable", missing), ("tags", ["reflection"])]
    body = [
        f"# Reflection on {short(t['hash'])}", "",
        f"- What happened: {t['amount_in']} {t['asset_in']} → {t['amount_out']} "
        f"{t['asset_out']} on {t['venue']} ({t['network']}), validated at {local:%H:%M} "
        f"({tz_name}).",
        "- Reported: " + ("; ".join(reported) if reported else "no execution metrics") + ".",
    ]
    if missing:
        body.append("- Unavailable: " + ", ".join(METRIC_LABELS[m] for m in missing)
                    + ". They were not reported, so they are not estimated or derived.")
    else:
        body.append("- Every execution metric was reported.")
    body += ["", f"Trade: [[Trades/{t['hash']}|{short(t['hash'])}]] · Day: [[Journal/{day}]]",
             ""]
    return render_frontmatter(pairs) + "\n".join(body)


def journal_line(t: dict[str, Any], local: _dt.datetime) -> str:
    return (f"- {local:%H:%M} · {t['amount_in']} {t['asset_in']} → {t['amount_out']} "
            f"{t['asset_out']} on {t['venue']} ({t['network']}) · "
            f"[[Trades/{t['hash']}|{short(t['hash'])}]]")


def journal_day_note(day: _dt.date) -> str:
    return (render_frontmatter([("date", day), ("tags", ["journal"])])
            + f"# {day.isoformat()}\n\nValidated activity of the day, one line per trade "
              "(appended by `memvault trade record`; write your own notes anywhere).\n")


def append_journal_lines(existing: bytes, lines: list[str]) -> bytes:
    """Insert `lines` after the day note's last non-blank line; no other byte changes.

    A blank line is put first when that last line is prose (so the list stays a list).
    """
    tf = TextFile.parse(existing)
    if tf.readonly_reason:
        raise ReadOnly(f"cannot append to the day note: {tf.readonly_reason}")
    last = len(tf.lines) - 1
    while last >= 0 and not tf.lines[last].text.strip():
        last -= 1
    new = list(lines)
    if last >= 0:
        prev = tf.lines[last].text.lstrip()
        if not prev.startswith(("- ", "* ", "+ ")) and prev != "---":
            new = ["", *new]
    at = last
    for text in new:
        tf.insert_after(at, text)
        at += 1
    return tf.to_bytes()


def _q(text: str) -> Quoted:
    """Text that must always be quoted (ids, hashes, amounts) in frontmatter."""
    return Quoted(text)
