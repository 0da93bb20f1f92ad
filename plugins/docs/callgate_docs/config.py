"""The ``[docs]`` table: which documentation folders the ``docs`` tool reads."""

from __future__ import annotations

from typing import Any

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
