"""The ask plugin's hook implementations: its hook spec, its config table, the tool."""

from __future__ import annotations

from typing import Any

from callgate import hookimpl

from . import hookspecs
from ._tool import ASK

CONFIG_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "timeout_seconds": {
            "type": "integer",
            "minimum": 1,
            "maximum": 86400,
            "default": 600,
            "description": "How long ask waits for the user before telling the model to assume.",
            # x-workspace (callgate's config layering): a workspace may only shorten it
            "x-workspace": "min",
            "x-kind": "limit",
        },
    },
}


@hookimpl
def callgate_register_tools(registry: Any) -> None:
    registry.add_hookspecs(hookspecs)
    registry.add_config("ask", CONFIG_SCHEMA)
    registry.add(ASK)
    # read-only (it changes nothing), but a strict read-only child has no user to ask
    registry.deny_in_read_only_children("ask")
