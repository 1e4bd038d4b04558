"""Small value classes for modules on the cold path of a command, without `dataclasses`.

Importing `dataclasses` costs about 5 ms on a cold start (it imports `inspect`, which
imports `ast`, `dis`, `tokenize`, ...), a tenth of the budget of `memvault search
--json`. The few classes that path builds (the config, the layout, a search hit) derive
from `Value` instead: their fields are their `__slots__`, written out in their own
`__init__`; equality and `repr` come from here, as a dataclass would give them.
`FrozenValue` adds immutability and a hash, like `@dataclass(frozen=True)`.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class Value:
    """Equality and `repr` by the fields named in `__slots__` (unhashable, mutable)."""

    __slots__: tuple[str, ...] = ()  # (defining __eq__ alone leaves it unhashable)

    def _fields(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, Value)
        return self._fields() == other._fields()

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{type(self).__name__}({fields})"


class FrozenValue(Value):
    """A `Value` whose fields are set once, in `__init__` (with `_init`), and hashable."""

    __slots__ = ()

    def _init(self, **fields: Any) -> None:
        for name, value in fields.items():
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"cannot assign to field {name!r}: {type(self).__name__} is "
                             "frozen")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}: {type(self).__name__} is frozen")

    def __hash__(self) -> int:
        return hash(self._fields())
