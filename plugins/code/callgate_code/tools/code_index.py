"""The ``code_index`` tool: a file's or a tree's symbols, as an outline or a ranked search."""

from __future__ import annotations

import os
import stat as stat_mod
import time
from typing import Any

from callgate import ToolContext, ToolError, ToolResult, Violation
from callgate.paths import ResolvedPath, within
from callgate_toolkit.walk import IgnoreRules, walk_files

from .._languages import BY_EXTENSION, SUPPORTED, Grammar, extension_of, parser
from .._source import read_source
from .._symbols import parse
from .._syntax import Symbol
from ..config import max_file_bytes
from .specs import DEFAULT_LIMIT, MAX_LIMIT

MAX_FILES = 5000
LISTED_ERRORS = 5

def validate(ctx: ToolContext, args: dict[str, Any]) -> list[Violation]:
    if args["action"] == "search" and "query" not in args:
        return [Violation("/query", "required", "query is required for action=search")]
    return []


def execute(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    path = args.get("path", ".")
    resolved = ctx.workspace.resolve(path)
    missing = ToolError("not_found", f"code_index: path not found: {resolved.display}",
                        "not_found")
    if ctx.files.denied(resolved):  # the read deny list: exactly like a missing path
        raise missing
    try:
        st = resolved.stat()
    except (FileNotFoundError, NotADirectoryError):
        raise missing from None
    except OSError as exc:
        raise ToolError("tool_error", f"code_index: cannot read {resolved.display}: "
                        f"{exc.strerror}", "CODE_IO") from None
    root = ctx.workspace.root
    inside = within(resolved.path, root)
    rel = os.path.relpath(resolved.path, root).replace(os.sep, "/") if inside else ""
    rel = "" if rel == "." else rel
    if stat_mod.S_ISDIR(st.st_mode):
        walk_root = ctx.workspace.resolve(root) if inside else resolved
        symbols, notes = _index_tree(ctx, walk_root, rel,
                                     "" if inside else resolved.path + "/")
    else:
        shown = rel if inside else resolved.path
        symbols, notes = _index_file(resolved, shown, resolved.display,
                                     max_file_bytes(ctx)), []
    return _answer(args, symbols, notes)


def _grammar_for_file(display: str) -> Grammar:
    ext = extension_of(display)
    grammar = BY_EXTENSION.get(ext)
    if grammar is None:
        raise ToolError("tool_error", f"code_index: unsupported file type {ext or '(none)'}; "
                        f"supported: {SUPPORTED}", "CODE_UNSUPPORTED_FILE")
    if parser(grammar) is None:
        raise ToolError("tool_error", f"code_index: no grammar installed for {ext} (install "
                        f"{grammar.package})", "CODE_NO_GRAMMAR")
    return grammar


def _index_file(path: ResolvedPath, shown: str, display: str, limit: int
                ) -> list[tuple[str, Symbol]]:
    grammar = _grammar_for_file(display)
    data, _st = read_source(path, display, limit, "code_index")
    parsed = parse(grammar, data)
    assert parsed is not None
    if parsed.error_line is not None:
        raise ToolError("tool_error", f"code_index: {display} does not parse cleanly (first "
                        f"error at line {parsed.error_line})", "CODE_PARSE_ERROR")
    return [(shown, s) for s in parsed.symbols(grammar)]


def _index_tree(ctx: ToolContext, root: ResolvedPath, top: str, prefix: str
                ) -> tuple[list[tuple[str, Symbol]], list[str]]:
    seconds = float(ctx.host.plugin_config_value("search", "timeout_s", 30))
    until = time.monotonic() + seconds
    found: list[tuple[str, Symbol]] = []
    broken: list[str] = []
    files = 0
    limit = max_file_bytes(ctx)
    stopped = timed_out = False
    denied = ctx.files.denied if ctx.files.denylist is not None else None
    for entry in walk_files(root, top, skip_hidden=True, ignore=IgnoreRules(root),
                            stop=ctx.cancelled.is_set):
        assert entry.resolved is not None
        if denied is not None and denied(entry.resolved):
            continue
        grammar = BY_EXTENSION.get(extension_of(entry.rel))
        if grammar is None or parser(grammar) is None:
            continue
        if time.monotonic() >= until:
            timed_out = True
            break
        if files == MAX_FILES:
            stopped = True
            break
        try:
            data, _st = read_source(entry.resolved, prefix + entry.rel, limit, "code_index")
        except ToolError:  # over the cap, not a regular file, unreadable: skipped (§5)
            continue
        files += 1
        parsed = parse(grammar, data)
        if parsed is None:
            continue
        shown = prefix + entry.rel
        if parsed.error_line is not None:
            broken.append(shown)
            continue
        found.extend((shown, s) for s in parsed.symbols(grammar))
    notes = []
    if stopped:
        notes.append(f"... (stopped after {MAX_FILES} files; narrow path)")
    if timed_out:
        notes.append(f"... (timed out after {seconds:g} s; results incomplete; narrow the path "
                     "or pattern)")
    if broken:
        listed = ", ".join(broken[:LISTED_ERRORS])
        more = len(broken) - LISTED_ERRORS
        if more > 0:
            listed += f" and {more} more"
        notes.append(f"... (not indexed, syntax errors: {listed})")
    return found, notes


def _tier(symbol: Symbol, query: str) -> int | None:
    name = symbol.name.lower()
    full = symbol.qualified.lower()
    if query not in name and query not in full:
        return None
    if name == query or full == query:
        return 0
    if name.startswith(query) or full.startswith(query):
        return 1
    return 2


def _answer(args: dict[str, Any], symbols: list[tuple[str, Symbol]],
            notes: list[str]) -> ToolResult:
    kind = args.get("kind")
    if kind:
        symbols = [(p, s) for p, s in symbols if s.kind == kind]
    if args["action"] == "search":
        query = args["query"].lower()
        ranked = [(t, i) for i, (_p, s) in enumerate(symbols)
                  if (t := _tier(s, query)) is not None]
        symbols = [symbols[i] for _t, i in sorted(ranked)]
    limit = args.get("limit", DEFAULT_LIMIT)
    lines = [f"{path}:{s.line}: {s.kind} {s.qualified} — {s.signature}"
             for path, s in symbols[:limit]]
    truncated = len(symbols) > limit
    if truncated:
        lines.append(f"... (truncated at {limit} symbols; narrow path, query or kind, or "
                     f"raise limit up to {MAX_LIMIT})")
    if not symbols:
        lines.append("(no symbols)")
    lines.extend(notes)
    return ToolResult.ok("\n".join(lines), {"symbols": min(len(symbols), limit),
                                            "truncated": truncated})
