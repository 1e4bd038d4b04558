"""Text embeddings for semantic recall: the built-in offline model, optional ones, an endpoint.

- `minilm` — the default (`kind = "builtin"`): all-MiniLM-L6-v2, a six-layer sentence
  transformer whose int8 weights ship inside memvault (`embeddings/data/`), run in
  numpy: no network, no account, no GPU, no PyTorch.
- `static` — optional (`pip install 'memvault[static]'`): wordllama's static model, a
  table of token vectors averaged; embeds a large memory far faster, understands less.
- `e5` — optional (`pip install 'memvault[e5]'`): multilingual-e5-small in a C engine.
- `endpoint` — any OpenAI-compatible `/v1/embeddings` endpoint, configured in the
  `[embeddings]` table of `.memvault/config.toml` (the key is read from the environment
  variable the table names, never from a file).
- `settings` — reading that table, and `embedder_for(config)`, which returns the
  configured embedder or None (semantic recall off, or the model could not be loaded:
  recall then stays lexical).

Nothing here is imported by a command that does not rank memory by meaning; the model
is loaded once per process, on first use. numpy's BLAS is kept to one thread (unless the
environment says otherwise): the products here are small, and spinning threads only
compete with the rest of the process on a busy machine.
"""

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
