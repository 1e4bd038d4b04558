"""The optional static model: wordllama's token vectors, loaded from its wheel.

`pip install 'memvault[static]'` and `kind = "static"` in `[embeddings]`. It embeds a
large memory the first time about a hundred times faster than the built-in transformer
(`minilm.py`), and understands far less (docs/recall.md has both measured).

A static model embeds a text as the average of its tokens' vectors (a table lookup),
then scales it to length 1, so cosine similarity is a dot product. The weights
(`l2_supercat_256.safetensors`, 32,000 tokens × 256 dimensions, float16) and the
tokenizer (`l2_supercat_tokenizer_config.json`, Llama 2's vocabulary) are read straight
from the installed `wordllama` package folder: its own loader is not used (it looks for
the tokenizer elsewhere and would try to download it), nor is the package imported.
"""

from __future__ import annotations

import importlib.util
import json
import threading
from pathlib import Path
from typing import Any

PACKAGE = "wordllama"
WEIGHTS = "weights/l2_supercat_256.safetensors"
TOKENIZER = "tokenizers/l2_supercat_tokenizer_config.json"
TENSOR = "embedding.weight"
MODEL_ID = "wordllama-l2-supercat-256"
MAX_TOKENS = 512
"""Tokens of one text that count (a fact is far shorter; a long note is cut)."""

_LOCK = threading.Lock()
_LOADED: dict[str, StaticModel] = {}
_PROBLEM: dict[str, str] = {}


class ModelMissing(Exception):
    """The static model's files are not installed."""


def package_folder() -> Path:
    """Where the wordllama package's files are, without importing it."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModelMissing(f"the {PACKAGE} package is not installed "
                           "(pip install 'memvault[static]')")
    return Path(next(iter(spec.submodule_search_locations)))


def read_safetensors(path: Path, name: str) -> Any:
    """One tensor of a .safetensors file as a read-only numpy array (memory-mapped)."""
    import numpy as np

    with open(path, "rb") as fh:
        header_len = int.from_bytes(fh.read(8), "little")
        header = json.loads(fh.read(header_len))
    info = header[name]
    dtype = {"F16": np.float16, "F32": np.float32}[info["dtype"]]
    start, end = info["data_offsets"]
    raw = np.memmap(path, dtype=np.uint8, mode="r", offset=8 + header_len + start,
                    shape=(end - start,))
    return raw.view(dtype).reshape(info["shape"])


class StaticModel:
    """Embeds texts as normalised averages of token vectors."""

    model_id = MODEL_ID

    def __init__(self, folder: Path) -> None:
        from tokenizers import Tokenizer

        weights, tokenizer = folder / WEIGHTS, folder / TOKENIZER
        if not weights.is_file() or not tokenizer.is_file():
            raise ModelMissing(f"{PACKAGE} is installed without its model files")
        self.table = read_safetensors(weights, TENSOR)
        self.tokenizer = Tokenizer.from_file(str(tokenizer))
        self.tokenizer.no_padding()
        self.tokenizer.no_truncation()
        self.dimensions = int(self.table.shape[1])

    def embed(self, texts: list[str]) -> Any:
        """A (len(texts), dimensions) float32 array of unit vectors (zeros for a text
        without tokens)."""
        import numpy as np

        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        if not texts:
            return out
        encoded = self.tokenizer.encode_batch(texts, add_special_tokens=False)
        limit = self.table.shape[0] - 1
        rows = [[i for i in enc.ids[:MAX_TOKENS] if 0 <= i <= limit] for enc in encoded]
        counts = np.fromiter((len(r) for r in rows), dtype=np.int64, count=len(rows))
        filled = np.flatnonzero(counts)
        if filled.size:
            ids = np.fromiter((i for r in rows for i in r), dtype=np.int64,
                              count=int(counts.sum()))
            starts = np.concatenate(([0], np.cumsum(counts[filled])[:-1]))
            sums = np.add.reduceat(self.table[ids].astype(np.float32), starts, axis=0)
            out[filled] = sums / counts[filled, None]
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out


def load() -> StaticModel:
    """The built-in model, loaded once per process. Raises `ModelMissing` (with the
    reason, also kept for `load_problem`) when it cannot be loaded: recall then stays
    lexical, and the failure is not retried in this process."""
    with _LOCK:
        model = _LOADED.get(MODEL_ID)
        if model is not None:
            return model
        if MODEL_ID in _PROBLEM:
            raise ModelMissing(_PROBLEM[MODEL_ID])
        try:
            model = _LOADED[MODEL_ID] = StaticModel(package_folder())
        except ModelMissing as exc:
            _PROBLEM[MODEL_ID] = str(exc)
            raise
        except (ImportError, OSError, ValueError, KeyError, TypeError) as exc:
            _PROBLEM[MODEL_ID] = f"the {PACKAGE} model files could not be read ({exc})"
            raise ModelMissing(_PROBLEM[MODEL_ID]) from None
        return model


def load_problem() -> str | None:
    """Why `load()` failed in this process, or None."""
    with _LOCK:
        return _PROBLEM.get(MODEL_ID)


def available() -> bool:
    """Whether the model's files are installed (without loading them)."""
    try:
        folder = package_folder()
    except ModelMissing:
        return False
    return (folder / WEIGHTS).is_file() and (folder / TOKENIZER).is_file() and \
        importlib.util.find_spec("numpy") is not None and \
        importlib.util.find_spec("tokenizers") is not None
