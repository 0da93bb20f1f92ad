"""The goal tools' error results: ``<tool> [GOAL_<CODE>]: <message>`` (goals-and-workflow.md §1)."""

from __future__ import annotations

from callgate import ToolError

#: Codes whose failure has a kind of its own (host.md §7); every other code is ``tool_error``.
_KINDS = {
    "NOT_FOUND": "not_found",
    "ALREADY_EXISTS": "already_exists",
    "STALE_REVISION": "stale_version",
}

CODES = (
    "NOT_FOUND", "ALREADY_EXISTS", "STALE_REVISION", "INVALID_OBJECTIVE", "INVALID_MAX_ROUNDS",
    "INVALID_BLOCK_REASON", "INVALID_EDIT", "INVALID_TRANSITION", "ROUND_LIMIT",
    "BLOCKED_TOO_EARLY", "USER_AUTHORITY_REQUIRED", "UNSUPPORTED_VERSION",
)


def goal_error(tool: str, code: str, message: str) -> ToolError:
    """A `ToolError` the model reads as ``<tool> [GOAL_<CODE>]: <message>``."""
    assert code in CODES, code
    return ToolError(_KINDS.get(code, "tool_error"), f"{tool} [GOAL_{code}]: {message}",
                     f"GOAL_{code}")
