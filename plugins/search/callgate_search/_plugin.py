"""Registering ``glob``, ``grep`` and ``ls`` and the ``[search]`` config table."""

from __future__ import annotations

from typing import Any

from callgate import PermissionSubject, ToolSpec, hookimpl

from . import _glob, _grep, _ls
from ._engine_rg import find_rg

CONFIG_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "grep_engine": {"enum": ["auto", "rg", "python"], "default": "auto"},
        "timeout_s": {"type": "number", "exclusiveMinimum": 0, "maximum": 3600, "default": 30},
        "max_file_bytes": {"type": "integer", "minimum": 1024, "default": 67108864},
    },
}


def _check_engine(host: Any, rg: str | None) -> None:
    """``grep_engine = "rg"`` without a binary fails boot, naming the file, key and line."""
    source = getattr(host, "config_source", None)
    table = getattr(source, "data", {}).get("search") if source is not None else None
    if isinstance(table, dict) and table.get("grep_engine") == "rg" and rg is None:
        raise source.error(
            'grep_engine = "rg" but no rg binary was found next to the Python interpreter or '
            'on PATH; install the PyPI package "ripgrep" or use "auto"',
            ("search", "grep_engine"))


@hookimpl
def callgate_register_tools(registry: Any, host: Any) -> None:
    rg = find_rg()
    _check_engine(host, rg)
    registry.add_config("search", CONFIG_SCHEMA)
    grep = _grep.Grep(rg)
    registry.add(ToolSpec(
        name="grep", description=_grep.DESCRIPTION, schema=_grep.SCHEMA, execute=grep.execute,
        read_only=True, visibility="hidden", validate=_grep.validate,
        permission_subject=PermissionSubject("pattern", ("pattern",))))
    registry.add(ToolSpec(
        name="glob", description=_glob.DESCRIPTION, schema=_glob.SCHEMA, execute=_glob.execute,
        read_only=True, visibility="hidden", validate=_glob.validate,
        permission_subject=PermissionSubject("pattern", ("pattern",))))
    registry.add(ToolSpec(
        name="ls", description=_ls.DESCRIPTION, schema=_ls.SCHEMA, execute=_ls.execute,
        read_only=True, visibility="hidden",
        permission_subject=PermissionSubject("path", ("path",))))


__all__ = ["CONFIG_SCHEMA", "callgate_register_tools"]
