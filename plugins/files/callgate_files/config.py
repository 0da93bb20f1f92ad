"""The ``[files]`` table (files.md, "Config")."""

from __future__ import annotations

from typing import Any

#: The files plugin's config table (files.md, "Config"). ``x-workspace`` (callgate's config
#: layering): what a workspace config the user config does not trust may do with each key.
CONFIG_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "max_edit_bytes": {"type": "integer", "minimum": 1, "default": 64 << 20,
                           "x-workspace": "min", "x-kind": "limit"},
        # the model is told when an observed file changes: a workspace may not turn it off
        "watch": {"type": "boolean", "default": True, "x-workspace": [False, True]},
        "stale_detail": {"type": "boolean", "default": True, "x-workspace": [False, True]},
        "read_denylist": {"type": "boolean", "default": False, "x-workspace": [False, True]},
        # enforced by the core's host gate and the sandbox (callgate._protected)
        "protected": {"type": "array", "items": {"type": "string", "minLength": 1},
                      "default": [], "x-workspace": "add", "x-kind": "denylist"},
        "allow_protected": {"type": "array", "items": {"type": "string", "minLength": 1},
                            "default": [], "x-workspace": "user", "x-layers": "concat",
                            "x-kind": "allowlist"},
        # path glob → encoding (issue 26); read by the core's decoding (callgate._declared).
        # User-only: it decides the bytes every edit writes, which the model never sees
        "encodings": {"type": "object", "default": {}, "x-workspace": "user",
                      "additionalProperties": {"type": "string", "minLength": 1}},
        # encodings tried in order for a file that is not UTF-8 and declares nothing
        # (issue 36); user-only for the same reason as encodings
        "fallback_encodings": {"type": "array", "default": [], "x-workspace": "user",
                               "items": {"type": "string", "minLength": 1}},
    },
}
