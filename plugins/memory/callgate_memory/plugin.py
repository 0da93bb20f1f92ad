"""The memory plugin's hook implementation: config, tools and session extensions."""

from __future__ import annotations

from typing import Any

from callgate import hookimpl

from ._session import SessionMemory
from .config import CONFIG_SCHEMA
from .tools.memory import TOOLS


@hookimpl
def callgate_register_tools(registry: Any) -> None:
    registry.add_config("memory", CONFIG_SCHEMA)
    registry.add_session_extension("memory", SessionMemory)
    registry.add_session_extension("memory_prompt", lambda session: session.memory.prompt)
    registry.add_session_extension("recall", lambda session: session.memory.recall)
    for spec in TOOLS:
        registry.add(spec)
