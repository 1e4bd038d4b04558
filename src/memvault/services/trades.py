"""Recording validated trades, and reading trades and journal days back.

`record(objects)` validates every object first (any invalid one: nothing is written),
then, under the backend lock, writes as ONE `backend.commit` (all files or none):
`Trades/<hash>.md`, `Reflections/<hash>.md`, the appended lines of each
`Journal/<date>.md` and `.memvault/events.jsonl` with one `trade` event per new trade
(its id is the hash, made this principal's own: `journal.principal_event_id`, so the same
hash recorded by two principals is two events). Dates follow the trade's time in the
Profile.md time zone (UTC when unset).

Idempotent: a hash already in the journal (or whose note matches) is "already
recorded" and nothing changes; the same hash with different data is a Conflict. After
new trades are recorded and `learning = true`, inference runs (see services/learning).

This service never writes Policy.md, Memory.md or any limit.
"""

from __future__ import annotations

import datetime as _dt
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memvault.backends.base import MISSING, Change
from memvault.core.frontmatter import parse_frontmatter
from memvault.errors import Conflict, InvalidInput, NotFound, ReadOnly
from memvault.services.journal import principal_event_id, scan_events
from memvault.services.one_commit import one_commit
from memvault.services.settle import read_settled_file
from memvault.state_paths import EVENTS

if TYPE_CHECKING:
    from memvault.services.vault import Vault


@dataclass(slots=True)
class RecordResult:
    hash: str
    status: str  # "recorded" | "already recorded"
    paths: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"hash": self.hash, "status": self.status, "paths": self.paths}


@dataclass(slots=True)
class RecordReport:
    results: list[RecordResult]
    learned: list[dict[str, Any]] = field(default_factory=list)
    learn_error: str | None = None

    @property
    def recorded(self) -> int:
        return sum(r.status == "recorded" for r in self.results)

    def to_dict(self) -> dict[str, Any]:
        return {"recorded": self.recorded,
                "already_recorded": len(self.results) - self.recorded,
                "trades": [r.to_dict() for r in self.results],
                "proposals": self.learned, "learn_error": self.learn_error}


def _tz_name(tz: _dt.tzinfo) -> str:
    return getattr(tz, "key", None) or "UTC"


