"""apply_patch: add, update, move and delete files with one patch in Codex's format, all or
nothing, through the edit family's gates (issue 32).

The patch is parsed once (`_v4a`); every path it names is gated like a path argument
(``ToolSpec.mutated_paths``: confinement, protected paths, the writer lease, and the
observation of every file it updates, moves or deletes); the whole patch is applied in
memory (`_patch_plan`), so a hunk that does not fit changes no file; then the files are
published one by one, each atomically, and put back if a later one fails (`_changeset`).
"""

from __future__ import annotations

from typing import Any

from callgate import PathRole, ToolContext, ToolError, Violation
from callgate_toolkit.diffs import FilePreview

from .._changeset import ChangeSet
from .._patch_plan import Planner, operations_of, path_roles
from .._v4a import PatchError, UpdateFile, parse_patch


def _operations(arguments: Any) -> tuple[Any, ...]:
    patch = arguments.get("patch") if isinstance(arguments, dict) else None
    if not isinstance(patch, str):
        return ()
    try:
        return parse_patch(patch)
    except PatchError:
        return ()


def mutated_paths(arguments: Any) -> list[tuple[PathRole, str]]:
    """The gate's roles for every path the patch names (none for a patch that does not
    parse: validation refuses it)."""
    return path_roles(_operations(arguments))


def validate(ctx: ToolContext, args: dict[str, Any]) -> list[Violation]:
    try:
        operations = parse_patch(args["patch"])
    except PatchError as exc:
        hint = ""
        if exc.message.startswith("Unexpected line found in update hunk: '@@"):
            hint = ("; a hunk takes one @@ line (as in Codex): to reach a nested place, put "
                    "its innermost line (the method, not the class) after @@ and give 3 lines "
                    "of context")
        return [Violation("/patch", "format", f"a patch in the apply_patch format; {exc}"
                          f"{hint}")]
    if not operations:
        return [Violation("/patch", "format", "at least one *** Add File, *** Update File or "
                          "*** Delete File section between *** Begin Patch and *** End Patch "
                          "(this one changes no file)")]
    for operation in operations:
        if isinstance(operation, UpdateFile) and operation.move_to is not None and \
                not operation.move_to.strip():
            return [Violation("/patch", "format", f"a path after '*** Move to: ' (patch line "
                              f"{operation.line + 1})")]
    return []


def execute(ctx: ToolContext, args: dict[str, Any]) -> str:
    plan = Planner(ctx, operations_of(args["patch"])).plan()
    changes = ChangeSet(ctx)
    try:
        for change in plan.writes:
            if change.source is None:
                changes.create(change.gated, change.data or b"", change.text)
            else:
                changes.replace(change.source, change.data or b"", change.text)
        for change in plan.removals:
            assert change.source is not None
            changes.remove(change.source)
    except ToolError as exc:
        made = changes.made
        problems = changes.rollback()
        if problems:
            note = ("\nthe patch was only partly undone: " + "; ".join(problems))
        elif made:
            note = (f"\nthe patch was not applied: the {made} file change(s) already made were "
                    "undone, so no file of the patch changed")
        else:
            note = "\nthe patch was not applied: no file of it changed"
        raise ToolError(exc.kind, exc.message + note, exc.signature, exc.meta) from None
    changes.finish()
    return plan.summary()


def preview(ctx: ToolContext, args: dict[str, Any]) -> list[FilePreview]:
    """Every file's change as an approver sees it; nothing is written."""
    return Planner(ctx, operations_of(args["patch"])).plan().previews()
