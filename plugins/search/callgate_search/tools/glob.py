"""The ``glob`` tool: find files by name or path pattern (search.md §3)."""

from __future__ import annotations

import os
import time
from typing import Any

from callgate import PermissionSubject, ToolContext, ToolError, ToolResult, ToolSpec, Violation
from callgate.paths import GLOB_META as META
from callgate.paths import GlobError, compile_glob
from callgate_toolkit.walk import join_rel, walk_files

from .._file_filter import negation_problem
from .._locate import deadline, locate, not_a_directory, timed_out_line

#: what other agents and plain words call this tool (an unknown call by one of
#: these names is answered "did you mean" this tool)
GLOB_KNOWN_AS = ("Glob", "find", "find_files", "file_search", "glob_files")

MAX_FILES = 1000

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "pattern": {"type": "string", "minLength": 1,
                    "description": "Glob such as *.go, src/**/*.ts or *.{py,pyi}. Without '/' "
                                   "it matches file names at any depth; with '/' the whole "
                                   "path below path."},
        "path": {"type": "string", "minLength": 1, "default": ".",
                 "description": "Directory to search from, relative to the workspace."},
    },
    "required": ["pattern"],
    "additionalProperties": False,
}

DESCRIPTION = (
    "Find workspace files by glob pattern, e.g. \"*.go\", \"cmd/*/main.go\" or "
    "\"**/*_test.py\". * and ? stay within one path segment, [...] is a character class, "
    "{a,b} alternates and ** spans any number of directories; matching is case-sensitive. "
    "Without '/' a pattern matches file names at any depth; a leading ! is refused (write "
    "the pattern of the files wanted). Prints files only (hidden and "
    "gitignored ones too; .git, node_modules and similar folders only when the pattern starts "
    "with them), one workspace-relative path per line in path order, up to 1000. Send globs "
    "that do not depend on each other in one round."
)


#: ``structuredContent`` (MCP): the matching paths as data.
OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "files": {"type": "array", "items": {"type": "string"},
                  "description": "Matching files, workspace-relative, in path order."},
        "truncated": {"type": "boolean"},
        "timed_out": {"type": "boolean"},
    },
    "required": ["files", "truncated", "timed_out"],
}


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


SPEC = ToolSpec(
    name="glob", known_as=GLOB_KNOWN_AS, description=DESCRIPTION, schema=SCHEMA, execute=execute,
    output_schema=OUTPUT_SCHEMA, read_only=True, visibility="hidden", validate=validate,
    permission_subject=PermissionSubject("pattern", ("pattern",)))
