"""The optional LLM extractor: any OpenAI-compatible chat endpoint (Ollama, LM Studio, a
hosted API), configured in the `[extractor]` table of `.memvault/config.toml`::

    [extractor]
    kind = "llm"                      # "builtin" (default) or "llm"
    base_url = "http://127.0.0.1:11434/v1"
    model = "llama3.1"
    api_key_env = "MEMVAULT_LLM_API_KEY"   # the NAME of an environment variable
    timeout = 20                      # seconds
    fallback = "none"                 # or "builtin": use the built-in rules on failure

It sends one strict prompt asking for 0-3 durable facts as a JSON array and validates the
answer: invalid JSON, a non-list, more than 3 items, or items that are not strings /
`{"text", "category"}` objects make the whole answer invalid (`ExtractorFailed`); single
items that fail the built-in one-off/question/hypothetical filter or the record rules
are dropped. The API key is read from the environment only, sent only in the
Authorization header, and never appears in a message or an exception: this module
must never log, print or store it.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from typing import Any

from memvault.core.extractor import Candidate, categorise, is_durable_text
from memvault.core.records import FACT_CATEGORIES, check_record_text
from memvault.errors import InvalidInput
from memvault.state_paths import CONFIG

DEFAULT_KEY_ENV = "MEMVAULT_LLM_API_KEY"
DEFAULT_TIMEOUT = 20.0
MAX_ITEMS = 3

SYSTEM_PROMPT = (
    "You extract durable facts about the user from one chat turn. A durable fact is true "
    "across future conversations: a preference, an identity trait, a long-lived project "
    "detail, or a standing instruction, stated by the user about themselves. Do NOT "
    "capture one-off requests (\"this time\", \"for now\", \"right now\", \"in this chat\"), "
    "questions, hypotheticals, facts about other people, or the task of this turn. Keep "
    "the user's own words; only trim. Extract 0 to 3 facts. Respond with ONLY a JSON "
    "array, no prose, each item {\"text\": \"...\", \"category\": one of identity, "
    "preference, project, instruction, communication, presentation, workflow, research}. "
    "If there is nothing durable, respond with []."
)


class ExtractorFailed(Exception):
    """The LLM extractor could not produce a valid answer (message is key-free)."""


@dataclass(frozen=True, slots=True)
class LlmSettings:
    base_url: str
    model: str
    api_key_env: str = DEFAULT_KEY_ENV
    timeout: float = DEFAULT_TIMEOUT
    fallback: str = "none"


def settings_from_config(table: dict[str, Any]) -> LlmSettings:
    """Validate the `[extractor]` table for kind = "llm"."""
    base_url = table.get("base_url")
    model = table.get("model")
    where = CONFIG
    if not isinstance(base_url, str) or not re.match(r"https?://", base_url):
        raise InvalidInput("[extractor] base_url must be an http(s) URL", path=where)
    if not isinstance(model, str) or not model.strip():
        raise InvalidInput("[extractor] model must be a non-empty string", path=where)
    key_env = table.get("api_key_env", DEFAULT_KEY_ENV)
    if not isinstance(key_env, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key_env):
        raise InvalidInput("[extractor] api_key_env must be the name of an environment "
                           "variable (the key itself never goes in the config)", path=where)
    timeout = table.get("timeout", DEFAULT_TIMEOUT)
    if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or timeout <= 0:
        raise InvalidInput("[extractor] timeout must be a positive number of seconds",
                           path=where)
    fallback = table.get("fallback", "none")
    if fallback not in ("none", "builtin"):
        raise InvalidInput('[extractor] fallback must be "none" or "builtin"', path=where)
    return LlmSettings(base_url.rstrip("/"), model, key_env, float(timeout), fallback)


def _scrub(message: str, key: str | None) -> str:
    return message.replace(key, "***") if key else message


def call_llm(settings: LlmSettings, user_text: str) -> str:
    """POST one chat completion; returns the assistant's content. Key-free errors."""
    import urllib.error
    import urllib.request

    key = os.environ.get(settings.api_key_env) or None
    body = json.dumps({
        "model": settings.model,
        "temperature": 0,
        "messages": [{"role": "system", "content": SYSTEM_PROMPT},
                     {"role": "user", "content": "Chat turn (the user's words):\n" + user_text}],
    }).encode("utf-8")
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    url = settings.base_url + "/chat/completions"
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=settings.timeout) as resp:  # noqa: S310
            raw = resp.read(1_000_000)
    except urllib.error.HTTPError as exc:
        raise ExtractorFailed(f"the endpoint answered HTTP {exc.code}") from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise ExtractorFailed(_scrub(f"could not reach {url}: {reason}", key)) from None
    try:
        payload = json.loads(raw)
        content = payload["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError):
        raise ExtractorFailed("the endpoint's answer is not an OpenAI-style chat "
                              "completion") from None
    if not isinstance(content, str):
        raise ExtractorFailed("the completion has no text content")
    return content


def parse_answer(content: str) -> list[Candidate]:
    """Validate the model's answer (see module doc)."""
    text = content.strip()
    fence = re.match(r"^```(?:json)?\s*(.*?)\s*```$", text, re.S)
    if fence:
        text = fence.group(1)
    try:
        data = json.loads(text)
    except ValueError:
        raise ExtractorFailed("the model's answer is not valid JSON") from None
    if isinstance(data, dict) and isinstance(data.get("facts"), list):
        data = data["facts"]
    if not isinstance(data, list):
        raise ExtractorFailed("the model's answer is not a JSON array")
    if len(data) > MAX_ITEMS:
        raise ExtractorFailed(f"the model returned {len(data)} items (at most {MAX_ITEMS})")
    out: list[Candidate] = []
    for item in data:
        if isinstance(item, str):
            raw_text, raw_cat = item, None
        elif isinstance(item, dict) and isinstance(item.get("text", item.get("content")), str):
            raw_text = str(item.get("text", item.get("content")))
            raw_cat = item.get("category")
        else:
            raise ExtractorFailed("an item of the model's answer is not a fact")
        try:
            clean = check_record_text(str(raw_text))
        except InvalidInput:
            continue
        if len(clean) > 300 or not is_durable_text(clean):
            continue  # one-off, question, hypothetical or hedge: dropped
        cat = raw_cat.strip().lower() if isinstance(raw_cat, str) else ""
        if cat not in FACT_CATEGORIES:
            cat = categorise(clean, "preference")
        out.append(Candidate(text=clean, category=cat, kind="llm"))
    return out


def llm_extract(settings: LlmSettings, user_text: str) -> list[Candidate]:
    return parse_answer(call_llm(settings, user_text))
