"""Tool argument types for the MCP server, with the aliases LLM clients tend to send.

The JSON schema a client sees names one argument (`query`, `id`, `limit`, ...); the
server also accepts the harmless synonyms models often use instead (`q`, `fact_id`, `k`,
...). Aliases are only ever synonyms of the same argument, never a way to reach a
different operation. Numbers are clamped to sane ranges rather than refused.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AliasChoices, Field


def _alias(*names: str) -> AliasChoices:
    return AliasChoices(*names)


Query = Annotated[str, Field(validation_alias=_alias("query", "q", "text", "search", "keywords"),
                             description="What to look for (words, a name, a tag).")]
Request = Annotated[str, Field(validation_alias=_alias("request", "query", "q", "prompt",
                                                       "message", "task"),
                               description="The user's current request; overrides such as "
                                           "'full detail this time' are read from it.")]
RecordId = Annotated[str, Field(validation_alias=_alias("id", "fact_id", "memory_id", "record_id",
                                                        "proposal_id"),
                                description="The record id (the `id:` in its line).")]
Text = Annotated[str, Field(validation_alias=_alias("text", "content", "fact", "memory",
                                                    "statement", "lesson"),
                            description="One line of text.")]
OptionalText = Annotated[str | None, Field(validation_alias=_alias("text", "content", "fact",
                                                                   "memory", "statement"),
                                           description="Corrected text (omit to keep it).")]
Category = Annotated[str | None, Field(validation_alias=_alias("category", "cat", "type"),
                                       description="A category (omit for `other`).")]
Limit = Annotated[int, Field(validation_alias=_alias("limit", "k", "top_k", "n", "max_results",
                                                     "count"),
                             description="How many results at most.")]
Budget = Annotated[int | None, Field(validation_alias=_alias("budget", "max_chars", "chars",
                                                             "budget_chars"),
                                     description="Characters of personal memory (default "
                                                 "4000).")]
ManifestOffset = Annotated[int, Field(validation_alias=_alias("manifest_offset", "offset",
                                                                  "page_offset"),
                                      description="Where the manifest page starts (its "
                                                  "`manifest_next`).")]
NoPersonal = Annotated[bool, Field(validation_alias=_alias("no_personal", "skip_personal",
                                                           "without_memory"),
                                   description="Leave personal memory out of the block.")]
Evidence = Annotated[list[str] | str | None,
                     Field(validation_alias=_alias("evidence", "evidence_ids", "sources"),
                           description="Journal event ids or trade hashes the lesson rests on.")]

Trade = Annotated[dict[str, Any] | list[dict[str, Any]],
                  Field(validation_alias=_alias("trade", "trades", "execution", "executions"),
                        description="One validated execution as an object, or a list of them.")]


def clamp(value: int | None, low: int, high: int, default: int) -> int:
    if value is None:
        return default
    return max(low, min(high, int(value)))


def id_list(value: list[str] | str | None) -> list[str]:
    """Evidence given as a list, or as one comma/space separated string."""
    if value is None:
        return []
    items = value if isinstance(value, list) else value.replace(",", " ").split()
    return [str(v).strip() for v in items if str(v).strip()]
