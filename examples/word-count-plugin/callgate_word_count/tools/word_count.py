"""``word_count``: count the words, lines or characters of one text file in the workspace."""

from __future__ import annotations

import stat
from typing import Any

from callgate import ToolContext, ToolError, ToolSpec
from callgate.files import io_error

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
    """Check the size through the race-free file API, then read and count.

    ``resolve_read`` confines the path and applies the read deny list (a denied file
    looks missing); ``stat()`` looks at it beneath the workspace root the session holds
    open, never by name, so a directory swapped for a symlink meanwhile fails the call
    instead of leading it outside; ``read_text`` reads it the same way.
    """
    target = ctx.files.resolve_read(args["path"])
    try:
        info = target.stat()
    except (FileNotFoundError, NotADirectoryError):
        raise ToolError("not_found", f"word_count: {target.display} does not exist",
                        "not_found") from None
    except OSError as exc:  # e.g. a directory on the way became a symlink: never followed
        raise io_error(target.display, exc) from None
    if not stat.S_ISREG(info.st_mode):
        raise ToolError("tool_error", f"word_count: {target.display} is not a regular file")
    if info.st_size > MAX_BYTES:
        raise ToolError("tool_error", f"word_count: {target.display} is larger than 64 MiB")
    text = ctx.files.read_text(args["path"])
    unit = args.get("unit", "words")
    if unit == "lines":
        return str(len(text.splitlines()))
    if unit == "characters":
        return str(len(text))
    return str(len(text.split()))


SPEC = ToolSpec(name="word_count", description=DESCRIPTION, schema=SCHEMA, read_only=True,
                execute=count)
