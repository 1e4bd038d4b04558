"""One command, one unit: a service call's writes land together or not at all.

A backend that can group writes (`batch(message)`: the GitHub backend, where the unit
is one commit) gets every write of a decorated service call (`@one_commit("…")`) in one
batch: Memory.md, the journal line and the tombstone of a `forget`, the notes and the
journal line of a `trade record`. A failure anywhere leaves none of it; the next run
does it all. On a local folder each write is atomic by itself and the decorator only
runs the call.

When a file the unit rewrote changed in the store before the unit could land
(`StaleBatch`), the whole call runs again on the new state, a bounded number of times:
edits are expressed by record id, so doing them again is safe. `attempt_memo()` gives
the call a dict that survives those runs, so it can notice that what it read the first
time changed meanwhile (`memory edit` reports a fact changed elsewhere instead of
overwriting it).

Nested decorated calls join the outer unit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import wraps
from typing import Any, TypeVar

from memvault.backends.base import Backend, StaleBatch
from memvault.errors import Conflict

T = TypeVar("T")
ATTEMPTS = 5
_MEMO: ContextVar[dict[Any, Any] | None] = ContextVar("memvault_attempt_memo", default=None)


def attempt_memo() -> dict[Any, Any]:
    """A dict shared by every run of the current unit (a throwaway one outside a unit)."""
    memo = _MEMO.get()
    return memo if memo is not None else {}


@contextmanager
def _memo() -> Iterator[None]:
    if _MEMO.get() is not None:
        yield
        return
    token = _MEMO.set({})
    try:
        yield
    finally:
        _MEMO.reset(token)


def run_as_one(backend: Backend, message: str, fn: Callable[[], T]) -> T:
    """Run `fn` with every write it makes in one unit of `backend` (see the module doc)."""
    grouped = backend.capabilities.one_commit
    with _memo():
        if not grouped or backend.in_batch():  # type: ignore[attr-defined]
            return fn()
        batch = backend.batch  # type: ignore[attr-defined]
        stale: StaleBatch | None = None
        for _ in range(ATTEMPTS):
            try:
                with batch(message):
                    return fn()
            except StaleBatch as exc:
                stale = exc  # changed meanwhile: do it again on the new state
        raise Conflict("kept changing while memvault tried to update it; nothing was "
                       "written", path=stale.path if stale is not None else None)


def one_commit(message: str) -> Callable[[Callable[..., T]], Callable[..., T]]:
    """Decorate a method of a service that has `self.vault`: its writes are one unit."""

    def decorate(method: Callable[..., T]) -> Callable[..., T]:
        @wraps(method)
        def wrapper(self: Any, *args: Any, **kwargs: Any) -> T:
            return run_as_one(self.vault.backend, message,
                              lambda: method(self, *args, **kwargs))

        return wrapper

    return decorate
