"""The ``ls`` tool: a directory's entries, flat or depth first (search.md §4)."""

from __future__ import annotations

import os
import stat as stat_mod
import time
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

from callgate import ToolContext, ToolResult
from callgate.paths import PRUNE, HeldDir
from callgate_toolkit.walk import join_rel

from .._locate import deadline, locate, not_a_directory, timed_out_line
from .specs import MAX_ENTRIES

MAX_DEPTH = 50

class Listed(NamedTuple):
    """One entry as listed: its name, its ``lstat`` (``None`` if that failed) and, for a
    symlink, its target; taken while the directory was held."""

    name: str
    st: os.stat_result | None
    link: str | None


def execute(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    target = locate(ctx, "ls", args.get("path", "."))
    if not target.is_dir:
        raise not_a_directory("ls", target.display, " (use read_file)")
    seconds, until = deadline(ctx)
    recursive = args.get("recursive", False)
    denied = ctx.files.denied if ctx.files.denylist is not None else None
    lines: list[str] = []
    data: list[dict[str, Any]] = []
    truncated = timed_out = False
    try:
        top = target.resolved.opendir()
    except OSError:
        top = None
    entries = iter(()) if top is None else \
        _tree(top, target.rel, until, ctx, denied) if recursive else _flat(top, denied)
    for rel_or_name, entry in entries:
        if entry is None:
            timed_out = True
            break
        if len(lines) == MAX_ENTRIES:
            truncated = True
            break
        shown = target.shown(rel_or_name) if recursive else rel_or_name
        lines.append(_line(shown, entry))
        data.append(_data(shown, entry))
    if top is not None:
        top.close()
    if truncated:
        lines.append(f"... (truncated at {MAX_ENTRIES} entries)")
    if timed_out:
        lines.append(timed_out_line(seconds))
    structured = {"entries": data, "truncated": truncated, "timed_out": timed_out}
    if not lines:
        return ToolResult.ok("(empty directory)",
                             {"entries": 0, "structured_content": structured})
    return ToolResult.ok("".join(line + "\n" for line in lines),
                         {"entries": min(len(lines), MAX_ENTRIES), "truncated": truncated,
                          "timed_out": timed_out, "structured_content": structured})


def _line(shown: str, entry: Listed) -> str:
    """``name/`` for a directory, ``name<TAB>bytes`` for a file, ``name -> target`` for a link."""
    st = entry.st
    if st is None:
        return shown
    if stat_mod.S_ISLNK(st.st_mode):
        return f"{shown} -> {entry.link if entry.link is not None else '?'}"
    if stat_mod.S_ISDIR(st.st_mode):
        return f"{shown}/"
    if stat_mod.S_ISREG(st.st_mode):
        return f"{shown}\t{st.st_size}"
    return shown


def _data(shown: str, entry: Listed) -> dict[str, Any]:
    """One entry for ``structuredContent`` (what `_line` prints, as fields)."""
    st = entry.st
    if st is not None and stat_mod.S_ISLNK(st.st_mode):
        item: dict[str, Any] = {"path": shown, "type": "symlink"}
        if entry.link is not None:
            item["target"] = entry.link
        return item
    if st is not None and stat_mod.S_ISDIR(st.st_mode):
        return {"path": shown, "type": "directory"}
    if st is not None and stat_mod.S_ISREG(st.st_mode):
        return {"path": shown, "type": "file", "size": st.st_size}
    return {"path": shown, "type": "other"}


def _sorted(held: HeldDir, denied: Callable[[str], bool] | None) -> list[Listed]:
    """The entries of a held directory in name order (the read deny list's names left out)."""
    try:
        entries = held.scandir()
    except OSError:
        return []
    out = []
    for entry in entries:
        if denied is not None and denied(held.join(entry.name)):
            continue
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            out.append(Listed(entry.name, None, None))
            continue
        link = None
        if stat_mod.S_ISLNK(st.st_mode):
            try:
                link = held.readlink(entry.name)
            except OSError:
                link = None
        out.append(Listed(entry.name, st, link))
    return out


def _flat(held: HeldDir, denied: Callable[[str], bool] | None
          ) -> Iterator[tuple[str, Listed | None]]:
    for entry in _sorted(held, denied):
        yield entry.name, entry


def _tree(top: HeldDir, rel: str, until: float, ctx: ToolContext,
          denied: Callable[[str], bool] | None) -> Iterator[tuple[str, Listed | None]]:
    """Depth first in path order; `PRUNE` dirs and dirs deeper than 50 levels not entered,
    each entered one opened relative to its held parent without following a link.
    A ``None`` entry means the deadline passed."""
    stack = [(iter(_sorted(top, denied)), rel, 1, top)]
    try:
        while stack:
            it, parent, depth, held = stack[-1]
            entry = next(it, None)
            if entry is None:
                stack.pop()
                if held is not top:
                    held.close()
                continue
            child = join_rel(parent, entry.name)
            yield child, entry
            is_dir = entry.st is not None and stat_mod.S_ISDIR(entry.st.st_mode)
            if is_dir and entry.name not in PRUNE and depth <= MAX_DEPTH:
                if time.monotonic() >= until or ctx.cancelled.is_set():
                    yield child, None
                    return
                try:
                    sub = held.sub(entry.name)
                except OSError:
                    continue
                stack.append((iter(_sorted(sub, denied)), child, depth + 1, sub))
    finally:
        for _, _, _, held in stack:
            if held is not top:
                held.close()
