"""edit_file and multi_edit: replace text found by exact or whitespace-tolerant matching
(files.md §6.3, §6.4)."""

from __future__ import annotations

from typing import Any

from callgate import PathRole, PermissionSubject, ToolContext, ToolSpec, Violation
from callgate.text import bom_of
from callgate_toolkit.diffs import change_diff

from .._common import Planned, fail, path_schema, preview, publish
from .._encoding import DECLARATION_CHARS, check_declaration, check_inserted
from .._matching import MatchFailure, apply_edit

SNAPSHOT_BYTES = 1 << 20

EDIT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["path", "old_string", "new_string"],
    "properties": {
        "path": path_schema("File to edit: relative to the workspace, or absolute."),
        "old_string": {"type": "string", "minLength": 1,
                       "description": "Text to replace, copied exactly from the file."},
        "new_string": {"type": "string", "description": "Replacement text (\"\" deletes)."},
        "replace_all": {"type": "boolean", "default": False,
                        "description": "Replace every match instead of requiring one."},
    },
}

EDIT_DESCRIPTION = (
    "Replace one exact piece of text in a file with another. old_string must match exactly "
    "one place (set replace_all to change every match); when it matches several, add "
    "surrounding lines to make it unique. Copy old_string from read_file output without the "
    "line-number prefixes, indentation included. Needs a current observation of the file "
    "(any read_file window); consecutive edits need no re-read. Prefer this to rewriting a "
    "whole file."
)

MULTI_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["path", "edits"],
    "properties": {
        "path": path_schema("File to edit: relative to the workspace, or absolute."),
        "edits": {
            "type": "array", "minItems": 1, "maxItems": 100,
            "description": "Edits applied in order, each to the result of the previous one.",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["old_string", "new_string"],
                "properties": {
                    "old_string": {"type": "string", "minLength": 1},
                    "new_string": {"type": "string"},
                    "replace_all": {"type": "boolean", "default": False},
                },
            },
        },
    },
}

MULTI_DESCRIPTION = (
    "Apply several edits to one file as a single change: each edit works on the result of "
    "the one before, all in memory, and the file is written only if every edit succeeds. "
    "Each edit matches like edit_file. Cheaper and safer than a chain of edit_file calls: a "
    "failing third edit leaves the file exactly as it was instead of half edited."
)


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


EDIT_SPEC = ToolSpec(
    name="edit_file", description=EDIT_DESCRIPTION, schema=EDIT_SCHEMA,
    execute=lambda ctx, args: publish(ctx, plan_edit(ctx, args)),
    preview=lambda ctx, args: preview(plan_edit(ctx, args)),
    validate=validate_edit, mutates_paths=(PathRole("path"),),
    permission_subject=PermissionSubject("path", ("path",)),
    groups=("Edit",), visibility="surface", surface_order=40,
)

MULTI_SPEC = ToolSpec(
    name="multi_edit", description=MULTI_DESCRIPTION, schema=MULTI_SCHEMA,
    execute=lambda ctx, args: publish(ctx, plan_multi(ctx, args)),
    preview=lambda ctx, args: preview(plan_multi(ctx, args)),
    validate=validate_multi, mutates_paths=(PathRole("path"),),
    permission_subject=PermissionSubject("path", ("path",)),
    groups=("Edit",), visibility="hidden",
)
