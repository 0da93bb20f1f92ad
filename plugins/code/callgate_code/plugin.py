"""The code plugin's hook implementations: registering ``code_index`` and ``delete_symbol``."""

from __future__ import annotations

from typing import Any

from callgate import hookimpl

from .config import CONFIG_SCHEMA
from .tools.specs import CODE_INDEX_SPEC, DELETE_SYMBOL_SPEC


@hookimpl
def callgate_register_tools(registry: Any) -> None:
    registry.add_config("code", CONFIG_SCHEMA)
    # declared data: each tool's module is imported by its first call (callgate.deferred)
    registry.add(CODE_INDEX_SPEC)
    registry.add(DELETE_SYMBOL_SPEC)
