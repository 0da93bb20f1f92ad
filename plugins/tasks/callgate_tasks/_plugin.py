"""The tasks plugin's hook implementations: the runner hook spec, config, records, tools."""

from __future__ import annotations

from typing import Any

from callgate import hookimpl

from . import hookspecs
from ._book import SubagentBook
from ._tools import TOOLS

CONFIG_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "max_parallel": {"type": "integer", "minimum": 1, "maximum": 8, "default": 4},
    },
}


@hookimpl
def callgate_register_tools(registry: Any) -> None:
    registry.add_hookspecs(hookspecs)
    registry.add_config("tasks", CONFIG_SCHEMA)
    registry.add_session_extension("subagents", SubagentBook)
    for spec in TOOLS:
        registry.add(spec)
