"""The ``[sandbox]`` table: its schema, and the checks the schema cannot make (paths that
must exist, backend names that only exist once plugins registered), done at boot.

A table that breaks the schema is left to the core, which rejects it right
after registration naming file, key and line; the checks here report the same way.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs
from callgate.host import ConfigError

#: ``registry.config_error``: (message, key path, list item) -> ConfigError
ErrorFactory = Callable[..., ConfigError]

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
                    "x-workspace": [False, AUTO, True], "x-kind": "scope"},
        "backend": {"type": "string", "minLength": 1, "default": AUTO, "x-workspace": "user",
                    "x-kind": "program"},
        "network": {"type": "boolean", "default": True, "x-workspace": [True, False],
                    "x-kind": "scope"},
        "writable": {"type": "array", "items": {"type": "string"}, "default": [],
                     "x-workspace": "subset", "x-kind": "path"},
        "readable": {"type": "array", "items": {"type": "string"}, "default": [],
                     "x-workspace": "subset", "x-kind": "path"},
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


def read_config(table: Mapping[str, Any], backend_names: Sequence[str],
                error: ErrorFactory) -> SandboxConfig:
    """The checked ``[sandbox]`` table (valid for the schema, defaults applied: the core
    validated it when the plugin claimed it), or a `ConfigError` for a path or backend name
    that cannot work."""
    known = [AUTO, *backend_names, NONE]
    if table["backend"] not in known:
        raise error(f"unknown backend {table['backend']!r}; known backends: "
                    f"{', '.join(known)}", (TABLE, "backend"))
    return SandboxConfig(
        enabled=table["enabled"], backend=table["backend"], network=table["network"],
        writable=_paths(error, "writable", table["writable"], write=True),
        readable=_paths(error, "readable", table["readable"], write=False))


def _paths(error: ErrorFactory, key: str, values: Sequence[str], *,
           write: bool) -> tuple[str, ...]:
    out: list[str] = []
    for index, value in enumerate(values):
        where = (TABLE, key, index)
        if not os.path.isabs(value):
            raise error(f"{value!r} is not an absolute path; give the full path (~ and relative "
                        "paths are not expanded)", where, value)
        if not os.path.exists(value):
            raise error(f"{value!r} does not exist; create it or remove it from the list", where,
                        value)
        canonical = os.path.realpath(value)
        if write and canonical == "/":
            raise error(f"{value!r} is the root directory, and a writable root would confine "
                        "nothing; list the directories commands need to write", where, value)
        if canonical not in out:
            out.append(canonical)
    return tuple(out)
