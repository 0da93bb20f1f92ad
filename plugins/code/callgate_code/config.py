"""The ``[code]`` table: how large a file one call may parse."""

from __future__ import annotations

from typing import Any

from callgate import ToolContext

DEFAULT_MAX_FILE_BYTES = 1 << 20
CONFIG_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        # a workspace may only lower it (x-workspace, callgate's config layering): a parse
        # costs ~100-350 x the file in memory
        "max_file_bytes": {"type": "integer", "minimum": 1024, "maximum": 1 << 30,
                           "default": DEFAULT_MAX_FILE_BYTES, "x-workspace": "min",
                           "x-kind": "limit"},
    },
}


def max_file_bytes(ctx: ToolContext) -> int:
    return int(ctx.host.plugin_config_value("code", "max_file_bytes", DEFAULT_MAX_FILE_BYTES))
