"""Loading ``callgate.toml`` and validating each plugin's table at boot.

Every key has a default, so no config is needed. A bad value fails boot with
the file, the key and its line; a table no loaded plugin reads is a warning
(its plugin may be disabled on purpose).
"""

from __future__ import annotations

import copy
import logging
import os
import re
import tomllib
from collections.abc import Mapping
from typing import Any

import attrs
import jsonschema

from ._errors import ConfigError

log = logging.getLogger("callgate")

CONFIG_NAMES = ("callgate.toml",)


@attrs.define
class ConfigSource:
    """The parsed config and where it came from (for error messages)."""

    data: dict[str, Any]
    file: str | None = None
    text: str | None = None
    prefix: tuple[str, ...] = ()

    def line_of(self, path: tuple[Any, ...]) -> int | None:
        if self.text is None:
            return None
        return find_line(self.text, self.prefix + tuple(str(p) for p in path))

    def error(self, message: str, path: tuple[Any, ...]) -> ConfigError:
        key = ".".join(str(p) for p in path) if path else None
        return ConfigError(message, file=self.file, key=key, line=self.line_of(path))


def load(config: str | os.PathLike[str] | Mapping[str, Any] | None,
         workspace: str | os.PathLike[str] | None = None) -> ConfigSource:
    """Parse the config: an explicit file, a mapping, or discovery in ``workspace``."""
    if isinstance(config, Mapping):
        return ConfigSource(copy.deepcopy(dict(config)), "<config>")
    if config is not None:
        return _load_file(os.fspath(config), required=True)
    if workspace is not None:
        for name in CONFIG_NAMES:
            path = os.path.join(os.fspath(workspace), name)
            if os.path.isfile(path):
                return _load_file(path, required=True)
        pyproject = os.path.join(os.fspath(workspace), "pyproject.toml")
        if os.path.isfile(pyproject):
            src = _load_file(pyproject, required=False)
            tool = src.data.get("tool", {})
            if isinstance(tool, dict) and isinstance(tool.get("callgate"), dict):
                return ConfigSource(tool["callgate"], src.file, src.text, ("tool", "callgate"))
    return ConfigSource({}, None)


def _load_file(path: str, *, required: bool) -> ConfigSource:
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except OSError as exc:
        if not required:
            return ConfigSource({}, None)
        raise ConfigError(f"cannot read the config file: {exc.strerror or exc}", file=path) \
            from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        match = re.search(r"\(at line (\d+), column \d+\)", str(exc))
        line = int(match.group(1)) if match else None
        reason = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(exc))
        raise ConfigError(f"not valid TOML: {reason}", file=path, line=line) from None
    return ConfigSource(data, path, text)


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


def apply_defaults(schema: Mapping[str, Any], value: Any) -> Any:
    """Fill ``default``s of object properties, recursively (a new value)."""
    if not isinstance(value, dict) or schema.get("type") != "object":
        return value
    out = dict(value)
    for name, sub in (schema.get("properties") or {}).items():
        if name not in out and isinstance(sub, Mapping) and "default" in sub:
            out[name] = copy.deepcopy(sub["default"])
        if name in out and isinstance(sub, Mapping):
            out[name] = apply_defaults(sub, out[name])
    extra = schema.get("additionalProperties")
    if isinstance(extra, Mapping):
        for name in out:
            if name not in (schema.get("properties") or {}):
                out[name] = apply_defaults(extra, out[name])
    return out


def validate_table(source: ConfigSource, table: str, schema: Mapping[str, Any]) -> dict[str, Any]:
    """The table with defaults applied, or a `ConfigError` naming file, key and line."""
    value = source.data.get(table, {})
    if not isinstance(value, dict):
        raise source.error(f"[{table}] must be a table", (table,))
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(value), key=lambda e: (list(map(str, e.path)),
                                                                   str(e.validator)))
    if errors:
        err = errors[0]
        path = (table, *err.path)
        if err.validator == "additionalProperties":
            declared = set((err.schema or {}).get("properties", {}))
            unknown = sorted(set(err.instance) - declared)
            path = (*path, unknown[0]) if unknown else path
            known = ", ".join(sorted(declared)) or "none"
            raise source.error(f"unknown key; known keys here: {known}", path)
        raise source.error(_describe(err), path)
    return apply_defaults(schema, value)


def _describe(err: jsonschema.ValidationError) -> str:
    kw, val = err.validator, err.validator_value
    if kw == "type":
        return f"must be of type {val}"
    if kw == "enum":
        return "must be one of " + ", ".join(repr(v) for v in val)
    if kw in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        sym = {"minimum": ">=", "maximum": "<=", "exclusiveMinimum": ">",
               "exclusiveMaximum": "<"}[kw]
        return f"must be {sym} {val}"
    if kw == "required":
        return f"is missing required keys: {', '.join(val)}"
    return err.message


def check_unclaimed(source: ConfigSource, claimed: set[str]) -> list[str]:
    """Warn about tables that no loaded plugin reads; returns the warnings."""
    warnings = []
    for table in source.data:
        if table not in claimed:
            line = source.line_of((table,))
            where = f"{source.file}:{line}: " if source.file and line else ""
            msg = f"{where}config table [{table}] is not read by any loaded plugin; ignored"
            log.warning(msg)
            warnings.append(msg)
    return warnings
