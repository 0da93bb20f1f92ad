"""The ``grep`` tool: regex search over one file or a directory tree (search.md §2)."""

from __future__ import annotations

import os
from typing import Any

import attrs
from callgate import PermissionSubject, ToolContext, ToolError, ToolResult, ToolSpec, Violation
from callgate.paths import READ_FLAGS, GlobError, ResolvedPath
from callgate_toolkit.walk import IgnoreRules

from .. import _engine_python, _engine_rg
from .._file_filter import compile_filter
from .._grep_model import GrepRequest, render
from .._locate import deadline, locate, timed_out_line
from .._patterns import pattern_problem

#: what other agents and plain words call this tool (an unknown call by one of
#: these names is answered "did you mean" this tool)
GREP_KNOWN_AS = (
    "Grep", "search", "search_files", "find_in_files", "rg", "ripgrep", "codebase_search",
    "grep_search", "search_file_content",
)

MAX_MATCHES = 200
MAX_CONTEXT = 10

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "pattern": {"type": "string", "minLength": 1,
                    "description": "Regular expression in Python re syntax, matched against "
                                   "each line. No look-around, backreferences or newlines."},
        "path": {"type": "string", "minLength": 1, "default": ".",
                 "description": "File or directory to search, relative to the workspace."},
        "glob": {"type": "string", "minLength": 1,
                 "description": "Only search files matching this glob: without '/' it matches "
                                "file names at any depth (*.py, *.{ts,tsx}); with '/' the "
                                "workspace-relative path (src/**/*.ts). A leading ! leaves "
                                "the matching files out instead (!*.min.js)."},
        "case_insensitive": {"type": "boolean", "default": False,
                             "description": "Match letters regardless of case."},
        "context": {"type": "integer", "minimum": 0, "maximum": MAX_CONTEXT, "default": 0,
                    "description": "Lines of context to show before and after each match."},
        "max_matches": {"type": "integer", "minimum": 1, "maximum": MAX_MATCHES,
                        "default": MAX_MATCHES,
                        "description": "Stop after this many matching lines."},
    },
    "required": ["pattern"],
    "additionalProperties": False,
}

#: ``structuredContent`` (MCP): the matching lines as data.
OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "matches": {"type": "array", "items": {
            "type": "object",
            "properties": {"path": {"type": "string"},
                           "line": {"type": "integer", "minimum": 1},
                           "text": {"type": "string",
                                    "description": "The line as printed (a long one cut)."}},
            "required": ["path", "line", "text"]}},
        "truncated": {"type": "boolean"},
        "timed_out": {"type": "boolean"},
    },
    "required": ["matches", "truncated", "timed_out"],
}
_NONE: dict[str, Any] = {"matches": [], "truncated": False, "timed_out": False}

DESCRIPTION = (
    "Search file contents for a regular expression (Python re syntax, matched line by line) "
    "in one file or recursively under a workspace directory. While walking, hidden files "
    "(unless a .gitignore ! rule re-includes them), .gitignore'd files, binary files and "
    "dependency folders such as node_modules are left out; naming a file or folder in path "
    "searches it anyway. Each matching line prints as "
    "path:line:text in path order, up to 200; glob narrows the files, case_insensitive and "
    "context widen the match. Searches that do not depend on each other's results belong "
    "together in one round."
)


def validate(ctx: ToolContext, args: dict[str, Any]) -> list[Violation]:
    """Refuse, before anything is read, patterns and globs grep cannot run."""
    out = []
    problem = pattern_problem(args["pattern"])
    if problem:
        out.append(Violation("/pattern", "regex", f"a regex grep can run; {problem}"))
    if "glob" in args:
        try:
            compile_filter(args["glob"])
        except GlobError as exc:
            out.append(Violation("/glob", "glob", f"a valid glob; {exc}"))
    return out


