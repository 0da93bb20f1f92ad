"""The ``grep`` tool: regex search over one file or a directory tree (search.md §2)."""

from __future__ import annotations

import functools
import os
from typing import Any

import attrs
from callgate import ToolContext, ToolError, ToolResult, Violation
from callgate.paths import READ_FLAGS, GlobError, ResolvedPath
from callgate_toolkit.walk import IgnoreRules

from .. import _engine_python, _engine_rg
from .._file_filter import compile_filter
from .._grep_model import GrepRequest, render
from .._locate import deadline, locate, timed_out_line
from .._patterns import pattern_problem
from .specs import MAX_MATCHES

_NONE: dict[str, Any] = {"matches": [], "truncated": False, "timed_out": False}

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


@functools.lru_cache(maxsize=4)
def _grep(rg: str | None) -> Grep:
    return Grep(rg)


def run(rg: str | None, ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    """grep's code (its spec binds the ``rg`` found at boot, or ``None``)."""
    return _grep(rg).execute(ctx, args)
