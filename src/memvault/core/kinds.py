"""Record kinds as data: the one table of the bullet files memvault keeps.

Every principal's home holds one bullet file per kind of record: facts (Memory.md),
lessons (Lessons.md) and proposals (Inbox.md). Everything that differs between them is a
row of `KINDS`, and the rest of memvault reads the table instead of spelling file names:
the layout (`Layout.path`), `memvault init`, the search index scan, the merge driver and
the git attributes it is registered under, sync, the safety net, `doctor`, `tidy`, export
and import, the watcher and the MCP server's record lookup. Adding a kind is adding a row
(docs/architecture.md, "Adding a record kind").

Pure data; no I/O.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Literal

from memvault.core.kind_files import BULLET_FILES
from memvault.core.records import (
    FACT_CATEGORIES,
    INBOX_CATEGORIES,
    LESSON_CATEGORIES,
    Fact,
    Lesson,
    Proposal,
    Record,
)

MergeRule = Literal["record-by-record"]
"""How git merges the file: `record-by-record` is the fact-by-fact merge of
`core/merge.py` (through the merge driver, or settled after a plain union merge)."""

MEMORY_HEADER = (
    "# Memory\n"
    "\n"
    "Long-term facts about the user. Edit a line to correct it; delete a line to forget it.\n"
    "\n"
)
LESSONS_HEADER = (
    "# Lessons\n\n"
    "How the assistant should work with this user, accepted by the user. One bullet per\n"
    "lesson; `evidence:` names the journal events or trades it rests on.\n\n"
)
INBOX_HEADER = (
    "# Inbox\n\n"
    "Proposals waiting for your review. Tick a box (`- [x]`) to accept it, delete the line\n"
    "to reject it, or run `memvault review`. Nothing here is used until you accept it.\n\n"
)


@dataclass(frozen=True, slots=True)
class RecordKind:
    """One kind of record and the bullet file that holds it.

    - `name`: the kind (`fact`); also what a proposal's `kind:` metadata names;
    - `file_name`: the file in a principal's home (`Memory.md`);
    - `record_type`: the typed record a parsed bullet becomes (`Fact`);
    - `categories`: the categories it knows (others are kept and read as `other`);
    - `default_category`: for a new record given none, or None when one is required;
    - `header`: the first lines of the file when a write creates it (`memvault init`
      writes the template of the same name when the package has one);
    - `merge`: how git merges it (see `MergeRule`);
    - `index_kind`: the kind column of its records in the search index;
    - `context_section`: which part of the context block it feeds, or None;
    - `collection`: the name of the file's records as a whole (`memory`, `lessons`,
      `inbox`): an import plan's target and the MCP resource `memvault://<collection>`;
    - `description`: one line saying what the file holds (the MCP resource's);
    - `keeps_lost`: records that vanish without memvault removing them are kept by the
      safety net (not for the inbox, where deleting a line rejects the proposal);
    - `proposable`: a proposal may be accepted into it (`kind:<name>` in the inbox);
    - `inbox`: it is the review inbox (its task boxes are the user's decisions).
    """

    name: str
    file_name: str
    record_type: type[Record]
    categories: tuple[str, ...]
    default_category: str | None
    header: str
    merge: MergeRule = "record-by-record"
    index_kind: str = ""
    context_section: str | None = None
    collection: str = ""
    description: str = ""
    keeps_lost: bool = True
    proposable: bool = False
    inbox: bool = False

    def new_file(self) -> bytes:
        """The bytes a write creating this file starts from."""
        return self.header.encode()


FACT = RecordKind("fact", BULLET_FILES["fact"], Fact, FACT_CATEGORIES, "other", MEMORY_HEADER,
                  index_kind="fact", context_section="facts", collection="memory",
                  description="Accepted facts and preferences.", proposable=True)
LESSON = RecordKind("lesson", BULLET_FILES["lesson"], Lesson, LESSON_CATEGORIES, None,
                    LESSONS_HEADER, index_kind="lesson", context_section="lessons",
                    collection="lessons", description="Accepted workflow lessons.",
                    proposable=True)
PROPOSAL = RecordKind("proposal", BULLET_FILES["proposal"], Proposal, INBOX_CATEGORIES,
                      "other", INBOX_HEADER, index_kind="proposal", collection="inbox",
                      description="Proposals waiting for the user's review.",
                      keeps_lost=False, inbox=True)

KINDS: dict[str, RecordKind] = {k.name: k for k in (FACT, LESSON, PROPOSAL)}
"""Every record kind, in the order files are listed, merged and searched."""


def all_kinds() -> tuple[RecordKind, ...]:
    return tuple(KINDS.values())


def kind_named(name: str) -> RecordKind:
    """The kind called `name` (KeyError for an unknown one)."""
    return KINDS[name]


def kind_of_file(file_name: str) -> RecordKind | None:
    """The kind whose bullet file is called `file_name` (a bare name), or None."""
    for kind in KINDS.values():
        if kind.file_name == file_name:
            return kind
    return None


def file_names() -> tuple[str, ...]:
    """The bullet file names of every kind (Memory.md, Lessons.md, Inbox.md)."""
    return tuple(k.file_name for k in KINDS.values())


def proposable_kinds() -> tuple[str, ...]:
    """The kinds a proposal may become when accepted (fact, lesson)."""
    return tuple(k.name for k in KINDS.values() if k.proposable)


@contextmanager
def registered(kind: RecordKind) -> Iterator[RecordKind]:
    """Add `kind` to the table for the duration of a block (tests and plug-ins that
    try a kind out); the table is as it was afterwards."""
    if kind.name in KINDS or kind_of_file(kind.file_name) is not None:
        raise ValueError(f"a record kind named {kind.name!r} or stored in "
                         f"{kind.file_name!r} already exists")
    KINDS[kind.name] = kind
    try:
        yield kind
    finally:
        del KINDS[kind.name]
