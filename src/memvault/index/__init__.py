"""The search index: `.memvault/index.sqlite`, a disposable cache of the vault's notes.

- `schema` — the tables, created and upgraded by ordered, named migration functions.
- `text` — preparing text for the FTS5 tokenizer (scripts written without spaces).
- `store` — opening the file safely (WAL, busy timeout, corruption detection and
  rebuild) and refreshing it incrementally from the files on disk.
- `query` — turning a user's query into FTS5 syntax, BM25 ranking, fuzzy fallback;
  `hits` — what a search returns.
- `walk` — which files the index covers, and one signature of them; `fresh` — reading
  the index as it is when that signature shows nothing changed (the quick search path).

The index never writes to a note, and deleting it loses nothing: it is rebuilt from the
Markdown files on the next search.
"""
