"""The memory plugin's hook implementation: config, tools and session extensions."""

from __future__ import annotations

from typing import Any

from callgate import hookimpl

from ._session import SessionMemory
from ._tools import TOOLS

CONFIG_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "project_dir": {"type": "string", "default": ""},
        "global_dir": {"type": "string", "default": ""},
        "max_fact_bytes": {"type": "integer", "minimum": 256, "maximum": 1048576,
                           "default": 8192},
    },
}


@hookimpl
def callgate_register_tools(registry: Any) -> None:
    registry.add_config("memory", CONFIG_SCHEMA)
    registry.add_session_extension("memory", SessionMemory)
    registry.add_session_extension("memory_prompt", lambda session: session.memory.prompt)
    registry.add_session_extension("recall", lambda session: session.memory.recall)
    for spec in TOOLS:
        registry.add(spec)
