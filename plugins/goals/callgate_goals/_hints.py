"""Validator hints for the retired goal protocols (goals-and-workflow.md §1).

A ``status`` field or ``action: "continue"`` fails the closed schema before any
plugin validator runs, so the hint is added to that ``invalid_arguments``
result while it is shaped. It is advice only: nothing is coerced or run. A call
through a proxy reaches the hook as the call of ``update_goal`` itself (the
host hands every hook the effective call and tool).
"""

from __future__ import annotations

from typing import Any

import attrs
from callgate import ToolResult

STATUS_HINT = ("hint: the status protocol is retired; call get_goal, then pass goal_id, "
               "revision and action")
CONTINUE_HINT = ("hint: there is no continue action; leaving the goal unchanged continues it")


def update_goal_arguments(call: Any, tool: Any) -> dict[str, Any] | None:
    """The (decoded) arguments of an update_goal call, else ``None``."""
    if tool.name != "update_goal" or not isinstance(call.arguments, dict):
        return None
    return call.arguments


def with_retired_protocol_hints(call: Any, tool: Any, result: ToolResult) -> ToolResult | None:
    """The result with the retired-protocol hints inserted, or None when none applies."""
    if result.error is None or result.error.kind != "invalid_arguments":
        return None
    args = update_goal_arguments(call, tool)
    if args is None:
        return None
    hints = []
    if "status" in args:
        hints.append(STATUS_HINT)
    if args.get("action") == "continue":
        hints.append(CONTINUE_HINT)
    if not hints:
        return None
    lines = result.text.split("\n")
    at = next((i for i, line in enumerate(lines) if line.startswith("signature: ")), len(lines))
    text = "\n".join([*lines[:at], *hints, *lines[at:]])
    shaped = result.with_text(text)
    shaped.error = attrs.evolve(result.error, message=text)
    return shaped
