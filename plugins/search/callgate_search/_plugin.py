"""Registering ``glob``, ``grep`` and ``ls`` and the ``[search]`` config table."""

from __future__ import annotations

from typing import Any

from callgate import PermissionSubject, Registry, ToolSpec, hookimpl

from . import _glob, _grep, _ls
from ._engine_rg import find_rg

CONFIG_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        # x-workspace (callgate's config layering): a workspace config the user config does
        # not trust never picks the program grep runs and may only lower the limits
        "grep_engine": {"enum": ["auto", "rg", "python"], "default": "auto",
                        "x-workspace": "user", "x-kind": "program"},
        "timeout_s": {"type": "number", "exclusiveMinimum": 0, "maximum": 3600, "default": 30,
                      "x-workspace": "min", "x-kind": "limit"},
        "max_file_bytes": {"type": "integer", "minimum": 1024, "default": 67108864,
                           "x-workspace": "min", "x-kind": "limit"},
    },
}


@hookimpl
def callgate_register_tools(registry: Registry) -> None:
    config = registry.add_config("search", CONFIG_SCHEMA)
    rg = find_rg()
    if config["grep_engine"] == "rg" and rg is None:  # fails boot naming file, key and line
        raise registry.config_error(
            'grep_engine = "rg" but no rg binary was found next to the Python interpreter or '
            'on PATH; install the PyPI package "ripgrep" or use "auto"',
            ("search", "grep_engine"))
    grep = _grep.Grep(rg)
    registry.add(ToolSpec(
        name="grep", description=_grep.DESCRIPTION, schema=_grep.SCHEMA, execute=grep.execute,
        output_schema=_grep.OUTPUT_SCHEMA, read_only=True, visibility="hidden",
        validate=_grep.validate,
        permission_subject=PermissionSubject("pattern", ("pattern",))))
    registry.add(ToolSpec(
        name="glob", description=_glob.DESCRIPTION, schema=_glob.SCHEMA, execute=_glob.execute,
        output_schema=_glob.OUTPUT_SCHEMA, read_only=True, visibility="hidden",
        validate=_glob.validate,
        permission_subject=PermissionSubject("pattern", ("pattern",))))
    registry.add(ToolSpec(
        name="ls", description=_ls.DESCRIPTION, schema=_ls.SCHEMA, execute=_ls.execute,
        output_schema=_ls.OUTPUT_SCHEMA, read_only=True, visibility="hidden",
        permission_subject=PermissionSubject("path", ("path",))))


__all__ = ["CONFIG_SCHEMA", "callgate_register_tools"]
