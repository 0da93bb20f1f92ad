"""The docs plugin's hook implementation: its config table and the ``docs`` tool."""

from __future__ import annotations

from typing import Any

from callgate import hookimpl

from ._tools import TOOLS

CONFIG_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        # x-workspace (callgate's config layering): a workspace config the user config does
        # not trust may only narrow the user's list and turn callgate's own docs off
        "paths": {"type": "array", "items": {"type": "string", "minLength": 1},
                  "default": [], "x-workspace": "subset", "x-kind": "path"},
        "host_docs": {"type": "boolean", "default": True, "x-workspace": [True, False]},
    },
}


@hookimpl
def callgate_register_tools(registry: Any) -> None:
    registry.add_config("docs", CONFIG_SCHEMA)
    for spec in TOOLS:
        registry.add(spec)
