"""A config file as parsed, and where its keys are: the lines error messages name.

One `ConfigSource` per file (or mapping) read; `_config.layers` combines them and
`_config.load` reads them. Kept apart from both so neither imports the other.
"""

from __future__ import annotations

import json
import re
from typing import Any

import attrs

from .._model.errors import ConfigError

#: the three kinds of config layer (see `_config.layers`)
USER, EXPLICIT, WORKSPACE = "user", "explicit", "workspace"


@attrs.define
class ConfigSource:
    """The parsed config and where it came from (for error messages)."""

    data: dict[str, Any]
    file: str | None = None
    text: str | None = None
    prefix: tuple[str, ...] = ()
    #: which layer this is: ``user``, ``explicit`` or ``workspace`` (see `_config.layers`)
    kind: str = EXPLICIT

    def line_of(self, path: tuple[Any, ...]) -> int | None:
        if self.text is None:
            return None
        return find_line(self.text, self.prefix + tuple(str(p) for p in path))

    def line_of_value(self, path: tuple[Any, ...], value: str) -> int | None:
        """The line holding the string ``value`` in the list at ``path`` (else the key's line)."""
        start = self.line_of(path)
        if start is None or self.text is None:
            return start
        quoted = (f'"{value}"', f"'{value}'", json.dumps(value))
        for number, line in enumerate(self.text.splitlines()[start - 1 :], start):
            if any(q in line for q in quoted):
                return number
            if number > start and _HEADER.match(line):
                break
        return start

    def locate(
        self, path: tuple[Any, ...], value: str | None = None
    ) -> tuple[str | None, int | None]:
        """``(file, line)`` of ``path`` (or of the list item ``value`` at ``path``)."""
        line = self.line_of_value(path, value) if value is not None else self.line_of(path)
        return self.file, line

    def error(self, message: str, path: tuple[Any, ...]) -> ConfigError:
        key = _dotted((*self.prefix, *path)) if path else None
        return ConfigError(message, file=self.file, key=key, line=self.line_of(path))


def _dotted(path: tuple[Any, ...]) -> str:
    """``permissions.deny[1]``: dotted table and key names, list indexes in brackets."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


_ASSIGN = re.compile(
    r"^\s*((?:[A-Za-z0-9_-]+|\"[^\"]*\"|'[^']*')"
    r"(?:\s*\.\s*(?:[A-Za-z0-9_-]+|\"[^\"]*\"|'[^']*'))*)\s*="
)


def key_at(text: str, line: int) -> str | None:
    """The dotted key set at (or, inside a multi-line value, nearest above) a 1-based line."""
    lines = text.splitlines()
    key: str | None = None
    for number in range(min(line, len(lines)), 0, -1):
        current = lines[number - 1]
        header = _HEADER.match(current)
        if header:
            table = _norm_table(header.group(1))
            return f"{table}.{key}" if key else table
        if key is None:
            assign = _ASSIGN.match(current)
            if assign:
                key = _norm_table(assign.group(1))
    return key


_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")


def _key_re(key: str) -> re.Pattern[str]:
    quoted = re.escape(key)
    return re.compile(rf"^\s*(?:{quoted}|\"{quoted}\"|'{quoted}')\s*[=.]")


def _norm_table(header: str) -> str:
    return ".".join(part.strip().strip("\"'") for part in header.split("."))


def find_line(text: str, path: tuple[str, ...]) -> int | None:
    """The 1-based line that sets ``path`` (table parts then key), or its table's header."""
    lines = text.splitlines()
    parts = [p for p in path if not p.isdigit()]
    for split in range(len(parts) - 1, -1, -1):
        table, key = ".".join(parts[:split]), parts[split]
        current = ""
        pattern = _key_re(key)
        for number, line in enumerate(lines, 1):
            header = _HEADER.match(line)
            if header:
                current = _norm_table(header.group(1))
                if current == ".".join(parts[: split + 1]):
                    return number
                continue
            if current == table and pattern.match(line):
                return number
    return None
