"""Plain-value coercion for Typer parameters, so running a command does not import pydantic.

Typer 0.29 coerces every parameter that is not an already-boolean flag through a
pydantic `TypeAdapter`, built the first time the parameter is processed, including
`--help` and options that were not given. Importing pydantic for that costs about 50 ms
and 15 MB in every `memvault` process. For parameters annotated with plain `str`, `int`,
`float` or `bool` (no min/max, no choices, no custom parser, no path or file handling)
the coercion is trivial, so `install_plain_coercion()` makes Typer use a small
pydantic-free coercer for exactly those; every other parameter keeps Typer's own
coercion. If Typer's internals are not the ones this module knows (another Typer
version), it changes nothing and commands work exactly as before, only slower; the test
`tests/test_lazy_imports.py` then reports that pydantic is imported again.

This module must never change which values a parameter accepts or what they become.
"""

from __future__ import annotations

from typing import Any

_PLAIN_TYPES = (str, int, float, bool)
# The strings pydantic (and so Typer) accepts for a boolean, case-insensitively.
_TRUE = {"1", "on", "t", "true", "y", "yes"}
_FALSE = {"0", "off", "f", "false", "n", "no"}


def _is_plain(param: Any) -> bool:
    desc = getattr(param, "type_descriptor", None)
    if desc is None or desc.annotation not in _PLAIN_TYPES:
        return False
    info = desc.parameter_info
    if getattr(info, "min", None) is not None or getattr(info, "max", None) is not None:
        return False
    if getattr(info, "parser", None) is not None or getattr(info, "click_type", None) is not None:
        return False
    return not (desc.is_choice or desc.is_path or desc.is_file or desc.is_list
                or desc.is_tuple)


def _plain_runtime_param_class() -> type | None:
    try:  # Typer internals (0.29); absent in other versions.
        from typer._click.exceptions import BadParameter
        from typer._coercion import RuntimeParam
    except ImportError:  # pragma: no cover - depends on the installed Typer
        return None

    class PlainRuntimeParam(RuntimeParam):  # type: ignore[misc,valid-type]
        """Coerces a command-line value to str, int, float or bool without pydantic."""

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            kind = self.annotation
            if type(value) is kind:
                return value
            if kind is bool:
                text = str(value).strip().lower()
                if text in _TRUE:
                    return True
                if text in _FALSE:
                    return False
                raise BadParameter(f"{value!r} is not a valid boolean.", ctx=ctx, param=param)
            if kind is str:
                if isinstance(value, str):
                    return str(value)
                raise BadParameter(f"{value!r} is not a valid string.", ctx=ctx, param=param)
            try:
                return kind(value)
            except (TypeError, ValueError):
                label = "integer" if kind is int else "number"
                raise BadParameter(f"{value!r} is not a valid {label}.", ctx=ctx,
                                   param=param) from None

    return PlainRuntimeParam


def install_plain_coercion() -> None:
    """Make Typer coerce plain str/int/float/bool parameters without pydantic (idempotent)."""
    try:
        from typer.core import _TyperParameter
    except ImportError:  # pragma: no cover - depends on the installed Typer
        return
    original = getattr(_TyperParameter, "get_runtime_param", None)
    if original is None or getattr(original, "_memvault_plain", False):
        return
    plain_class = _plain_runtime_param_class()
    if plain_class is None:  # pragma: no cover
        return

    def get_runtime_param(self: Any) -> Any:
        if getattr(self, "_runtime_param", "absent") is None and _is_plain(self):
            desc = self.type_descriptor
            self._runtime_param = plain_class(parameter_info=desc.parameter_info,
                                              annotation=desc.annotation)
        return original(self)

    get_runtime_param._memvault_plain = True  # type: ignore[attr-defined]
    _TyperParameter.get_runtime_param = get_runtime_param  # type: ignore[method-assign]
