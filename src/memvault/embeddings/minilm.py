"""The default recall model: all-MiniLM-L6-v2, a small sentence transformer, in numpy.

A six-layer BERT encoder (384 dimensions, 12 attention heads, a 30,522-piece
lowercased WordPiece vocabulary) trained by the sentence-transformers project on a
billion sentence pairs to place texts that mean the same thing close together; the
embedding of a text is the mean of its last layer's token states, scaled to length 1.
Unlike a static model (`static.py`, an average of fixed word vectors) it reads words in
context, so "which football club am I a fan of?" lands near "I support Benfica".

The weights (Apache-2.0, see `data/NOTICE.md`) ship inside memvault's own package as
int8 matrices with one scale per row (`data/minilm-l6-v2-int8.npz`, 23 MB, built by
`scripts/build_minilm_weights.py`) and are turned back into float32 once per process;
the forward pass below is plain numpy matrix products. No network, no account, no
PyTorch.

Cost, one core: about 10 ms per record the first time a memory is ranked (the vectors
are then cached in the index), and 10–15 ms per request.
"""

from __future__ import annotations

import threading
import zipfile
from concurrent.futures import Future
from pathlib import Path
from typing import Any

MODEL_ID = "minilm-l6-v2-int8"
DATA = Path(__file__).resolve().parent / "data"
WEIGHTS = DATA / "minilm-l6-v2-int8.npz"
TOKENIZER = DATA / "minilm-tokenizer.json"
LAYERS, HEADS, HIDDEN = 6, 12, 384
MAX_TOKENS = 256
"""Word pieces of one text that are read (the model was trained on up to 256; a fact is
far shorter)."""
BATCH = 32
"""Texts run through the encoder together (sorted by length, so little is padding)."""
LAYER_NORM_EPS = 1e-12
EARLY_MAX = 4
"""Requests whose prefetched embedding is kept until collected (the oldest is dropped)."""

_LOCK = threading.Lock()
_LOADED: list[MiniLM] = []
_PROBLEM: list[str] = []


class ModelMissing(Exception):
    """The model's files are missing or unreadable."""


def _weights(path: Path) -> dict[str, Any]:
    """float32 parameters by name; int8 matrices are scaled back and transposed so that
    `x @ w` applies a layer (the embedding tables stay row-per-token)."""
    import numpy as np

    out: dict[str, Any] = {}
    with np.load(path) as archive:
        names = set(archive.files)
        for name in names:
            if name.endswith(":scale"):
                continue
            if name.endswith(":q"):
                base = name[:-2]
                matrix = archive[name].astype(np.float32) * archive[base + ":scale"]
                out[base] = matrix if "embeddings" in base else np.ascontiguousarray(matrix.T)
            else:
                out[name] = archive[name].astype(np.float32)
    return out


def _layer_norm(x: Any, gain: Any, bias: Any) -> Any:
    import numpy as np

    mean = x.mean(-1, keepdims=True)
    centred = x - mean
    variance = (centred * centred).mean(-1, keepdims=True)
    return centred / np.sqrt(variance + LAYER_NORM_EPS) * gain + bias


def _gelu(x: Any) -> Any:
    """GELU, tanh form (within 1e-3 of the exact one). `x * x * x`, not `x ** 3`: numpy's
    float32 power is a hundred times slower on negative numbers."""
    import numpy as np

    return 0.5 * x * (1.0 + np.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))


