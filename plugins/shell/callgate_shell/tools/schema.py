"""The schema of a shell tool's calls (bash's and pwsh's): declared data, imported while the
plugin registers without the command runner (issue 38)."""

from __future__ import annotations

from typing import Any

DEFAULT_TIMEOUT_MS = 120_000
MAX_TIMEOUT_MS = 600_000


def command_schema(*, description_required: bool) -> dict[str, Any]:
    description: dict[str, Any] = {
        "type": "string", "maxLength": 200,
        "description": "A few words saying what the command does; a background job is "
                       "listed under it.",
    }
    if description_required:
        description["minLength"] = 1
    return {
        "type": "object",
        "properties": {
            "command": {"type": "string", "minLength": 1, "description": "The command to run."},
            "description": description,
            "timeout_ms": {"type": "integer", "minimum": 1, "maximum": MAX_TIMEOUT_MS,
                           "default": DEFAULT_TIMEOUT_MS,
                           "description": "Foreground time limit in milliseconds (default "
                                          "120000, at most 600000); the whole process tree is "
                                          "ended when it passes. Ignored in the background."},
            "run_in_background": {"type": "boolean", "default": False,
                                  "description": "Start a background job and return its id "
                                                 "at once."},
        },
        "required": ["command", "description"] if description_required else ["command"],
        "additionalProperties": False,
    }
