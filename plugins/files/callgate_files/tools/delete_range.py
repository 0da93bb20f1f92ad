"""delete_range: delete whole lines between two anchor lines (files.md §6.5)."""

from __future__ import annotations

from typing import Any

from callgate import ToolContext
from callgate.text import display_line, split_lines
from callgate_toolkit.diffs import FilePreview

from .._braces import cut_block, guarded
from .._common import Planned, fail, publish
from .._common import preview as _preview
from .._encoding import DECLARATION_CHARS, check_declaration
from .._matching import line_hint


def _find(lines: list[str], anchor: str, name: str, p: str) -> int:
    found = [k for k, line in enumerate(lines, 1) if display_line(line) == anchor]
    if not found:
        hint = line_hint(lines, anchor, name)
        raise fail("FS_NO_MATCH", f"{name} matches no whole line of {p}; copy one line "
                   "exactly, indentation included" + (f"\n{hint}" if hint else ""))
    if len(found) > 1:
        shown = ", ".join(str(k) for k in found[:5]) + (", …" if len(found) > 5 else "")
        raise fail("FS_NOT_UNIQUE", f"{name} matches {len(found)} lines of {p} (lines "
                   f"{shown}); use a line that occurs once")
    return found[0]


def plan(ctx: ToolContext, args: dict[str, Any]) -> Planned:
    gated = ctx.gated["path"]
    source = ctx.files.load(gated, tool="delete_range")
    p = gated.display
    text = source.text
    lines = split_lines(text)
    s = _find(lines, args["start_anchor"], "start_anchor", p)
    e = _find(lines, args["end_anchor"], "end_anchor", p)
    if s > e:
        raise fail("FS_INVALID_RANGE", f"start_anchor (line {s}) comes after end_anchor (line "
                   f"{e}); swap them")
    noop = f"{p} already has exactly this content; nothing written"
    if args.get("inclusive", True):
        first, last = s, e
    else:
        if s == e:
            raise fail("FS_INVALID_RANGE", f"start_anchor and end_anchor are the same line "
                       f"(line {s}), so an exclusive range is empty; set inclusive=true to "
                       "delete that line")
        if e == s + 1:
            nothing = f"nothing between lines {s} and {e} of {p}; nothing changed"
            return Planned(gated, source, source.data, text, done=nothing, noop=nothing)
        first, last = s + 1, e - 1
    if guarded(p):
        cut = cut_block(lines, first, last)
        if cut is not None:
            raise fail("FS_INVALID_RANGE", f"lines {first}-{last} would cut the block at lines "
                       f"{cut[0]}-{cut[1]}; widen or narrow the range")
    kept_before = lines[: first - 1]
    kept_after = lines[last:]
    if not kept_after and not lines[last - 1].endswith("\n") and kept_before:
        # the deleted last line had no terminator: the new last line loses its own
        tail = kept_before[-1]
        kept_before[-1] = tail[:-2] if tail.endswith("\r\n") else tail[:-1]
    new_text = "".join(kept_before) + "".join(kept_after)
    if new_text[:DECLARATION_CHARS] != text[:DECLARATION_CHARS]:
        check_declaration(source, new_text[:DECLARATION_CHARS])
    count = last - first + 1
    return Planned(gated, source, source.encode(new_text), new_text,
                   done=f"deleted lines {first}-{last} of {p} ({count} lines)", noop=noop)


def execute(ctx: ToolContext, args: dict[str, Any]) -> str:
    return publish(ctx, plan(ctx, args))


def preview(ctx: ToolContext, args: dict[str, Any]) -> FilePreview:
    return _preview(plan(ctx, args))
