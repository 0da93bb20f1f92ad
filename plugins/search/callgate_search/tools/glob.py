"""The ``glob`` tool: find files by name or path pattern (search.md §3)."""

from __future__ import annotations

import os
import time
from typing import Any

from callgate import ToolContext, ToolError, ToolResult, Violation
from callgate.paths import GLOB_META as META
from callgate.paths import GlobError, compile_glob
from callgate_toolkit.walk import join_rel, walk_files

from .._file_filter import negation_problem
from .._locate import deadline, locate, not_a_directory, timed_out_line

MAX_FILES = 1000

def validate(ctx: ToolContext, args: dict[str, Any]) -> list[Violation]:
    """Unbalanced brackets and ``..`` segments are refused before anything is read."""
    pattern = args["pattern"]
    negation = negation_problem(pattern)
    if negation:
        return [Violation("/pattern", "glob", f"a glob of the files to list; {negation}")]
    if os.path.isabs(pattern):
        pattern = pattern.lstrip("/")
    try:
        compile_glob(pattern)
    except GlobError as exc:
        return [Violation("/pattern", "glob", f"a valid glob; {exc}")]
    return []


def execute(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    pattern = args["pattern"]
    base = locate(ctx, "glob", args.get("path", "."))
    if not base.is_dir:
        raise not_a_directory("glob", base.display, "; path must be a directory")
    if os.path.isabs(pattern):
        pattern = _relative_pattern(ctx, pattern, base.path)
    glob = compile_glob(pattern)
    start = join_rel(base.rel, "/".join(glob.prefix)) if glob.prefix else base.rel
    start_path = os.path.join(base.root, start) if start else base.root
    if not _real_directory(start_path):
        return ToolResult.ok("(no matches)", {"files": 0, "structured_content": {
            "files": [], "truncated": False, "timed_out": False}})
    seconds, until = deadline(ctx)
    timed_out = False

    def stop() -> bool:
        nonlocal timed_out
        if time.monotonic() >= until:
            timed_out = True
        return timed_out or ctx.cancelled.is_set()

    skip = len(base.rel) + 1 if base.rel else 0
    found: list[str] = []
    truncated = False
    denied = ctx.files.denied if ctx.files.denylist is not None else None
    for entry in walk_files(base.base, start, skip_hidden=False, ignore=None, stop=stop):
        if denied is not None and denied(entry.resolved):
            continue  # the read deny list: as if it were not there
        if glob.matches(entry.rel[skip:]):
            if len(found) == MAX_FILES:
                truncated = True
                break
            found.append(base.shown(entry.rel))
        if len(found) % 256 == 0 and stop():
            break
    lines = list(found)
    if truncated:
        lines.append(f"... (truncated at {MAX_FILES} files; narrow the pattern)")
    if not lines and not timed_out:
        lines.append("(no matches)")
    if timed_out:
        lines.append(timed_out_line(seconds))
    return ToolResult.ok("\n".join(lines), {"files": len(found), "truncated": truncated,
                                           "timed_out": timed_out, "structured_content": {
                                               "files": found, "truncated": truncated,
                                               "timed_out": timed_out}})


def _real_directory(path: str) -> bool:
    """A directory reached without following a symlink (walks never follow them)."""
    return os.path.isdir(path) and os.path.realpath(path) == os.path.normpath(path)


def _relative_pattern(ctx: ToolContext, pattern: str, base: str) -> str:
    """An absolute pattern inside the workspace, made relative to the base directory."""
    parts = pattern.split("/")
    literal: list[str] = []
    for part in parts[:-1]:
        if any(c in META for c in part):
            break
        literal.append(part)
    head = "/".join(literal) or "/"
    rest = "/".join(parts[len(literal):])
    resolved = ctx.workspace.resolve(head)
    rel = os.path.relpath(resolved.path, base)
    if rel == os.pardir or rel.startswith(os.pardir + os.sep):
        raise ToolError("tool_error", f"glob: the pattern {pattern} is not below path "
                        f"{ctx.workspace.display(base)}; use a pattern relative to path",
                        "SEARCH_PATTERN_OUTSIDE_BASE")
    return rest if rel == "." else rel.replace(os.sep, "/") + "/" + rest
