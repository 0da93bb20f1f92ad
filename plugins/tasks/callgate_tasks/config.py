"""The ``[tasks]`` table: how many subagents run at once and how deep they nest."""

from __future__ import annotations

from typing import Any

CONFIG_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        # x-workspace (callgate's config layering): a workspace config the user config does
        # not trust may only lower these
        "max_parallel": {"type": "integer", "minimum": 1, "maximum": 8, "default": 4,
                         "x-workspace": "min", "x-kind": "limit"},
        "max_depth": {"type": "integer", "minimum": 1, "maximum": 5, "default": 3,
                      "description": "How deep subagents may nest below the session the "
                                     "integrator opened.",
                      "x-workspace": "min", "x-kind": "limit"},
        "fleet_max_parallel": {"type": "integer", "minimum": 1, "maximum": 64, "default": 16,
                               "x-workspace": "min", "x-kind": "limit"},
        "fleet_max_writers": {"type": "integer", "minimum": 1, "maximum": 16, "default": 4,
                              "x-workspace": "min", "x-kind": "limit"},
    },
}
