"""The goals plugin's hook implementations: tools, config, `GOALS`, turns, hints."""

from __future__ import annotations

from typing import Any

from callgate import ToolResult, hookimpl

from ._book import GOALS, GoalBook
from ._hints import with_retired_protocol_hints
from ._tools import TOOLS

CONFIG_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        # how long a goal runs before the model may give up: neither way is "tighter",
        # so only the user sets it (x-workspace, callgate's config layering)
        "min_rounds_before_block": {"type": "integer", "minimum": 0, "default": 1,
                                    "x-workspace": "user", "x-kind": "limit"},
    },
}


@hookimpl
def callgate_register_tools(registry: Any) -> None:
    registry.add_config("goals", CONFIG_SCHEMA)
    registry.add_session_extension(GOALS, GoalBook)
    for spec in TOOLS:
        registry.add(spec)


@hookimpl
def callgate_turn_start(session: Any, origin: str) -> None:
    session.extension(GOALS).turn_started(origin)


@hookimpl
def callgate_shape_result(call: Any, tool: Any, result: ToolResult,
                          session: Any) -> ToolResult | None:
    return with_retired_protocol_hints(call, tool, result)
