"""``session:tool_result``: page through a stored tool result (capability.md §6).

It wraps the core's result store of the *current* session (never a parent's
or a child's), by UTF-8 byte offset, with the header host.md §7 defines.
"""

from __future__ import annotations

from typing import Any

from callgate import ToolContext, ToolError, ToolResult, ToolSpec

NAME = "session_tool_result"
DEFAULT_LIMIT = 16384
MAX_LIMIT = 24576
# Room kept for the header line and notices when a page must fit the session's
# visible limit ([results] max_chars): a page the core would truncate again is
# no use to anyone.
_HEADER_ROOM = 512

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "tool_call_id": {"type": "string", "minLength": 1, "maxLength": 256,
                         "description": "The id of the call whose result to read."},
        "result_ref": {"type": "string", "pattern": "^tr-[0-9a-f]{24}$",
                       "description": "The result_ref from the truncation marker; needed when "
                                      "one call id has several results."},
        "offset": {"type": "integer", "minimum": 0, "default": 0,
                   "description": "UTF-8 byte offset to start from."},
        "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT,
                  "default": DEFAULT_LIMIT, "description": "Most bytes to return."},
    },
    "required": ["tool_call_id"],
    "additionalProperties": False,
}

DESCRIPTION = (
    "Read a stored tool result page by page. Every result is kept whole even when the "
    "visible text was cut; the truncation marker names its result_ref and the missing "
    "byte range. Pass tool_call_id (and result_ref when given), start at the first missing "
    "byte with offset, and continue at next_offset until complete is true. Each page "
    "starts with a JSON header line: result_ref, offset, next_offset, total_bytes, sha256, "
    "complete."
)


def execute(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    call_id = args["tool_call_id"]
    if call_id.startswith("sa_"):
        return ToolResult.failure(
            "tool_error", f'"{call_id}" is a subagent reference, not a tool call id; use '
            "read_subagent_result for subagent answers", "subagent_reference",
            {"executed": False})
    limit = int(args.get("limit", DEFAULT_LIMIT))
    visible = getattr(ctx.session, "max_chars", None)
    if isinstance(visible, int) and visible - _HEADER_ROOM < limit:
        limit = max(1, visible - _HEADER_ROOM)
    try:
        text = ctx.session.results.page(call_id, args.get("result_ref"),
                                        int(args.get("offset", 0)), limit)
    except ToolError as exc:
        meta = dict(exc.meta)
        meta.setdefault("executed", False)
        return ToolResult.failure(exc.kind, exc.message, exc.signature, meta)
    return ToolResult.ok(text)


SPEC = ToolSpec(runs_at="host", name=NAME, description=DESCRIPTION, schema=SCHEMA, execute=execute,
                read_only=True)
