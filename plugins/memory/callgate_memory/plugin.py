"""The memory plugin's hook implementation: config, tools and `MEMORY`."""

from __future__ import annotations

from typing import Any

from callgate import hookimpl

from ._session import MEMORY, SessionMemory
from .config import CONFIG_SCHEMA
from .tools.memory import TOOLS


@hookimpl
def callgate_register_tools(registry: Any) -> None:
    registry.add_config("memory", CONFIG_SCHEMA)
    registry.add_session_extension(MEMORY, SessionMemory)
    for spec in TOOLS:
        registry.add(spec)
