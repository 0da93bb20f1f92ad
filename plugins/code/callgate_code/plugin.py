"""The code plugin's hook implementations: registering ``code_index`` and ``delete_symbol``."""

from __future__ import annotations

from typing import Any

from callgate import hookimpl

from .config import CONFIG_SCHEMA
from .tools import code_index, delete_symbol


@hookimpl
def callgate_register_tools(registry: Any) -> None:
    registry.add_config("code", CONFIG_SCHEMA)
    registry.add(code_index.SPEC)
    registry.add(delete_symbol.SPEC)
