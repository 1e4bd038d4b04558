"""Extraction: one chat turn -> 0-3 proposals, saved facts, or nothing.

What happens to the durable statements found depends on the vault's controls:

- `learning = false` or `capture = "manual"`: nothing is extracted or written;
- `capture = "ask"` (default): at most 3 proposals go to Inbox.md (deduped; a text that
  was rejected or forgotten is never proposed again);
- `capture = "silent"` (opt-in): at most 3 facts are saved to Memory.md at once, marked
  `auth:inferred status:trial review:skipped`; forgotten texts are skipped.

The extractor is the built-in rules (default) or an LLM (`[extractor] kind = "llm"`).
An LLM failure is never fatal: the result carries a key-free `error` and nothing is
written, unless `fallback = "builtin"`. A turn whose user words exceed
`MAX_TURN_CHARS` is refused before any extractor runs, and every candidate passes the
same text rule as `remember` (`check_record_text`). This service never writes Policy.md.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memvault.core.extractor import Candidate, extract_statements, user_words
from memvault.core.records import MAX_TEXT_CHARS
from memvault.errors import InvalidInput
from memvault.services.proposals import MAX_PER_TURN
from memvault.state_paths import CONFIG

if TYPE_CHECKING:
    from memvault.services.vault import Vault

MAX_TURN_CHARS = 100_000
"""The most user text one turn may hold for extraction (a long chat message is a few
thousand characters); a larger turn is refused in one line, nothing extracted."""


@dataclass(slots=True)
class ExtractResult:
    mode: str
    extractor: str
    candidates: list[Candidate] = field(default_factory=list)
    outcomes: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None
    used_fallback: bool = False

    @property
    def proposed(self) -> list[dict[str, Any]]:
        return [o for o in self.outcomes if o["status"] in ("proposed", "saved")]

    def to_dict(self) -> dict[str, Any]:
        return {"mode": self.mode, "extractor": self.extractor,
                "found": [{"text": c.text, "category": c.category} for c in self.candidates],
                "outcomes": self.outcomes, "error": self.error,
                "used_fallback": self.used_fallback}


def parse_turn(data: bytes, source: str = "input") -> object:
    """Bytes from a file or stdin -> a turn (JSON object/list, or plain text)."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InvalidInput("the chat turn is not valid UTF-8", path=source) from None
    stripped = text.strip()
    if stripped[:1] in ("{", "["):
        try:
            turn = json.loads(stripped)
        except ValueError as exc:
            raise InvalidInput(f"looks like JSON but is not valid: {exc}", path=source) from None
        if isinstance(turn, dict) and not ("user" in turn or "messages" in turn):
            raise InvalidInput('a JSON turn needs a "user" key (or "messages")', path=source)
        return turn
    return text


class ExtractionService:
    def __init__(self, vault: Vault) -> None:
        self.vault = vault

    def _table(self) -> dict[str, Any]:
        return self.vault.config.section("extractor")

    def extractor_kind(self) -> str:
        kind = self._table().get("kind", "builtin")
        if kind not in ("builtin", "llm"):
            raise InvalidInput('[extractor] kind must be "builtin" or "llm"',
                               path=CONFIG)
        return str(kind)

    def find(self, turn: object) -> tuple[list[Candidate], str | None, bool]:
        """Candidates in a turn: (candidates, key-free error, used fallback)."""
        words = user_words(turn)
        if not words.strip():
            return [], None, False
        if len(words) > MAX_TURN_CHARS:
            raise InvalidInput(f"the user's words in this turn are {len(words):,} characters; "
                               f"extraction reads at most {MAX_TURN_CHARS:,} (one fact is at "
                               f"most {MAX_TEXT_CHARS:,}); nothing was extracted")
        if self.extractor_kind() == "builtin":
            return extract_statements(words), None, False
        from memvault.services.llm_extractor import (
            ExtractorFailed,
            llm_extract,
            settings_from_config,
        )

        settings = settings_from_config(self._table())
        try:
            return llm_extract(settings, words), None, False
        except ExtractorFailed as exc:
            if settings.fallback == "builtin":
                return extract_statements(words), str(exc), True
            return [], str(exc), False

    def extract(self, turn: object) -> ExtractResult:
        cfg = self.vault.config
        kind = self.extractor_kind()
        if not cfg.learning:
            return ExtractResult("learning-off", kind)
        if cfg.capture == "manual":
            return ExtractResult("manual", kind)
        found, error, fell_back = self.find(turn)
        candidates, refused = _valid(found)
        result = ExtractResult(cfg.capture, kind, candidates, error=error,
                               used_fallback=fell_back)
        result.outcomes.extend(refused)
        if cfg.capture == "ask":
            pairs = [(c.text, c.category) for c in candidates]
            for res in self.vault.proposals.propose_many(pairs, source="chat"):
                result.outcomes.append({"status": res.status, "text": res.text,
                                        "id": res.proposal.id if res.proposal else
                                        res.existing_id})
        else:
            result.outcomes.extend(self._save_silently(candidates))
        return result

    def _save_silently(self, candidates: list[Candidate]) -> list[dict[str, Any]]:
        outcomes: list[dict[str, Any]] = []
        saved = 0
        for c in candidates:
            if saved >= MAX_PER_TURN:
                outcomes.append({"status": "over-limit", "text": c.text, "id": None})
                continue
            if self.vault.tombstones.is_tombstoned(c.text):
                outcomes.append({"status": "tombstoned", "text": c.text, "id": None})
                continue
            res = self.vault.memory.remember(
                c.text, c.category, source="chat",
                extra_meta={"auth": "inferred", "status": "trial", "review": "skipped"})
            saved += res.created
            outcomes.append({"status": "saved" if res.created else "duplicate",
                             "text": c.text, "id": res.fact.id})
        return outcomes


def _valid(candidates: list[Candidate]) -> tuple[list[Candidate], list[dict[str, Any]]]:
    """Candidates that pass the text rule, and an outcome for each one that does not
    (too long, Markdown structure, …): it is neither proposed nor saved."""
    from memvault.core.records import check_record_text

    ok: list[Candidate] = []
    refused: list[dict[str, Any]] = []
    for c in candidates:
        try:
            check_record_text(c.text)
        except InvalidInput as exc:
            refused.append({"status": "refused", "text": c.text[:200], "id": None,
                            "reason": str(exc)})
            continue
        ok.append(c)
    return ok, refused
