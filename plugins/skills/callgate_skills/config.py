"""The ``[skills]`` table: more folders to find skills in."""

from __future__ import annotations

from typing import Any

CONFIG_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        # may point outside the workspace (~ expands): a workspace config that is not
        # trusted may only narrow the user's list (x-workspace, callgate's config layering)
        "paths": {"type": "array", "items": {"type": "string", "minLength": 1}, "default": [],
                  "x-workspace": "subset", "x-kind": "path"},
    },
}
