"""An example third-party callgate plugin: ``word_count``, a small read-only tool.

This package is the template for plugin authors. It uses only the public API
(``callgate``), is discovered through its entry point (see ``pyproject.toml``:
``[project.entry-points.callgate] word_count = "callgate_word_count"``), and is
tested through the full pipeline with the ``callgate_session`` fixture.
"""

from __future__ import annotations

import os
from typing import Any

from callgate import ToolContext, ToolError, ToolSpec, hookimpl

SCHEMA = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "minLength": 1, "maxLength": 4096,
                 "description": "The text file to count, relative to the workspace."},
        "unit": {"enum": ["words", "lines", "characters"], "default": "words",
                 "description": "What to count."},
    },
    "required": ["path"],
    "additionalProperties": False,
}

DESCRIPTION = (
    "Count the words (or lines, or characters) of one text file in the workspace and return "
    "the number alone. Use it to size a file before reading it."
)

MAX_BYTES = 64 << 20


def count(ctx: ToolContext, args: dict[str, Any]) -> str:
    """Read the file through the observed-file API and count."""
    target = ctx.workspace.resolve(args["path"])
    try:
        size = os.stat(target.path).st_size
    except FileNotFoundError:
        raise ToolError("not_found", f"word_count: {target.display} does not exist",
                        "not_found") from None
    if size > MAX_BYTES:
        raise ToolError("tool_error", f"word_count: {target.display} is larger than 64 MiB")
    text = ctx.files.read_text(args["path"])
    unit = args.get("unit", "words")
    if unit == "lines":
        return str(len(text.splitlines()))
    if unit == "characters":
        return str(len(text))
    return str(len(text.split()))


@hookimpl
def callgate_register_tools(registry: Any) -> None:
    registry.add(ToolSpec(name="word_count", description=DESCRIPTION, schema=SCHEMA,
                          read_only=True, execute=count))
