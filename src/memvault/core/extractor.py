"""The built-in extractor: explicit durable statements about the user, by pure rules.

`extract_statements(user_text)` splits the user's words into statements and keeps the
ones that are durable facts about the user: preferences ("I prefer…", "I like…"),
identity ("my name is…", "call me…", "I live in…"), projects ("I work on…", "my main
project is…") and standing instructions ("from now on…", "always…", "never…"). It
rejects one-off wording ("this time", "for now", "right now", "in this chat"…),
questions, hypotheticals ("if I were…", "would I…"), hedges, statements about other
people, quoted speech and requests about the current task.

Rewriting is trimming only: fillers before the statement ("Oh, and", "btw", "please
note that") and final punctuation are cut and the first letter is capitalised; the
user's words are never paraphrased. `is_durable_text` is the same filter for text that
came from elsewhere (the LLM extractor runs its answers through it).

Offline and deterministic; no I/O. This module must never call a model or the network.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memvault.core.extractor_rules import (  # noqa: F401
    _ANYWHERE_MARKER,
    _CONDITIONAL_LEAD,
    _DURABLE_LEAD,
    _FIRST_PERSON,
    _HYPOTHETICAL,
    _IMPERATIVE_START,
    _LEADING_FILLER,
    _MAIN_CLAUSE_OK,
    _NAME_ONLY,
    _ONE_OFF,
    _OTHER_PERSON_NOUNS,
    _PAST_OR_CHANGE,
    _QUESTION_START,
    _REMEMBER_THAT,
    _REPORTED,
    _SELF_NOUNS,
    _THIRD_PERSON_START,
    _TOPICS,
    _TRIGGERS,
)

MAX_STATEMENT_CHARS = 280


@dataclass(frozen=True, slots=True)
class Candidate:
    """One durable statement found in the user's words."""

    text: str
    category: str
    kind: str  # the trigger that matched: identity, project, preference, instruction


# -- splitting -------------------------------------------------------------------------------

_SENTENCE_END = re.compile(r"(?<=[.!?])[\"'”’)]*\s+|\n+|(?<=[.!?])$")
_BULLET = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+")
_CLAUSE_SPLIT = re.compile(
    r"\s*(?:;|,?\s+but\s+|,?\s+though\s+|,?\s+although\s+|,?\s+however,?\s+|"
    r",?\s+except\s+|,?\s+whereas\s+|,?\s+while\s+|\s+-{1,2}\s+|\s+—\s+)\s*", re.I)
_AND_SUBJECT = re.compile(r",?\s+and\s+(?=(?:i|i'm|i've|my|please|always|never|from now on)\b)",
                          re.I)
_COMMA_SUBJECT = re.compile(r",\s+(?=(?:i|i'm|i've|my)\b)", re.I)
_LABEL_PREFIX = re.compile(r"^[^:.!?]{1,30}:\s+(?=\S)")
_ABBREV = re.compile(r"\b(?:e\.g|i\.e|etc|vs|mr|mrs|ms|dr|approx|incl)\.", re.I)


def split_statements(text: str) -> list[str]:
    """Sentences of a user message, one list item or line each."""
    protected = _ABBREV.sub(lambda m: m.group(0).replace(".", "\x00"), text)
    out: list[str] = []
    for line in protected.splitlines():
        line = _BULLET.sub("", line)
        for piece in _SENTENCE_END.split(line):
            piece = piece.replace("\x00", ".").strip()
            if piece:
                out.append(piece)
    return out


# -- judging ---------------------------------------------------------------------------------


def _trim(statement: str) -> str:
    s = statement.strip().strip("\"'“”‘’ ")
    prev = None
    while prev != s:
        prev = s
        s = _REMEMBER_THAT.sub("", s)
        s = _LEADING_FILLER.sub("", s).strip()
    s = s.rstrip(" .!…,;:")
    if s and s[0].islower():
        s = s[0].upper() + s[1:]
    return s


def _strip_quotes(s: str) -> str:
    """The statement with quoted passages removed (quoted speech is not the user's)."""
    s = re.sub(r"\"[^\"]*\"|“[^”]*”|‘[^’]*’", " ", s)
    return re.sub(r"(?:(?<=\s)|^)'[^']*'(?=\W|$)", " ", s)


def _reject_reason(s: str) -> str | None:
    """Why a trimmed statement is not durable, or None."""
    if s.rstrip().endswith("?"):
        return "question"
    low = _strip_quotes(s).lower()
    if len(s) < 6 or len(s) > MAX_STATEMENT_CHARS or len(s.split()) < 2:
        return "length"
    if _QUESTION_START.match(s):
        return "question"
    if _ONE_OFF.search(low):
        return "one-off"
    if _HYPOTHETICAL.search(low):
        return "hypothetical"
    if _PAST_OR_CHANGE.search(low):
        return "past"
    unquoted = _strip_quotes(s)
    if unquoted != s and _REPORTED.search(unquoted):
        return "quoted"
    if _THIRD_PERSON_START.match(s):
        return "other-person"
    if _REPORTED.search(unquoted) and not re.match(r"^(?:i|my)\b", unquoted, re.I):
        return "reported"
    if re.search(r"\b(?:my|our) (?:\w+ )?(?:" + _OTHER_PERSON_NOUNS + r")(?:'s)? "
                 r"(?:prefers|likes|loves|hates|wants|needs|always|never|uses|works|lives|"
                 r"is|was|says|said|thinks)\b", low):
        return "other-person"
    if re.search(r"\b(?:he|she|they) (?:prefers?|likes?|loves?|hates?|wants?|always|never)\b",
                 low):
        return "other-person"
    return None


