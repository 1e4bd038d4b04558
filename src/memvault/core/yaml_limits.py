"""YAML read with limits, so a hostile note cannot make memvault run for minutes.

A few hundred bytes of YAML can describe billions of values: each alias (`*a`) repeats
everything its anchor (`&a`) holds, and anchors can hold aliases of other anchors (an
"alias bomb"). PyYAML builds such a document cheaply, with shared references, but any
code that then walks, prints or validates the values does the whole expansion. Deep
nesting (`[[[[…`) can likewise exhaust the stack.

`load_limited(text, loader)` checks the document's *event stream* first — which PyYAML's
C parser produces without building anything — and refuses it when:

- the text is longer than `MAX_CHARS` (256 KiB of characters);
- collections nest deeper than `MAX_DEPTH` (64);
- aliases would add more than `MAX_ALIAS_NODES` (10,000) values in all when expanded;
- an alias refers to a collection that contains it (a recursive structure).

Only then is the document constructed with the caller's loader. A refusal raises
`YamlLimitError`, whose message says which limit and where. Ordinary frontmatter is far
inside these limits; the check costs about one extra parse.

Pure: text in, values out. PyYAML is imported on first use.
"""

from __future__ import annotations

from typing import Any

MAX_CHARS = 256 * 1024
MAX_DEPTH = 64
MAX_ALIAS_NODES = 10_000


class YamlLimitError(ValueError):
    """The YAML is over one of the limits above; the message says which (one line)."""


def load_limited(text: str, loader: Any) -> Any:
    """`yaml.load(text, loader)` after `check_limits`; YAML errors propagate as usual."""
    import yaml

    check_limits(text)
    return yaml.load(text, Loader=loader)  # noqa: S506 - callers pass a safe/base loader


def check_limits(text: str) -> None:
    """Raise YamlLimitError if `text` is over a limit (see the module doc)."""
    if len(text) > MAX_CHARS:
        raise YamlLimitError(f"YAML is {len(text):,} characters; the limit is {MAX_CHARS:,}")
    _check_events(text)


def _check_events(text: str) -> None:
    import yaml
    from yaml import events as ev

    loader_cls = getattr(yaml, "CBaseLoader", yaml.BaseLoader)
    loader = loader_cls(text)
    sizes: dict[str, int] = {}  # anchor -> number of values it stands for, expanded
    stack: list[list[Any]] = [[None, 0]]  # open collections: [anchor, values so far]
    expanded = 0
    try:
        while loader.check_event():
            event = loader.get_event()
            if isinstance(event, ev.AliasEvent):
                size = sizes.get(event.anchor or "")
                if size is None:
                    if any(frame[0] == event.anchor for frame in stack):
                        raise YamlLimitError(_where(event, f"alias *{event.anchor} refers to "
                                                           "a collection that contains it"))
                    continue  # an unknown anchor: the real load reports it
                expanded += size
                if expanded > MAX_ALIAS_NODES:
                    raise YamlLimitError(_where(event, "aliases expand to more than "
                                                       f"{MAX_ALIAS_NODES:,} values "
                                                       "(an alias bomb?)"))
                stack[-1][1] += size
            elif isinstance(event, ev.ScalarEvent):
                if event.anchor is not None:
                    sizes[event.anchor] = 1
                stack[-1][1] += 1
            elif isinstance(event, ev.CollectionStartEvent):
                stack.append([event.anchor, 1])
                if len(stack) - 1 > MAX_DEPTH:
                    raise YamlLimitError(_where(event, f"collections nest more than "
                                                       f"{MAX_DEPTH} deep"))
            elif isinstance(event, ev.CollectionEndEvent):
                anchor, size = stack.pop()
                if anchor is not None:
                    sizes[anchor] = size
                stack[-1][1] += size
    finally:
        loader.dispose()


def _where(event: Any, message: str) -> str:
    mark = getattr(event, "start_mark", None)
    return f"{message} (line {mark.line + 1})" if mark is not None else message
