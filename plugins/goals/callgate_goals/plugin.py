"""The goals plugin's hook implementations: tools, config, `GOALS`, turns, hints."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from callgate import ToolResult, hookimpl

from ._hints import with_retired_protocol_hints
from ._keys import GOALS
from .config import CONFIG_SCHEMA
from .tools.specs import TOOLS

if TYPE_CHECKING:
    from ._book import GoalBook


def _goal_book(session: Any) -> GoalBook:
    """The session's goal book: it and its store are imported when a session opens."""
    from ._book import GoalBook

    return GoalBook(session)


@hookimpl
def callgate_register_tools(registry: Any) -> None:
    registry.add_config("goals", CONFIG_SCHEMA)
    registry.add_session_extension(GOALS, _goal_book)
    for spec in TOOLS:
        registry.add(spec)


@hookimpl
def callgate_turn_start(session: Any, origin: str) -> None:
    session.extension(GOALS).turn_started(origin)


@hookimpl
def callgate_shape_result(call: Any, tool: Any, result: ToolResult,
                          session: Any) -> ToolResult | None:
    return with_retired_protocol_hints(call, tool, result)