@attrs.define
class Grep:
    """The grep tool of one host; ``rg`` is the binary found at boot (or ``None``)."""

    rg: str | None

    def engine(self, ctx: ToolContext) -> str:
        wanted = ctx.config.get("grep_engine", "auto")
        if wanted == "python" or self.rg is None:
            return "python"
        return "rg"

    def execute(self, ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
        target = locate(ctx, "grep", args.get("path", "."))
        glob = compile_filter(args["glob"]) if "glob" in args else None
        engine = self.engine(ctx)
        meta: dict[str, Any] = {"engine": engine}
        if not (target.is_dir or target.is_file):
            raise ToolError("tool_error", f"grep: {target.display} is not a regular file or "
                            "directory", "SEARCH_NOT_REGULAR")
        limit_bytes = int(ctx.config.get("max_file_bytes", 64 << 20))
        if target.is_file:
            if glob is not None and not glob.matches(target.rel):
                return ToolResult.ok("(no matches)", {**meta, "matches": 0,
                                                      "structured_content": _NONE})
            if target.st.st_size > limit_bytes:  # checked before any byte is read
                return ToolResult.ok(
                    f"(no matches; {target.shown(target.rel)} is larger than the "
                    f"{_size_text(limit_bytes)} grep limit; search it with the shell or raise "
                    "search.max_file_bytes)",
                    {**meta, "matches": 0, "too_large": True, "structured_content": _NONE})
            if _engine_python.read_text(target.resolved) is None and \
                    _is_readable(target.resolved):
                return ToolResult.ok(f"(no matches; {target.shown(target.rel)} is a binary file)",
                                     {**meta, "matches": 0, "binary": True,
                                      "structured_content": _NONE})
        seconds, until = deadline(ctx)
        limit = args.get("max_matches", MAX_MATCHES)
        req = GrepRequest(
            root=target.root, target_rel=target.rel, is_file=target.is_file,
            pattern=args["pattern"], ignore_case=args.get("case_insensitive", False),
            context=args.get("context", 0), glob=glob, limit=limit, deadline=until,
            cancelled=ctx.cancelled,
            rules=IgnoreRules(target.base), max_file_bytes=limit_bytes, base=target.base,
            denied=ctx.files.denied if ctx.files.denylist is not None else None,
        )
        hits = _engine_rg.search(self.rg, req, ctx.session) if engine == "rg" and self.rg else \
            _engine_python.search(req)
        try:
            rendered = render(_prefixed(hits, target.prefix), limit, req.context)
        except _engine_rg.InvalidPattern as exc:
            raise ToolError("tool_error", f"grep: invalid pattern: {exc}; rewrite it in the "
                            "subset Python re and ripgrep share", "SEARCH_INVALID_PATTERN") \
                from None
        finally:
            hits.close()
        if req.cancelled.is_set() and not req.timed_out:
            raise ToolError("cancelled", "grep: cancelled before the search finished",
                            "cancelled")
        lines = rendered.lines
        if rendered.truncated:
            lines.append(f"... (truncated at {limit} matches; narrow the pattern, path or glob)")
        if not lines and not req.timed_out:
            lines.append("(no matches)")
        if req.timed_out:
            lines.append(timed_out_line(seconds))
        meta.update(matches=rendered.kept, truncated=rendered.truncated,
                    timed_out=req.timed_out, structured_content={
                        "matches": rendered.matches, "truncated": rendered.truncated,
                        "timed_out": req.timed_out})
        return ToolResult.ok("\n".join(lines), meta)


def _prefixed(hits: Any, prefix: str) -> Any:
    if not prefix:
        yield from hits
        return
    for fh in hits:
        fh.path = prefix + fh.path
        yield fh


def _size_text(n: int) -> str:
    return f"{n / (1 << 20):g} MiB" if n >= 1 << 20 else f"{n} bytes"


def _is_readable(path: ResolvedPath) -> bool:
    try:
        os.close(path.open(READ_FLAGS))
    except OSError:
        return False
    return True


def spec(rg: str | None) -> ToolSpec:
    """``grep``, run by ``rg`` when one was found at boot, else by the Python engine."""
    return ToolSpec(
        name="grep", description=DESCRIPTION, schema=SCHEMA, execute=Grep(rg).execute,
        known_as=GREP_KNOWN_AS,
        output_schema=OUTPUT_SCHEMA, read_only=True, visibility="hidden", validate=validate,
        permission_subject=PermissionSubject("pattern", ("pattern",)),
        examples=({"pattern": r"def \w+_handler\(", "glob": "*.py", "context": 2},
                  {"pattern": "todo", "path": "src", "case_insensitive": True}))