class MiniLM:
    """Embeds texts with the MiniLM encoder (unit vectors, 384 dimensions)."""

    model_id = MODEL_ID
    dimensions = HIDDEN

    def __init__(self) -> None:
        import numpy as np
        from tokenizers import Tokenizer

        if not WEIGHTS.is_file() or not TOKENIZER.is_file():
            raise ModelMissing(f"memvault is installed without its model files ({DATA})")
        w = _weights(WEIGHTS)
        self.tokenizer = Tokenizer.from_file(str(TOKENIZER))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(MAX_TOKENS)
        self.words = w["embeddings.word_embeddings.weight"]
        self.positions = w["embeddings.position_embeddings.weight"]
        self.token_type = w["embeddings.token_type_embeddings.weight"][0]
        self.embed_norm = (w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        self.layers = []
        for i in range(LAYERS):
            p = f"encoder.layer.{i}."
            qkv = np.concatenate([w[p + f"attention.self.{part}.weight"]
                                  for part in ("query", "key", "value")], axis=1)
            qkv_bias = np.concatenate([w[p + f"attention.self.{part}.bias"]
                                       for part in ("query", "key", "value")])
            self.layers.append((
                np.ascontiguousarray(qkv), qkv_bias,
                w[p + "attention.output.dense.weight"], w[p + "attention.output.dense.bias"],
                w[p + "attention.output.LayerNorm.weight"],
                w[p + "attention.output.LayerNorm.bias"],
                w[p + "intermediate.dense.weight"], w[p + "intermediate.dense.bias"],
                w[p + "output.dense.weight"], w[p + "output.dense.bias"],
                w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"],
            ))
        self._run = threading.Lock()
        self._early: dict[str, Future[Any]] = {}
        self._early_lock = threading.Lock()

    def prefetch(self, text: str) -> None:
        """Start embedding a request in a background thread (numpy's products release
        the GIL), so that it overlaps the rest of the ranking; `embed_query` collects it."""
        future: Future[Any] = Future()
        with self._early_lock:
            if text in self._early:
                return
            while len(self._early) >= EARLY_MAX:
                self._early.pop(next(iter(self._early)))
            self._early[text] = future

        def work() -> None:
            try:
                future.set_result(self.embed([text]))
            except BaseException as exc:  # noqa: BLE001 - handed to the collector
                future.set_exception(exc)

        threading.Thread(target=work, name="memvault-query-embedding", daemon=True).start()

    def embed_query(self, text: str) -> Any:
        """A (1, 384) array: the request's embedding, prefetched or computed now."""
        with self._early_lock:
            future = self._early.pop(text, None)
        if future is not None:
            return future.result()
        return self.embed([text])

    def embed(self, texts: list[str]) -> Any:
        """A (len(texts), 384) float32 array of unit vectors."""
        import numpy as np

        out = np.zeros((len(texts), HIDDEN), dtype=np.float32)
        if not texts:
            return out
        encoded = self.tokenizer.encode_batch(texts)
        order = sorted(range(len(texts)), key=lambda i: len(encoded[i].ids))
        with self._run:
            for start in range(0, len(order), BATCH):
                chunk = order[start:start + BATCH]
                out[chunk] = self._encode([encoded[i].ids for i in chunk])
        return out

    def _encode(self, pieces: list[list[int]]) -> Any:
        import numpy as np

        batch, length = len(pieces), max(len(p) for p in pieces)
        ids = np.zeros((batch, length), dtype=np.int64)
        mask = np.zeros((batch, length), dtype=np.float32)
        for row, p in enumerate(pieces):
            ids[row, :len(p)] = p
            mask[row, :len(p)] = 1.0
        x = self.words[ids] + self.positions[:length] + self.token_type
        x = _layer_norm(x, *self.embed_norm)
        padding = ((1.0 - mask) * -1e9)[:, None, None, :]
        head = HIDDEN // HEADS
        scale = np.float32(1.0 / np.sqrt(head))
        for (qkv, qkv_b, out_w, out_b, n1_g, n1_b,
             up_w, up_b, down_w, down_b, n2_g, n2_b) in self.layers:
            q, k, v = np.split(x @ qkv + qkv_b, 3, axis=-1)
            q = q.reshape(batch, length, HEADS, head).transpose(0, 2, 1, 3)
            k = k.reshape(batch, length, HEADS, head).transpose(0, 2, 3, 1)
            v = v.reshape(batch, length, HEADS, head).transpose(0, 2, 1, 3)
            scores = (q @ k) * scale + padding
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch, length, HIDDEN)
            x = _layer_norm(x + context @ out_w + out_b, n1_g, n1_b)
            x = _layer_norm(x + _gelu(x @ up_w + up_b) @ down_w + down_b, n2_g, n2_b)
        pooled = (x * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)


def load() -> MiniLM:
    """The model, loaded once per process. Raises `ModelMissing` (the reason is kept for
    `load_problem`) when it cannot be loaded; it is not retried in this process."""
    with _LOCK:
        if _LOADED:
            return _LOADED[0]
        if _PROBLEM:
            raise ModelMissing(_PROBLEM[0])
        try:
            model = MiniLM()
        except ModelMissing as exc:
            _PROBLEM.append(str(exc))
            raise
        except ImportError as exc:
            _PROBLEM.append(f"numpy or tokenizers could not be imported ({exc})")
            raise ModelMissing(_PROBLEM[0]) from None
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
            _PROBLEM.append(f"the model files could not be read ({exc})")
            raise ModelMissing(_PROBLEM[0]) from None
        _LOADED.append(model)
        return model


def load_problem() -> str | None:
    """Why `load()` failed in this process, or None."""
    with _LOCK:
        return _PROBLEM[0] if _PROBLEM else None
