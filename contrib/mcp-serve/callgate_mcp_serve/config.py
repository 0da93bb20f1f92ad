"""The ``[serve]`` table: the MCP server's settings."""

from __future__ import annotations

from typing import Any

#: ``[serve] approval_timeout_s`` when unset: how long a call waits for its approval.
DEFAULT_APPROVAL_TIMEOUT_S = 300.0
SERVE_CONFIG_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "approval_timeout_s": {
            "type": "number", "exclusiveMinimum": 0, "maximum": 86400,
            "default": DEFAULT_APPROVAL_TIMEOUT_S,
            "description": "How long a call waits for its approval in the MCP client; "
                           "unanswered, it is refused as not approved.",
            # a workspace may only shorten it (x-workspace, callgate's config layering)
            "x-workspace": "min", "x-kind": "limit"},
    },
    "additionalProperties": False,
}