class TradeService:
    def __init__(self, vault: Vault) -> None:
        self.vault = vault
        self.backend = vault.backend
        self.layout = vault.layout

    def trade_path(self, h: str) -> str:
        return f"{self.layout.trades_dir}/{h}.md"

    def reflection_path(self, h: str) -> str:
        return f"{self.layout.reflections_dir}/{h}.md"

    def journal_path(self, day: str) -> str:
        return f"{self.layout.journal_dir}/{day}.md"

    # -- recording ---------------------------------------------------------------------

    def record_text(self, text: str, source: str = "input", *,
                    learn: bool = True) -> RecordReport:
        from memvault.core.trades import parse_trade_batch

        return self.record(parse_trade_batch(text, source), learn=learn)

    @one_commit("memvault: record trades")
    def record(self, objects: list[Any], *, learn: bool = True) -> RecordReport:
        from memvault.core.trades import canonical, fingerprint, validate_trade

        if not objects:
            raise InvalidInput("no trade given")
        many = len(objects) > 1
        batch: dict[str, dict[str, Any]] = {}
        for n, obj in enumerate(objects, 1):
            where = f"trade {n} of {len(objects)}" if many else "trade"
            data = canonical(validate_trade(obj, where))
            other = batch.get(data["hash"])  # type: ignore[arg-type]
            if other is not None and other != data:
                raise Conflict(f"{where}: hash {data['hash']} appears twice with different "
                               "data; nothing was written")
            batch[str(data["hash"])] = data
        tz = self.vault.profile.timezone()
        with self.backend.lock():
            results = self._commit(batch, tz, canonical_fp=fingerprint)
        report = RecordReport(results)
        if learn and report.recorded and self.vault.config.learning:
            from memvault.errors import VaultError

            try:
                report.learned = [r.to_dict() for r in self.vault.learning.run()
                                  if r.status == "proposed"]
            except VaultError as exc:  # learning never undoes a recorded trade
                report.learn_error = str(exc)
        return report

    def _commit(self, batch: dict[str, dict[str, Any]], tz: _dt.tzinfo,
                canonical_fp: Any) -> list[RecordResult]:
        from memvault.core.trade_notes import (
            append_journal_lines,
            journal_day_note,
            journal_line,
            reflection_note,
            trade_note,
        )

        events_blob = self.backend.read(EVENTS)
        # Only this principal's trades: another principal's journal is never compared
        # with (or quoted in an error), so the same hash is simply recorded again here.
        known = _trade_events(events_blob.data if events_blob else b"", self.layout.scope_name)
        results: list[RecordResult] = []
        new: list[tuple[dict[str, Any], _dt.datetime]] = []
        for h, data in batch.items():
            fp = canonical_fp(data)
            if h in known:
                if known[h].get("fingerprint") != fp:
                    raise Conflict(_difference(h, known[h].get("trade") or {}, data))
                results.append(RecordResult(h, "already recorded"))
                continue
            existing = self.backend.read(self.trade_path(h))
            if existing is not None:
                diff = _note_difference(existing.data, data)
                if diff:
                    raise Conflict(f"{self.trade_path(h)} already exists with different data "
                                   f"({diff}); nothing was written")
                results.append(RecordResult(h, "already recorded"))
                continue
            ts = _dt.datetime.fromisoformat(str(data["timestamp"]).replace("Z", "+00:00"))
            new.append((data, ts.astimezone(tz)))
        if not new:
            return results
        tz_name = _tz_name(tz)
        changes: list[Change] = []
        by_day: dict[str, list[tuple[dict[str, Any], _dt.datetime]]] = {}
        event_lines: list[bytes] = []
        for data, local in sorted(new, key=lambda p: (p[1], p[0]["hash"])):
            h = str(data["hash"])
            changes.append(Change(self.trade_path(h),
                                  trade_note(data, local, tz_name).encode(), MISSING))
            changes.append(Change(self.reflection_path(h),
                                  reflection_note(data, local, tz_name).encode(), MISSING))
            by_day.setdefault(local.date().isoformat(), []).append((data, local))
            when = _dt.datetime.fromisoformat(str(data["timestamp"]).replace("Z", "+00:00"))
            event = {"id": principal_event_id(h, self.layout.scope_name),
                     "ts": int(when.timestamp()), "type": "trade",
                     "scope": self.layout.scope_name, "date": local.date().isoformat(),
                     "fingerprint": canonical_fp(data), "trade": data}
            event_lines.append((json.dumps(event, ensure_ascii=False, separators=(",", ":"))
                                + "\n").encode())
            results.append(RecordResult(h, "recorded", [self.trade_path(h),
                                                         self.reflection_path(h)]))
        changes += self._subject_notes([d for d, _ in new])
        for day, items in by_day.items():
            path = self.journal_path(day)
            blob = read_settled_file(self.backend, path)  # the day note, not a save mid-way
            base = blob.data if blob else journal_day_note(items[0][1].date()).encode()
            lines = [journal_line(d, local) for d, local in items
                     if f"[[Trades/{d['hash']}".encode() not in base]
            try:
                day_note = append_journal_lines(base, lines)
            except ReadOnly as exc:
                raise ReadOnly(f"{exc}; nothing was written", path=path) from None
            changes.append(Change(path, day_note, blob.version if blob else MISSING))
            for r in results:
                if r.status == "recorded" and any(d["hash"] == r.hash for d, _ in items):
                    r.paths.append(path)
        old = events_blob.data if events_blob else b""
        if old and not old.endswith(b"\n"):
            old += b"\n"  # a torn last line stays on its own line
        changes.append(Change(EVENTS, old + b"".join(event_lines),
                              events_blob.version if events_blob else MISSING))
        self.backend.commit(changes, message=f"memvault: record {len(new)} trade(s)")
        return results

    def _subject_notes(self, trades: list[dict[str, Any]]) -> list[Change]:
        """Token and venue notes the new trades link to and that do not exist yet (so
        every link in a trade note resolves)."""
        from memvault.core.trade_notes import subject_note, token_slug, venue_slug

        wanted: dict[str, tuple[str, str]] = {}
        for t in trades:
            for symbol in (t["asset_in"], t["asset_out"]):
                wanted.setdefault(f"{self.layout.tokens_dir}/{token_slug(symbol)}.md",
                                  ("token", symbol))
            wanted.setdefault(f"{self.layout.venues_dir}/{venue_slug(t['venue'])}.md",
                              ("venue", t["venue"]))
        return [Change(path, subject_note(kind, name).encode(), MISSING)
                for path, (kind, name) in wanted.items() if self.backend.read(path) is None]

    # -- reading -----------------------------------------------------------------------

    def resolve(self, hash_or_prefix: str) -> str:
        """A full hash from a hash or a unique prefix (at least 6 characters)."""
        from memvault.core.trades import HASH_RE

        want = hash_or_prefix.strip().lower()
        if not want or any(c in want for c in "/\\.") or not HASH_RE.match(
                want.ljust(10, "0")[:130]):
            raise InvalidInput(f"{hash_or_prefix!r} is not a transaction hash")
        if self.backend.read(self.trade_path(want)) is not None:
            return want
        if len(want) < 6:
            raise NotFound(f"no trade {hash_or_prefix!r}")
        hits = [p.rsplit("/", 1)[-1][:-3] for p in self.backend.list(self.layout.trades_dir)
                if p.rsplit("/", 1)[-1].startswith(want) and p.endswith(".md")]
        if len(hits) != 1:
            raise NotFound(f"no trade {hash_or_prefix!r}" if not hits else
                           f"{hash_or_prefix!r} matches {len(hits)} trades; give more digits")
        return hits[0]

    def show(self, hash_or_prefix: str) -> dict[str, Any]:
        h = self.resolve(hash_or_prefix)
        path = self.trade_path(h)
        blob = self.backend.read(path)
        assert blob is not None
        fm = parse_frontmatter(blob.data)
        return {"hash": h, "path": path, "properties": fm.values,
                "readonly_reason": fm.readonly_reason, "body": fm.body_text()}

    def list(self, since: str | None = None) -> list[dict[str, Any]]:
        """Trades from the Trades/ notes (the truth), oldest first; `since` a date."""
        if since is not None:
            try:
                _dt.date.fromisoformat(since)
            except ValueError:
                raise InvalidInput(f"--since {since!r} is not a YYYY-MM-DD date") from None
        out = []
        for path in self.backend.list(self.layout.trades_dir):
            if not path.endswith(".md"):
                continue
            blob = self.backend.read(path)
            if blob is None:
                continue
            values = parse_frontmatter(blob.data).values
            day = str(values.get("date") or "")
            if since and day < since:
                continue
            out.append({"hash": values.get("hash") or path.rsplit("/", 1)[-1][:-3],
                        "path": path, "date": day, "timestamp": values.get("timestamp"),
                        "network": values.get("network"), "venue": values.get("venue"),
                        "asset_in": values.get("asset_in"), "amount_in": values.get("amount_in"),
                        "asset_out": values.get("asset_out"),
                        "amount_out": values.get("amount_out")})
        return sorted(out, key=lambda t: (str(t["timestamp"]), str(t["hash"])))

    def journal_day(self, day: str | None = None) -> dict[str, Any]:
        if day is None:
            day = _dt.datetime.now(self.vault.profile.timezone()).date().isoformat()
        try:
            _dt.date.fromisoformat(day)
        except ValueError:
            raise InvalidInput(f"{day!r} is not a YYYY-MM-DD date") from None
        path = self.journal_path(day)
        blob = self.backend.read(path)
        if blob is None:
            return {"date": day, "path": path, "exists": False, "trades": [], "text": ""}
        text = blob.data.decode("utf-8", errors="replace")
        trades = [ln for ln in text.split("\n") if "[[Trades/" in ln]
        return {"date": day, "path": path, "exists": True,
                "trades": [ln.split("[[Trades/", 1)[1].split("|")[0].split("]]")[0]
                           for ln in trades],
                "text": parse_frontmatter(blob.data).body_text()}


