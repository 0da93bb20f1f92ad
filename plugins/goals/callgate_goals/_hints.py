"""Validator hints for the retired goal protocols (goals-and-workflow.md §1).

A ``status`` field or ``action: "continue"`` fails the closed schema before any
plugin validator runs, so the hint is added to that ``invalid_arguments``
result while it is shaped. It is advice only: nothing is coerced or run. The
call may come directly or through ``use_capability`` (``tool:update_goal``).
"""

from __future__ import annotations

import json
from typing import Any

import attrs
from callgate import ToolResult

STATUS_HINT = ("hint: the status protocol is retired; call get_goal, then pass goal_id, "
               "revision and action")
CONTINUE_HINT = ("hint: there is no continue action; leaving the goal unchanged continues it")


def _object(value: Any) -> dict[str, Any] | None:
    if isinstance(value, str | bytes):
        try:
            value = json.loads(value)
        except (ValueError, RecursionError):
            return None
    return value if isinstance(value, dict) else None


def update_goal_arguments(call: Any, tool: Any) -> dict[str, Any] | None:
    """The arguments meant for update_goal, whether called directly or through the proxy."""
    args = _object(call.arguments)
    if args is None:
        return None
    if tool.name == "update_goal":
        return args
    if tool.name == "use_capability" and args.get("capability_id") == "tool:update_goal":
        return _object(args.get("arguments"))
    return None


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
