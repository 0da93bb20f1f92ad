"""write_file: create a file (never over a concurrent creator) or replace an observed one,
keeping its encoding, BOM and CRLF endings (files.md §6.2)."""

from __future__ import annotations

from typing import Any

from callgate import PathRole, PermissionSubject, ToolContext, ToolSpec
from callgate.files import too_large
from callgate.text import encode_text

from .._common import Planned, path_schema, preview, publish
from .._encoding import create_encoding, write_encoding

SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["path", "content"],
    "properties": {
        "path": path_schema("File to create or replace: relative to the workspace, or "
                            "absolute."),
        "content": {"type": "string", "description": "The complete new content (may be empty)."},
    },
}

DESCRIPTION = (
    "Create a text file, or replace the whole content of one. A new file is created without "
    "ever overwriting a file someone else created meanwhile. Replacing an existing file "
    "needs a current observation of it in this session: a read_file window or an earlier "
    "successful edit. The file keeps its encoding, BOM and CRLF line endings (a file whose "
    "encoding was only guessed is written as UTF-8). For a change to part of a file, "
    "edit_file is cheaper and safer."
)


def plan(ctx: ToolContext, args: dict[str, Any]) -> Planned:
    gated = ctx.gated["path"]
    content: str = args["content"]
    limit = ctx.files.max_edit_bytes
    p = gated.display
    if gated.stat is None:
        encoding = create_encoding(ctx.files.declared_encoding(gated.resolved), content, p)
        data = encode_text(content, encoding)
        if len(data) > limit:
            raise too_large(p, len(data), limit, content=True)
        shown = "" if encoding == "utf-8" else f", {encoding}"
        return Planned(gated, None, data, content,
                       done=f"created {p} ({len(data)} bytes{shown})", noop="", show_diff=False)
    source = ctx.files.load(gated, tool="write_file")
    assert source.decoded is not None
    text = source.decoded.adapt(content)
    encoding, note = write_encoding(source, text)
    data = source.encode(text) if encoding == source.encoding else encode_text(text, encoding)
    if len(data) > limit:
        raise too_large(p, len(data), limit, content=True)
    return Planned(gated, source, data, text,
                   done=f"wrote {len(data)} bytes to {p}" + (f" ({note})" if note else ""),
                   noop=f"{p} already has exactly this content; nothing written",
                   show_diff=False)


SPEC = ToolSpec(
    name="write_file", description=DESCRIPTION, schema=SCHEMA,
    execute=lambda ctx, args: publish(ctx, plan(ctx, args)),
    preview=lambda ctx, args: preview(plan(ctx, args)),
    mutates_paths=(PathRole("path", "create_or_modify"),),
    permission_subject=PermissionSubject("path", ("path",)),
    groups=("Edit",), visibility="surface", surface_order=70,
)
