"""The plugin's config table: its schema, with defaults."""

from __future__ import annotations

from typing import Any

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
