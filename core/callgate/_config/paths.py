"""Config values that cannot name a file, caught at boot with the key that holds them.

A schema says a key is a path with ``"x-kind": "path"`` (`_config.layers`); this module holds
every such value, in every layer, to one rule before any plugin uses it (issue 36):

- a path is absolute (``~`` and ``~/…`` expand first), unless its key says what a
  relative one is relative to, with ``"x-relative-to"``: ``"workspace"``, ``"state
  directory"`` or ``"config file"`` (the file that set it: a config given as a mapping
  is no file, so there a relative value is an error too);
- a path holds no control character (a NUL cannot be in a path at all; a newline or a
  tab in one is a quoting slip), and an entry of a list of paths is not empty (an empty
  scalar means "the default" where the default is empty);
- and no string anywhere in the config holds a NUL: no path, program, rule or name
  can, and one that reached the operating system would fail far from its key.

Each problem is a `ConfigError` naming the file, the key (``workspace.extra_roots[1]``)
and the line, in one line: boot stops there instead of failing later with a traceback.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from .._model.errors import ConfigError
from .layers import KIND

if TYPE_CHECKING:
    from .source import ConfigSource

#: what a relative value of a path key is relative to (absent: it must be absolute)
RELATIVE_TO = "x-relative-to"
RELATIVE_BASES = frozenset({"workspace", "state directory", "config file"})
Path = tuple[Any, ...]


def check_paths(source: ConfigSource, table: str, schema: Mapping[str, Any], value: Any) -> None:
    """Raise a `ConfigError` for the first value of ``table`` (as one layer, ``source``,
    sets it; already valid for ``schema``) this module's rule refuses."""
    for path, message, item in problems(schema, value, (table,), _is_file(source)):
        raise _error(source, path, message, item)


def problems(
    schema: Mapping[str, Any] | None, value: Any, path: Path, from_file: bool
) -> Iterator[tuple[Path, str, str | None]]:
    """``(key path, message, list item or None)`` for each value the rule refuses."""
    if isinstance(schema, Mapping) and schema.get(KIND) == "path":
        yield from _path_problems(schema, value, path, from_file)
        return
    if isinstance(value, Mapping):
        props = schema.get("properties") if isinstance(schema, Mapping) else None
        extra = schema.get("additionalProperties") if isinstance(schema, Mapping) else None
        for key, sub in value.items():
            if "\x00" in str(key):
                yield (*path, key), "the key holds a NUL byte, which no name can", None
                continue
            sub_schema = props.get(key) if isinstance(props, Mapping) and key in props else extra
            yield from problems(
                sub_schema if isinstance(sub_schema, Mapping) else None,
                sub,
                (*path, key),
                from_file,
            )
    elif isinstance(value, list):
        items = schema.get("items") if isinstance(schema, Mapping) else None
        for index, sub in enumerate(value):
            yield from problems(
                items if isinstance(items, Mapping) else None, sub, (*path, index), from_file
            )
    elif isinstance(value, str) and "\x00" in value:
        yield path, f"{_show(value)} holds a NUL byte, which no name, rule or command can", None


def _path_problems(
    schema: Mapping[str, Any], value: Any, path: Path, from_file: bool
) -> Iterator[tuple[Path, str, str | None]]:
    base = schema.get(RELATIVE_TO)
    if isinstance(value, str):
        if value == "" and schema.get("default") == "":
            return  # "" is the documented default
        message = _problem(value, base, from_file)
        if message:
            yield path, message, None
    elif isinstance(value, list):
        for index, item in enumerate(value):
            if isinstance(item, str):
                message = _problem(item, base, from_file)
                if message:
                    yield (*path, index), message, item


def _problem(value: str, base: Any, from_file: bool) -> str | None:
    """Why ``value`` cannot be a path of a key relative to ``base``, or ``None``."""
    shown = _show(value)
    if value == "":
        return "an empty path names nothing; remove the entry or give a path"
    if "\x00" in value:
        return f"{shown} holds a NUL byte, which no path can; give the path without it"
    control = next((ch for ch in value if ord(ch) < 0x20 or ord(ch) == 0x7F), None)
    if control is not None:
        return (
            f"{shown} holds a control character (U+{ord(control):04X}), which is "
            "almost certainly a quoting slip; give the path without it"
        )
    if os.path.isabs(os.path.expanduser(value)):
        return None
    if base in RELATIVE_BASES and (base != "config file" or from_file):
        return None
    if base == "config file":
        return (
            f"{shown} is a relative path, and this config is not a file it could be "
            "relative to; give an absolute path"
        )
    return (
        f"{shown} is not an absolute path, and this key has nothing a relative one could "
        "be relative to; give the full path"
    )


def _show(value: str) -> str:
    text = value.encode("unicode_escape").decode("ascii") if not value.isprintable() else value
    return f"'{text}'"


def _is_file(source: ConfigSource) -> bool:
    return bool(source.file) and not str(source.file).startswith("<")


def _error(source: ConfigSource, path: Path, message: str, item: str | None) -> ConfigError:
    error = source.error(message, path)
    if item is None:
        return error
    line = source.line_of_value(tuple(p for p in path if not isinstance(p, int)), item)
    return ConfigError(message, file=error.file, key=error.key, line=line or error.line)
