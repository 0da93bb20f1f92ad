"""The ``[search]`` table: grep's engine and limits."""

from __future__ import annotations

from typing import Any

CONFIG_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        # x-workspace (callgate's config layering): a workspace config the user config does
        # not trust never picks the program grep runs and may only lower the limits
        "grep_engine": {"enum": ["auto", "rg", "python"], "default": "auto",
                        "x-workspace": "user", "x-kind": "program"},
        "timeout_s": {"type": "number", "exclusiveMinimum": 0, "maximum": 3600, "default": 30,
                      "x-workspace": "min", "x-kind": "limit"},
        "max_file_bytes": {"type": "integer", "minimum": 1024, "default": 67108864,
                           "x-workspace": "min", "x-kind": "limit"},
    },
}
