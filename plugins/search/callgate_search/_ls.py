"""The ``ls`` tool: a directory's entries, flat or depth first (search.md §4)."""

from __future__ import annotations

import os
import stat as stat_mod
import time
from collections.abc import Iterator
from typing import Any

from callgate import ToolContext, ToolResult

from ._locate import deadline, locate, not_a_directory, timed_out_line
from ._walk import PRUNE, join_rel

MAX_ENTRIES = 5000
MAX_DEPTH = 50

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "minLength": 1, "default": ".",
                 "description": "Directory to list, relative to the workspace."},
        "recursive": {"type": "boolean", "default": False,
                      "description": "List every nested entry depth first, with "
                                     "workspace-relative paths."},
    },
    "additionalProperties": False,
}

DESCRIPTION = (
    "List a workspace directory sorted by name: directories end with '/', files are followed "
    "by a tab and their size in bytes, symlinks show their target (not followed). "
    "recursive=true walks nested folders depth-first and prints workspace-relative paths, "
    "showing but not entering .git, node_modules and similar folders; up to 5000 entries. "
    "Listings that do not depend on each other belong together in one round."
)


def execute(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    target = locate(ctx, "ls", args.get("path", "."))
    if not target.is_dir:
        raise not_a_directory("ls", target.display, " (use read_file)")
    seconds, until = deadline(ctx)
    recursive = args.get("recursive", False)
    lines: list[str] = []
    truncated = timed_out = False
    entries = _tree(target.path, target.rel, until, ctx) if recursive else \
        _flat(target.path)
    for rel_or_name, entry in entries:
        if entry is None:
            timed_out = True
            break
        if len(lines) == MAX_ENTRIES:
            truncated = True
            break
        shown = target.shown(rel_or_name) if recursive else rel_or_name
        lines.append(_line(shown, entry))
    if truncated:
        lines.append(f"... (truncated at {MAX_ENTRIES} entries)")
    if timed_out:
        lines.append(timed_out_line(seconds))
    if not lines:
        return ToolResult.ok("(empty directory)", {"entries": 0})
    return ToolResult.ok("".join(line + "\n" for line in lines),
                         {"entries": min(len(lines), MAX_ENTRIES), "truncated": truncated,
                          "timed_out": timed_out})


def _line(shown: str, entry: os.DirEntry[str]) -> str:
    """``name/`` for a directory, ``name<TAB>bytes`` for a file, ``name -> target`` for a link."""
    try:
        st = entry.stat(follow_symlinks=False)
    except OSError:
        return shown
    if stat_mod.S_ISLNK(st.st_mode):
        try:
            return f"{shown} -> {os.readlink(entry.path)}"
        except OSError:
            return f"{shown} -> ?"
    if stat_mod.S_ISDIR(st.st_mode):
        return f"{shown}/"
    if stat_mod.S_ISREG(st.st_mode):
        return f"{shown}\t{st.st_size}"
    return shown


def _sorted(path: str) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(path) as it:
            return sorted(it, key=lambda e: e.name)
    except OSError:
        return []


def _flat(path: str) -> Iterator[tuple[str, os.DirEntry[str] | None]]:
    for entry in _sorted(path):
        yield entry.name, entry


def _tree(path: str, rel: str, until: float, ctx: ToolContext
          ) -> Iterator[tuple[str, os.DirEntry[str] | None]]:
    """Depth first in path order; `PRUNE` dirs and dirs deeper than 50 levels not entered.
    A ``None`` entry means the deadline passed."""
    stack = [(iter(_sorted(path)), rel, 1)]
    while stack:
        it, parent, depth = stack[-1]
        entry = next(it, None)
        if entry is None:
            stack.pop()
            continue
        child = join_rel(parent, entry.name)
        yield child, entry
        try:
            is_dir = entry.is_dir(follow_symlinks=False)
        except OSError:
            is_dir = False
        if is_dir and entry.name not in PRUNE and depth <= MAX_DEPTH:
            if time.monotonic() >= until or ctx.cancelled.is_set():
                yield child, None
                return
            stack.append((iter(_sorted(entry.path)), child, depth + 1))
