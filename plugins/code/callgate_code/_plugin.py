"""Registering ``code_index`` and ``delete_symbol``."""

from __future__ import annotations

from typing import Any

from callgate import PermissionSubject, ToolSpec, hookimpl

from . import _delete, _index
from ._source import CONFIG_SCHEMA


@hookimpl
def callgate_register_tools(registry: Any) -> None:
    registry.add_config("code", CONFIG_SCHEMA)
    registry.add(ToolSpec(
        name="code_index", description=_index.DESCRIPTION, describe=_index.describe,
        schema=_index.SCHEMA,
        execute=_index.execute, read_only=True, visibility="hidden", validate=_index.validate,
        permission_subject=PermissionSubject("path", ("path",))))
    registry.add(ToolSpec(
        name="delete_symbol", description=_delete.DESCRIPTION, schema=_delete.SCHEMA,
        execute=_delete.execute, read_only=False, visibility="hidden",
        mutates_paths=("path",), validate=_delete.validate, preview=_delete.preview,
        permission_subject=PermissionSubject("path", ("path",)), groups=("Edit",)))
