"""write_file: create a file (never over a concurrent creator) or replace an observed one,
keeping its encoding, BOM and CRLF endings (files.md §6.2)."""

from __future__ import annotations

from typing import Any

from callgate import ToolContext
from callgate.files import too_large
from callgate.text import encode_text
from callgate_toolkit.diffs import FilePreview

from .._common import Planned, publish
from .._common import preview as _preview
from .._encoding import create_encoding, write_encoding


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


def execute(ctx: ToolContext, args: dict[str, Any]) -> str:
    return publish(ctx, plan(ctx, args))


def preview(ctx: ToolContext, args: dict[str, Any]) -> FilePreview:
    return _preview(plan(ctx, args))
