"""insert_lines: insert text after a line number (the text editor's ``insert``, issue 32).

Anthropic's ``str_replace_based_edit_tool`` has an ``insert`` command (``insert_line``,
0 for the start of the file); this is the canonical tool it maps onto, through the same
gates as every edit: confinement, protected paths, the Edit group, the writer lease and
the stale guard (the file must have been read in its current version).
"""

from __future__ import annotations

from typing import Any

from callgate import ToolContext
from callgate.text import split_lines
from callgate_toolkit.diffs import FilePreview

from .._common import Planned, fail, publish
from .._common import preview as _preview
from .._encoding import DECLARATION_CHARS, check_declaration


def plan(ctx: ToolContext, args: dict[str, Any]) -> Planned:
    gated = ctx.gated["path"]
    source = ctx.files.load(gated, tool="insert_lines")
    p = gated.display
    text = source.text
    lines = split_lines(text)
    after = args["line"]
    if after > len(lines):
        raise fail("FS_INVALID_RANGE", f"line {after} is past the end of {p} ({len(lines)} "
                   f"lines); use a line from 0 to {len(lines)}")
    crlf = sum(line.endswith("\r\n") for line in lines) * 2 > len(lines) > 0
    eol = "\r\n" if crlf else "\n"
    new = args["text"].replace("\r\n", "\n")
    if not new.endswith("\n"):
        new += "\n"
    new = new.replace("\n", eol)
    before = lines[:after]
    if before and not before[-1].endswith("\n"):  # after a last line without a terminator
        before[-1] += eol
        new = new[: -len(eol)]
    new_text = "".join(before) + new + "".join(lines[after:])
    if new_text[:DECLARATION_CHARS] != text[:DECLARATION_CHARS]:
        check_declaration(source, new_text[:DECLARATION_CHARS])
    count = len(split_lines(new))
    return Planned(gated, source, source.encode(new_text), new_text,
                   done=f"inserted {count} line(s) after line {after} of {p}",
                   noop=f"{p} already has exactly this content; nothing written")


def execute(ctx: ToolContext, args: dict[str, Any]) -> str:
    return publish(ctx, plan(ctx, args))


def preview(ctx: ToolContext, args: dict[str, Any]) -> FilePreview:
    return _preview(plan(ctx, args))
