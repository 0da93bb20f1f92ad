"""The ``[memory]`` table: where facts are kept and how large one may be."""

from __future__ import annotations

from typing import Any

CONFIG_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        # x-workspace (callgate's config layering): where facts are written (either may
        # lead outside the workspace) is the user's; a workspace may only lower the limit
        "project_dir": {"type": "string", "default": "", "x-workspace": "user",
                        "x-kind": "path"},
        "global_dir": {"type": "string", "default": "", "x-workspace": "user",
                       "x-kind": "path"},
        "max_fact_bytes": {"type": "integer", "minimum": 256, "maximum": 1048576,
                           "default": 8192, "x-workspace": "min", "x-kind": "limit"},
    },
}