def _trigger(s: str) -> str | None:
    if _NAME_ONLY.match(s) and not s.lower().startswith(("this is", "it's")):
        return "identity"  # "Hi, I'm Leo."
    for pattern, kind in _TRIGGERS:
        if pattern.search(s):
            return kind
    return None


def categorise(text: str, kind: str) -> str:
    """The category for a durable statement found by trigger `kind`."""
    if kind in ("identity", "project"):
        return kind
    for category, pattern in _TOPICS:
        if pattern.search(text):
            return category
    return "instruction" if kind == "instruction" else "preference"


def _conditional_ok(s: str) -> bool:
    """"Whenever I paste a trace, start with the cause": the main clause must instruct."""
    if not _CONDITIONAL_LEAD.match(s):
        return True
    if "," not in s:
        return bool(_ANYWHERE_MARKER.search(s.split(" ", 1)[1]) and re.search(
            r"\b(?:please|always|never)\b", s, re.I))
    main = s.split(",", 1)[1].strip()
    return bool(_IMPERATIVE_START.match(main) or _MAIN_CLAUSE_OK.match(main))


def judge(statement: str) -> Candidate | None:
    """One statement -> a Candidate if it is a durable fact about the user."""
    s = _trim(statement)
    if not s or _reject_reason(s) or _ONE_OFF.search(statement):
        return None
    if "\n" in s or "<!--" in s or "-->" in s or "%%" in s:
        return None
    unquoted = _strip_quotes(s)
    rest = _DURABLE_LEAD.sub("", unquoted)
    if _THIRD_PERSON_START.match(rest) or not _conditional_ok(unquoted) or \
            len(rest.split()) < 2:
        return None
    kind = _trigger(unquoted)
    if kind is None and _ANYWHERE_MARKER.search(unquoted) and (
            _IMPERATIVE_START.match(unquoted) or
            re.match(r"^i (?:want|need|would like|'d like) you to\b", unquoted, re.I)):
        kind = "instruction"  # "Use Celsius, always", "Use US dates from here on"
    if kind is None:
        return None
    if kind != "instruction" and not _FIRST_PERSON.search(_strip_quotes(s)):
        return None
    return Candidate(text=s, category=categorise(s, kind), kind=kind)


def _clauses(sentence: str) -> list[str]:
    """Split a sentence into statements. Contrastive joints ("but", ";") isolate a
    one-off clause; a one-off marker elsewhere covers the whole contrastive part."""
    parts: list[str] = []
    for clause in _CLAUSE_SPLIT.split(sentence):
        if not clause or not clause.strip():
            continue
        if _ONE_OFF.search(clause):
            parts.append(clause)  # judged (and rejected) as a whole
            continue
        for piece in _AND_SUBJECT.split(clause):
            parts.extend(p for p in _COMMA_SUBJECT.split(piece) if p and p.strip())
    return parts


def _judge_sentence(sentence: str) -> list[Candidate]:
    """A sentence -> its durable statements (the whole, or its clauses)."""
    label = _LABEL_PREFIX.match(sentence)
    if label and not (_REPORTED.search(label.group(0)) or
                      _THIRD_PERSON_START.match(label.group(0)) or
                      sentence[label.end():][:1] in "\"'“‘"):
        sentence = sentence[label.end():]  # "Some context: I live in Oslo"
    whole = judge(sentence)
    if whole is not None and not _AND_SUBJECT.search(sentence):
        return [whole]
    if whole is None and _reject_reason(_trim(sentence)) is not None:
        # A past, hypothetical, reported... sentence: only a contrastive clause
        # ("..., but from now on ...") can still hold a durable statement.
        parts = [p for p in _CLAUSE_SPLIT.split(sentence) if p and p.strip()]
        if len(parts) < 2:
            return []
        return [c for c in (judge(p) for p in parts) if c is not None]
    found = [c for c in (judge(part) for part in _clauses(sentence)) if c is not None]
    if not found and whole is not None:
        return [whole]
    return found


def extract_statements(user_text: str) -> list[Candidate]:
    """Durable statements in a user's message, in order, without duplicates."""
    found: list[Candidate] = []
    seen: set[str] = set()
    for sentence in split_statements(user_text):
        for cand in _judge_sentence(sentence):
            key = " ".join(cand.text.casefold().split())
            if key not in seen:
                seen.add(key)
                found.append(cand)
    return found


def is_durable_text(text: str) -> bool:
    """For text from elsewhere (an LLM): no one-off, question, hypothetical or hedge."""
    s = _trim(text)
    reason = _reject_reason(s)
    return reason is None


# -- chat turns ------------------------------------------------------------------------------


def user_words(turn: object) -> str:
    """The user's words in a chat turn: `{"user": ..., "assistant": ...}`, a list of
    `{"role", "content"}` messages, or plain text. The assistant's words are ignored:
    only what the user said can become a fact about the user."""
    if isinstance(turn, str):
        return turn
    if isinstance(turn, dict):
        if "messages" in turn and isinstance(turn["messages"], list):
            return user_words(turn["messages"])
        value = turn.get("user", "")
        if isinstance(value, list):
            return user_words(value)
        return value if isinstance(value, str) else ""
    if isinstance(turn, list):
        parts = []
        for msg in turn:
            if isinstance(msg, dict) and msg.get("role") == "user":
                content = msg.get("content")
                if isinstance(content, list):  # OpenAI content parts
                    content = "\n".join(str(p.get("text", "")) for p in content
                                        if isinstance(p, dict))
                if isinstance(content, str):
                    parts.append(content)
        return "\n".join(parts)
    return ""
