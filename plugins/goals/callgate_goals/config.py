"""The ``[goals]`` table."""

from __future__ import annotations

from typing import Any

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
