"""Inference rules: which repeated facts in validated trades may become a *proposal*.

Pure functions over observations (one per validated trade event). Only familiarity with
assets and pairs is ever inferred ("Frequently trades ETH/USDC", "Often trades ETH").
Risk tolerance, profitability and venue preference are never inferred: no rule here
reads sizes, prices, slippage, outcomes or venues.

A subject (a pair, or one asset) becomes a candidate only when ALL hold:

- at least MIN_TRADES (3) distinct trades (distinct event ids; repeats are ignored);
- at least MIN_WINDOWS (3) separate time windows. Windows are anchored: sorted by time,
  a trade opens a new window when it is WINDOW_SECONDS (600 s = 10 minutes) or more after
  the trade that opened the current window; trades less than 10 minutes after that
  opener count once (9 minutes apart: one window; 10 or 11 minutes: two);
- spanning at least MIN_DAYS (2) calendar days (in the user's time zone).

Competing candidates: an asset whose trades are all trades of one qualifying pair is not
proposed on its own (the pair says it better). Conflicting candidates: a subject that an
existing memory or inbox text mentions with a negation ("no longer trades ETH") is not
proposed. Tombstoned and rejected texts are refused later by the proposal service.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

WINDOW_SECONDS = 600
MIN_TRADES = 3
MIN_WINDOWS = 3
MIN_DAYS = 2
MAX_EVIDENCE = 5
CATEGORY = "other"
_NEGATION = re.compile(r"\b(not|never|no longer|don'?t|do not|doesn'?t|stopped|avoid\w*|"
                       r"quit|won'?t|without)\b", re.I)


@dataclass(frozen=True, slots=True)
class Observation:
    """One validated trade: its id as evidence names it (the trade hash), Unix time,
    local day and the two assets."""

    event_id: str
    ts: int
    day: str
    asset_in: str
    asset_out: str


@dataclass(frozen=True, slots=True)
class Candidate:
    subject: str
    text: str
    evidence: tuple[str, ...]
    trades: int
    windows: int
    days: int
    category: str = CATEGORY


def count_windows(timestamps: Iterable[int]) -> int:
    windows = 0
    opener: int | None = None
    for ts in sorted(timestamps):
        if opener is None or ts - opener >= WINDOW_SECONDS:
            windows += 1
            opener = ts
    return windows


def dedupe(observations: Iterable[Observation]) -> list[Observation]:
    seen: set[str] = set()
    out = []
    for ob in observations:
        if ob.event_id in seen:
            continue
        seen.add(ob.event_id)
        out.append(ob)
    return out


def _qualifies(obs: list[Observation]) -> tuple[int, int, int] | None:
    trades = len(obs)
    windows = count_windows(o.ts for o in obs)
    days = len({o.day for o in obs})
    if trades >= MIN_TRADES and windows >= MIN_WINDOWS and days >= MIN_DAYS:
        return trades, windows, days
    return None


def _symbol(text: str) -> str:
    return text.strip().upper()


def infer_candidates(observations: Iterable[Observation],
                     existing_texts: Iterable[str] = ()) -> list[Candidate]:
    """Candidates that pass every threshold and do not compete or conflict."""
    obs = dedupe(observations)
    pairs: dict[str, list[Observation]] = {}
    assets: dict[str, list[Observation]] = {}
    for o in obs:
        a, b = _symbol(o.asset_in), _symbol(o.asset_out)
        if a == b:
            continue
        pairs.setdefault("/".join(sorted((a, b))), []).append(o)
        for sym in (a, b):
            assets.setdefault(sym, []).append(o)
    out: list[Candidate] = []
    pair_sets: list[set[str]] = []
    for pair, group in sorted(pairs.items()):
        stats = _qualifies(group)
        if stats:
            out.append(_candidate(f"pair:{pair}", f"Frequently trades {pair}", group, stats))
            pair_sets.append({o.event_id for o in group})
    for sym, group in sorted(assets.items()):
        stats = _qualifies(group)
        if not stats:
            continue
        ids = {o.event_id for o in group}
        if any(ids <= p for p in pair_sets):
            continue  # competes with a pair candidate that covers all of its trades
        out.append(_candidate(f"asset:{sym}", f"Often trades {sym}", group, stats))
    texts = list(existing_texts)
    return [c for c in out if not conflicts(c, texts)]


def _candidate(subject: str, text: str, group: list[Observation],
               stats: tuple[int, int, int]) -> Candidate:
    recent = sorted(group, key=lambda o: (o.ts, o.event_id))[-MAX_EVIDENCE:]
    return Candidate(subject, text, tuple(o.event_id for o in recent), *stats)


def conflicts(candidate: Candidate, texts: Iterable[str]) -> bool:
    """True when an existing text negates the candidate's subject."""
    symbols = candidate.subject.split(":", 1)[1].split("/")
    for text in texts:
        if not _NEGATION.search(text):
            continue
        if all(re.search(rf"(?<![\w]){re.escape(s)}(?![\w])", text, re.I) for s in symbols):
            return True
    return False
