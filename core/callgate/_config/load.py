"""Loading the config files and validating each plugin's table at boot.

Every key has a default, so no config is needed. The user config, then an
explicit or a workspace config, are layered (`_config.layers`); each layer's tables
are validated on their own, so a bad value fails boot with the file, the key
and the line that set it. A table no loaded plugin reads is a warning (its
plugin may be disabled on purpose).
"""

from __future__ import annotations

import copy
import functools
import json
import logging
import os
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .._model.errors import ConfigError
from .._validation.fastcheck import compile_fast
from . import layers as _layers
from .layers import TRUST_TABLE, LayeredSource
from .paths import check_paths
from .source import _HEADER, USER, WORKSPACE, ConfigSource, _norm_table, key_at

if TYPE_CHECKING:  # jsonschema (~35 ms) is imported only for a table the fast check is unsure of
    import jsonschema

log = logging.getLogger("callgate")

CONFIG_NAMES = ("callgate.toml",)


ConfigInput = str | os.PathLike[str] | Mapping[str, Any] | None


def load(
    config: ConfigInput,
    workspace: str | os.PathLike[str] | None = None,
    *,
    user_config: ConfigInput | bool = True,
) -> LayeredSource:
    """The layered config: the user config, then an explicit ``config`` (a file or a
    mapping) or, without one, the workspace config discovered in ``workspace``.

    ``user_config`` is ``True`` (the user's own file, `_config.layers.user_config_path`),
    ``False`` (none), or a file or mapping to use instead.
    """
    layers: list[ConfigSource] = []
    user_file: str | None = None
    if user_config is True:
        user_file = _layers.user_config_path()
        user = _load_file(user_file, required=False) if user_file else ConfigSource({})
    elif user_config is False or user_config is None:
        user = ConfigSource({})
    else:
        user = _source(user_config, required=True)
        user_file = user.file
    user.kind = USER
    layers.append(user)
    trusted: bool | None = None
    notes: list[str] = []
    if config is not None:
        layers.append(_source(config, required=True))
    elif workspace is not None:
        found = discover(workspace)
        if found is not None:
            found.kind = WORKSPACE
            trusted = _layers.is_trusted(user, workspace)
            if trusted and found.prefix:
                # write tools may edit pyproject.toml (an ordinary project file), so a
                # [tool.callgate] they planted must not apply in full; callgate.toml,
                # which they may not write, carries a trusted workspace's settings
                trusted = False
                notes.append(
                    f"{found.file}:{_table_line(found.text or '', 'tool.callgate')}: "
                    "[tool.callgate] is never trusted, "
                    "even in a workspace [trust] lists (write tools may edit "
                    "pyproject.toml), so it can only tighten the user config; put "
                    "the settings in callgate.toml to apply them in full"
                )
            layers.append(found)
    source = LayeredSource(layers, workspace_trusted=trusted, user_file=user_file)
    source.notes.extend(notes)
    return source


def _table_line(text: str, table: str) -> int:
    """The 1-based line of the first header of ``table`` or of a table below it (else 1)."""
    for number, line in enumerate(text.splitlines(), 1):
        header = _HEADER.match(line)
        if header and (_norm_table(header.group(1)) + ".").startswith(table + "."):
            return number
    return 1


def _source(config: str | os.PathLike[str] | Mapping[str, Any], *, required: bool) -> ConfigSource:
    if isinstance(config, Mapping):
        return ConfigSource(copy.deepcopy(dict(config)), "<config>")
    return _load_file(os.fspath(config), required=required)


def discover(workspace: str | os.PathLike[str]) -> ConfigSource | None:
    """The workspace's own config: ``callgate.toml``, else ``[tool.callgate]`` in
    ``pyproject.toml``; ``None`` when it has neither."""
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
    return None


def _load_file(path: str, *, required: bool) -> ConfigSource:
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except OSError as exc:
        if not required:
            return ConfigSource({}, None)
        raise ConfigError(
            f"cannot read the config file: {exc.strerror or exc}", file=path
        ) from None
    import tomllib  # with a config file read, not at import (its regexes, datetime)

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        match = re.search(r"\(at line (\d+), column \d+\)", str(exc))
        line = int(match.group(1)) if match else None
        if line is None and "end of document" in str(exc):
            line = max(1, len(text.splitlines()))
        reason = re.sub(r"\s*\((at line \d+, column \d+|at end of document)\)", "", str(exc))
        key = key_at(text, line) if line else None
        raise ConfigError(f"not valid TOML: {reason}", file=path, key=key, line=line) from None
    return ConfigSource(data, path, text)


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


def _toml_integer(checker: Any, value: Any) -> bool:
    # TOML tells 15000 from 15000.0; JSON Schema would accept the float as an integer
    return isinstance(value, int) and not isinstance(value, bool)


