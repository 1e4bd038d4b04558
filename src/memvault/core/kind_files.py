"""The bullet file of each record kind, by the kind's name.

This is the part of the table of record kinds (`memvault.core.kinds`) that paths are made
of, kept apart so that path arithmetic (the layout, the quick search path) does not have
to import the record types. The kinds table takes its file names from here: adding a
kind is adding its row there and its file name here. Pure constants.
"""

from __future__ import annotations

BULLET_FILES = {"fact": "Memory.md", "lesson": "Lessons.md", "proposal": "Inbox.md"}
"""Kind name -> the file in a principal's home that holds records of that kind."""
