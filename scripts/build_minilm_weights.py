"""Build the default recall model's files from the published all-MiniLM-L6-v2 weights.

    python scripts/build_minilm_weights.py PATH/TO/all-MiniLM-L6-v2

PATH is a folder holding the model as published by sentence-transformers
(`model.safetensors`, `tokenizer.json`; Apache-2.0). The weights are stored as int8
with one float32 scale per output row (a quarter of the size; embeddings change by
less than 0.001 in cosine), the other parameters as float32, in
`src/memvault/embeddings/data/minilm-l6-v2-int8.npz`; the tokenizer is copied beside it.
memvault reads them with numpy and tokenizers (`memvault/embeddings/minilm.py`); nothing
else of the original package is needed. Run once when the model changes; the output is
committed.
"""

from __future__ import annotations

import json
import shutil
import struct
import sys
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent.parent / "src" / "memvault" / "embeddings" / "data"
NAME = "minilm-l6-v2-int8.npz"


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """The float32 tensors of a safetensors file (8-byte header length, JSON header,
    raw little-endian data)."""
    raw = path.read_bytes()
    size = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + size])
    data = raw[8 + size:]
    tensors = {}
    for name, spec in header.items():
        if name == "__metadata__" or spec["dtype"] != "F32":
            continue  # position_ids (int64) are implied
        start, end = spec["data_offsets"]
        tensors[name] = np.frombuffer(data[start:end], dtype="<f4").reshape(spec["shape"])
    return tensors


def quantise(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """int8 values and one scale per row, so that values * scale ≈ matrix."""
    scale = np.abs(matrix).max(axis=1, keepdims=True) / 127.0
    scale[scale == 0] = 1.0
    return np.round(matrix / scale).astype(np.int8), scale.astype(np.float32)


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    source = Path(sys.argv[1])
    tensors = read_safetensors(source / "model.safetensors")
    arrays: dict[str, np.ndarray] = {}
    for name, value in tensors.items():
        if value.ndim == 2:
            q, scale = quantise(value)
            arrays[name + ":q"] = q
            arrays[name + ":scale"] = scale
        else:
            arrays[name] = value.astype(np.float32)
    OUT.mkdir(parents=True, exist_ok=True)
    np.savez(OUT / NAME, **arrays)
    shutil.copyfile(source / "tokenizer.json", OUT / "minilm-tokenizer.json")
    print(f"{OUT / NAME}: {(OUT / NAME).stat().st_size / 1e6:.1f} MB, {len(tensors)} tensors")


if __name__ == "__main__":
    main()
