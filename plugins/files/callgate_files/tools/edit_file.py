"""edit_file and multi_edit: replace text found by exact or whitespace-tolerant matching
(files.md §6.3, §6.4)."""

from __future__ import annotations

from typing import Any

from callgate import ToolContext, Violation
from callgate.text import bom_of
from callgate_toolkit.diffs import FilePreview, change_diff

from .._common import Planned, fail, publish
from .._common import preview as _preview
from .._encoding import DECLARATION_CHARS, check_declaration, check_inserted
from .._matching import MatchFailure, apply_edit

SNAPSHOT_BYTES = 1 << 20

def validate_edit(ctx: ToolContext, args: dict[str, Any]) -> list[Violation]:
    if args.get("old_string") == args.get("new_string"):
        return [Violation("/new_string", "not", "new_string different from old_string (the "
                          "edit would change nothing)")]
    return []


def validate_multi(ctx: ToolContext, args: dict[str, Any]) -> list[Violation]:
    out = []
    for i, edit in enumerate(args.get("edits", [])):
        if isinstance(edit, dict) and edit.get("old_string") == edit.get("new_string"):
            out.append(Violation(f"/edits/{i}", "not", "new_string different from old_string "
                                 "(the edit would change nothing)"))
    return out


def _suffix(replace_all: bool, count: int, fuzzy: bool) -> str:
    out = f" ({count} replacements)" if replace_all else ""
    return out + (" (fuzzy match)" if fuzzy else "")


def plan_edit(ctx: ToolContext, args: dict[str, Any]) -> Planned:
    gated = ctx.gated["path"]
    source = ctx.files.load(gated, tool="edit_file")
    p = gated.display
    replace_all = bool(args.get("replace_all", False))
    try:
        edited = apply_edit(source.text, args["old_string"], args["new_string"], replace_all, p)
    except MatchFailure as exc:
        raise fail(exc.code, exc.message) from None
    check_inserted(source, edited.inserted())
    check_declaration(source, edited.head(DECLARATION_CHARS))
    bom = len(bom_of(source.encoding))
    if source.encoding in ("utf-8", "utf-8-bom") and len(source.data) - bom == len(source.text):
        # ASCII: character i is byte bom + i, so only the replacements need encoding
        new_bytes = edited.splice(source.data, bom, source.encode_piece)
    else:
        new_bytes = source.encode(edited.text)
    old_region, new_region, first_line = edited.region()
    change = change_diff(old_region, new_region, p, first_line=first_line)
    small = len(new_bytes) <= SNAPSHOT_BYTES
    return Planned(gated, source, new_bytes, edited.text if small else None,
                   done=f"edited {p}" + _suffix(replace_all, edited.count, edited.fuzzy),
                   noop=f"{p} already has exactly this content; nothing written",
                   change=change)


def plan_multi(ctx: ToolContext, args: dict[str, Any]) -> Planned:
    gated = ctx.gated["path"]
    source = ctx.files.load(gated, tool="multi_edit")
    p = gated.display
    edits = args["edits"]
    text, total, fuzzy = source.text, 0, False
    for i, edit in enumerate(edits, 1):
        try:
            edited = apply_edit(text, edit["old_string"], edit["new_string"],
                                bool(edit.get("replace_all", False)), p)
        except MatchFailure as exc:
            raise fail(exc.code, f"edit {i} of {len(edits)}: {exc.message}") from None
        check_inserted(source, edited.inserted(), f"edit {i} of {len(edits)}: ")
        text, total, fuzzy = edited.text, total + edited.count, fuzzy or edited.fuzzy
    if text[:DECLARATION_CHARS] != source.text[:DECLARATION_CHARS]:
        check_declaration(source, text[:DECLARATION_CHARS])
    noop = f"multi_edit {p}: no net change; nothing written"
    return Planned(gated, source, source.encode(text), text,
                   done=f"multi_edit {p}: {len(edits)} edits applied ({total} replacements)"
                   + (" (fuzzy match)" if fuzzy else ""), noop=noop)


def execute_edit(ctx: ToolContext, args: dict[str, Any]) -> str:
    return publish(ctx, plan_edit(ctx, args))


def preview_edit(ctx: ToolContext, args: dict[str, Any]) -> FilePreview:
    return _preview(plan_edit(ctx, args))


def execute_multi(ctx: ToolContext, args: dict[str, Any]) -> str:
    return publish(ctx, plan_multi(ctx, args))


def preview_multi(ctx: ToolContext, args: dict[str, Any]) -> FilePreview:
    return _preview(plan_multi(ctx, args))
