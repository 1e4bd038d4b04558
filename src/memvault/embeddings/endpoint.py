"""Embeddings from an OpenAI-compatible endpoint (`POST {base_url}/embeddings`).

For users who prefer a bigger model served locally (Ollama, llama.cpp, vLLM, LM Studio)
or by a provider. The key, if any, is read from the environment variable named in the
config; it never appears in an error message. Vectors are scaled to length 1.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

BATCH = 128


class EndpointFailed(Exception):
    """The endpoint could not give embeddings (message is key-free)."""


@dataclass(frozen=True, slots=True)
class EndpointSettings:
    base_url: str
    model: str
    api_key_env: str
    timeout: float


class EndpointModel:
    def __init__(self, settings: EndpointSettings) -> None:
        self.settings = settings
        self.model_id = f"endpoint:{settings.model}"

    def embed(self, texts: list[str]) -> Any:
        import numpy as np

        vectors: list[list[float]] = []
        for start in range(0, len(texts), BATCH):
            vectors += self._post(texts[start:start + BATCH])
        out = np.asarray(vectors, dtype=np.float32).reshape(len(texts), -1)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out

    def _post(self, texts: list[str]) -> list[list[float]]:
        import urllib.error
        import urllib.request

        key = os.environ.get(self.settings.api_key_env) or None
        body = json.dumps({"model": self.settings.model, "input": texts}).encode("utf-8")
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if key:
            headers["Authorization"] = f"Bearer {key}"
        url = self.settings.base_url + "/embeddings"
        request = urllib.request.Request(url, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.settings.timeout) as resp:  # noqa: S310
                raw = resp.read(64_000_000)
        except urllib.error.HTTPError as exc:
            raise EndpointFailed(f"the embeddings endpoint answered HTTP {exc.code}") from None
        except (urllib.error.URLError, OSError, ValueError) as exc:
            reason = str(getattr(exc, "reason", exc))
            if key:
                reason = reason.replace(key, "***")
            raise EndpointFailed(f"could not reach {url}: {reason}") from None
        try:
            data = sorted(json.loads(raw)["data"], key=lambda d: d.get("index", 0))
            vectors = [[float(x) for x in item["embedding"]] for item in data]
        except (ValueError, KeyError, TypeError):
            raise EndpointFailed("the endpoint's answer is not an OpenAI-style list of "
                                 "embeddings") from None
        if len(vectors) != len(texts) or len({len(v) for v in vectors}) > 1:
            raise EndpointFailed("the endpoint returned the wrong number or shape of vectors")
        return vectors
