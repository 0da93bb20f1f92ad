"""The ``[sandbox]`` table: its schema, and the checks the schema cannot make (paths that
must exist, backend names that only exist once plugins registered), done at boot.

A table that breaks the schema is left to the core, which rejects it right
after registration naming file, key and line; the checks here report the same way.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import attrs
from callgate import ConfigError

TABLE = "sandbox"
AUTO, NONE = "auto", "none"

#: ``x-workspace`` (callgate's config layering): a workspace config the user config does not
#: trust may turn the sandbox on or keep the network out, never the reverse, and may only
#: narrow the extra paths.
CONFIG_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "enabled": {"enum": [True, False, AUTO], "default": AUTO,
                    "x-workspace": [False, AUTO, True]},
        "backend": {"type": "string", "minLength": 1, "default": AUTO, "x-workspace": "user"},
        "network": {"type": "boolean", "default": True, "x-workspace": [True, False]},
        "writable": {"type": "array", "items": {"type": "string"}, "default": [],
                     "x-workspace": "subset"},
        "readable": {"type": "array", "items": {"type": "string"}, "default": [],
                     "x-workspace": "subset"},
    },
}


@attrs.frozen
class SandboxConfig:
    """The checked table; ``writable`` and ``readable`` are canonical absolute paths.

    ``enabled`` is ``"auto"`` (on where a backend works, else off with a boot
    notice), ``True`` (a working backend is required) or ``False``.
    """

    enabled: bool | str = AUTO
    backend: str = AUTO
    network: bool = True
    writable: tuple[str, ...] = ()
    readable: tuple[str, ...] = ()


def config_error(source: Any, message: str, path: tuple[Any, ...],
                 value: str | None = None) -> ConfigError:
    """A `ConfigError` naming file, key and line (the list item's own line for ``value``)."""
    if source is None or not hasattr(source, "error"):
        return ConfigError(message, key=".".join(str(p) for p in path))
    error = source.error(message, path)
    line = None
    if value is not None and hasattr(source, "line_of_value"):
        line = source.line_of_value(path[:2], value)
    if line is None:
        return error
    return ConfigError(error.reason, file=error.file, key=error.key, line=line)


def read_config(source: Any, backend_names: Sequence[str]) -> SandboxConfig | None:
    """The checked ``[sandbox]`` table, ``None`` when it breaks the schema (the core reports
    that), or a `ConfigError` for a path or backend name that cannot work."""
    data = getattr(source, "data", {}) if source is not None else {}
    raw = data.get(TABLE, {})
    if not isinstance(raw, Mapping):
        return None
    if raw:  # the schema requires no key: an empty table is valid without jsonschema (~35 ms)
        import jsonschema

        if not jsonschema.Draft202012Validator(CONFIG_SCHEMA).is_valid(dict(raw)):
            return None
    values = {name: raw.get(name, spec["default"])
              for name, spec in CONFIG_SCHEMA["properties"].items()}
    known = [AUTO, *backend_names, NONE]
    if values["backend"] not in known:
        raise config_error(source, f"unknown backend {values['backend']!r}; known backends: "
                                   f"{', '.join(known)}", (TABLE, "backend"))
    return SandboxConfig(
        enabled=values["enabled"], backend=values["backend"], network=values["network"],
        writable=_paths(source, "writable", values["writable"], write=True),
        readable=_paths(source, "readable", values["readable"], write=False))


def _paths(source: Any, key: str, values: Sequence[str], *, write: bool) -> tuple[str, ...]:
    out: list[str] = []
    for index, value in enumerate(values):
        where = (TABLE, key, index)
        if not os.path.isabs(value):
            raise config_error(source, f"{value!r} is not an absolute path; give the full "
                                       "path (~ and relative paths are not expanded)",
                               where, value)
        if not os.path.exists(value):
            raise config_error(source, f"{value!r} does not exist; create it or remove it "
                                       "from the list", where, value)
        canonical = os.path.realpath(value)
        if write and canonical == "/":
            raise config_error(source, f"{value!r} is the root directory, and a writable root "
                                       "would confine nothing; list the directories commands "
                                       "need to write", where, value)
        if canonical not in out:
            out.append(canonical)
    return tuple(out)