def _trade_events(data: bytes, scope: str) -> dict[str, dict[str, Any]]:
    """This principal's trade events by trade hash (whatever form their id has)."""
    out: dict[str, dict[str, Any]] = {}
    for ev in scan_events(data, ("trade",), scope=scope):
        trade = ev.get("trade")
        if ev.get("type") == "trade" and isinstance(trade, dict) and trade.get("hash"):
            out.setdefault(str(trade["hash"]), ev)
    return out


def _difference(h: str, old: dict[str, Any], new: dict[str, Any]) -> str:
    fields = [k for k in sorted(set(old) | set(new)) if old.get(k) != new.get(k)]
    shown = ", ".join(f"{k}: {old.get(k)!r} -> {new.get(k)!r}" for k in fields[:3])
    return (f"trade {h} was already recorded with different data ({shown or 'fingerprint'}); "
            "nothing was written")


def _note_difference(note: bytes, data: dict[str, Any]) -> str:
    from memvault.core.trade_notes import UNAVAILABLE

    values = parse_frontmatter(note).values
    for key, value in data.items():
        written = values.get(key)
        expected = UNAVAILABLE if value is None and key not in ("gas_asset", "fee_asset") \
            else value
        if written != expected and not (expected is None and written is None):
            return f"{key}: {written!r} in the note, {value!r} now"
    return ""
