"""Standing problems, told once: which ones ordinary commands have already mentioned.

Some problems stay until the person acts, for example a ticked Inbox line whose text
memvault cannot accept. `memvault doctor` lists them every time it runs; every other
command mentions each one once, and again only when it changes (its key changes).

What has been told is kept per topic in `.memvault/safety/notices.json` (local to this
machine, git-ignored with the rest of the safety folder) as hashes of the keys, so the
file holds no text of the vault. On a backend without a local folder nothing is kept and
every command repeats the notice. A damaged or missing file only means a notice is
repeated; it never stops a command.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import TYPE_CHECKING

from memvault.state_paths import NOTICES

if TYPE_CHECKING:
    from memvault.backends.base import Backend


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:24]


def not_yet_told(backend: Backend, topic: str, keys: Iterable[str]) -> set[str]:
    """The keys among `keys` that were not told before, for `topic`; remembers `keys` as
    the topic's current set (a key that goes away and comes back is told again)."""
    from memvault.backends.base import ANY
    from memvault.services.safety_net import SafetyNet

    wanted = {_digest(k): k for k in keys}
    net = SafetyNet(backend)
    if not net.enabled:
        return set(wanted.values())
    told: dict[str, list[str]] = {}
    try:
        blob = backend.read(NOTICES)
        loaded = json.loads(blob.data) if blob is not None else {}
        if isinstance(loaded, dict):
            told = {t: list(v) for t, v in loaded.items() if isinstance(v, list)}
    except Exception:  # noqa: BLE001 - a damaged memo only repeats a notice
        told = {}
    before = set(told.get(topic, []))
    fresh = {key for digest, key in wanted.items() if digest not in before}
    if set(wanted) != before:
        if wanted:
            told[topic] = sorted(wanted)
        else:
            told.pop(topic, None)
        try:
            net.ensure_ignored()
            backend.write(NOTICES, json.dumps(told, sort_keys=True).encode() + b"\n",
                          expected=ANY, message="memvault: notices")
        except Exception:  # noqa: BLE001 - not remembering only repeats the notice
            pass
    return fresh