@functools.cache
def _toml_validator() -> Any:
    """Draft 2020-12 with TOML's integers (built on first use)."""
    import jsonschema.validators

    return jsonschema.validators.extend(
        jsonschema.Draft202012Validator,
        type_checker=jsonschema.Draft202012Validator.TYPE_CHECKER.redefine(
            "integer", _toml_integer
        ),
    )


def validate_table(
    source: ConfigSource | LayeredSource, table: str, schema: Mapping[str, Any]
) -> dict[str, Any]:
    """The table with defaults applied, or a `ConfigError` naming file, key and line.

    A layered source validates each layer's table on its own (so the error names
    the file that set the key), then merges them by the schema's policies.
    """
    if isinstance(source, LayeredSource):
        for layer in source.layers:
            if table in layer.data:
                validate_table(layer, table, schema)
        return apply_defaults(schema, source.table(table, schema))
    value = source.data.get(table, {})
    if not isinstance(value, dict):
        raise source.error(f"[{table}] must be a table", (table,))
    # certainly valid by the fast subset check (its integers are TOML's: no floats, no
    # booleans), so jsonschema would find no error either; anything else goes to jsonschema
    fast = compile_fast(schema)
    if fast is not None and fast(value):
        check_paths(source, table, schema, value)
        return apply_defaults(schema, value)
    validator = _toml_validator()(schema)
    errors = sorted(
        validator.iter_errors(value), key=lambda e: (list(map(str, e.path)), str(e.validator))
    )
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
    check_paths(source, table, schema, value)
    return apply_defaults(schema, value)


_TOML_TYPES = {
    dict: "a table",
    list: "an array",
    str: "a string",
    bool: "a boolean",
    int: "an integer",
    float: "a float",
}
_SCHEMA_TYPES = {
    "object": "a table",
    "array": "an array",
    "string": "a string",
    "boolean": "a boolean",
    "integer": "an integer",
    "number": "a number",
    "null": "nothing",
}


def _toml_type(value: Any) -> str:
    return _TOML_TYPES.get(type(value), f"a {type(value).__name__}")


def _describe(err: jsonschema.ValidationError) -> str:
    kw: Any = err.validator
    val: Any = err.validator_value
    if kw == "type":
        wanted = " or ".join(
            _SCHEMA_TYPES.get(t, t) for t in ([val] if isinstance(val, str) else val)
        )
        return f"must be {wanted}, not {_toml_type(err.instance)}"
    if kw == "enum":
        return "must be one of " + ", ".join(json.dumps(v) for v in val)
    if kw in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        sym = {"minimum": ">=", "maximum": "<=", "exclusiveMinimum": ">", "exclusiveMaximum": "<"}[
            kw
        ]
        return f"must be {sym} {val}"
    if kw == "required":
        missing = [k for k in val if isinstance(err.instance, dict) and k not in err.instance]
        return f"is missing required keys: {', '.join(missing or val)}"
    return err.message


def check_unclaimed(source: ConfigSource | LayeredSource, claimed: set[str]) -> list[str]:
    """Check the top level against the claimed tables; returns the warnings.

    A table no loaded plugin reads is a warning (its plugin may be disabled on
    purpose). A top-level value that is not a table, or a table whose name is a
    near miss of a claimed one (``[permisions]``), is a `ConfigError`: settings
    there would be silently ignored.
    """
    if isinstance(source, LayeredSource):
        warnings = []
        for layer in source.layers:
            warnings.extend(check_unclaimed(layer, claimed))
            if layer.kind != USER and TRUST_TABLE in layer.data:
                line = layer.line_of((TRUST_TABLE,))
                where = f"{layer.file}:{line}: " if layer.file and line else ""
                msg = (
                    f"{where}[trust] is read only from the user config "
                    f"({source.user_file or 'none'}); ignored here"
                )
                log.warning(msg)
                warnings.append(msg)
        return warnings
    warnings = []
    for table, value in source.data.items():
        if table in claimed:
            continue
        if not isinstance(value, dict):
            raise source.error(
                "unknown top-level key; settings belong in a table such as "
                "[permissions] or [results]",
                (table,),
            )
        import difflib  # an unclaimed table only

        close = difflib.get_close_matches(table, sorted(claimed), n=1, cutoff=0.8)
        if close:
            raise source.error(f"unknown table [{table}]; did you mean [{close[0]}]?", (table,))
        line = source.line_of((table,))
        where = f"{source.file}:{line}: " if source.file and line else ""
        msg = f"{where}config table [{table}] is not read by any loaded plugin; ignored"
        log.warning(msg)
        warnings.append(msg)
    return warnings
