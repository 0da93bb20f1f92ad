"""The ``[media]`` table."""

from __future__ import annotations

from typing import Any

CONFIG_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    # without vision an image goes to the integrator's describer: the user's choice
    # (x-workspace, callgate's config layering)
    "properties": {"vision": {"type": "boolean", "default": True, "x-workspace": "user"}},
}
