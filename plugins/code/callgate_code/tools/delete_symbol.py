"""The ``delete_symbol`` tool: remove one named Go or Python definition (search.md §5).

A structured mutation: the host gate (confinement, writer lease, stat, a live
observation of this version) runs before `execute`. The file must be valid
UTF-8 and parse cleanly; the symbol must be unambiguous, alone on its lines,
and the file must still parse without it. Bytes outside the removed lines
are kept exactly (line endings, BOM, permission bits); the write is atomic
and records the new version, so the next mutation needs no re-read.
"""

from __future__ import annotations

import ast
import difflib
from typing import Any

import attrs
from callgate import ToolContext, ToolError, ToolResult, Violation
from callgate.files import (
    FileChanged,
    GatedPath,
    WriterOpen,
    changed_while_applying,
    open_for_writing,
    replace_file,
    stale,
    version_of,
)

from .._languages import BY_EXTENSION, extension_of, parser
from .._ranges import Lines, SharedLine, preamble_start, symbol_rows, with_seam
from .._source import read_source
from .._symbols import BOM, Parsed, parse
from .._syntax import Symbol
from ..config import max_file_bytes

EXTENSIONS = (".go", ".py", ".pyi")
_ALIASES = {"function": "func", "assignment": "var"}
_GO_TYPES = {"struct", "interface", "type"}

def validate(ctx: ToolContext, args: dict[str, Any]) -> list[Violation]:
    ext = extension_of(args["path"])
    if ext not in EXTENSIONS:
        return [Violation("/path", "file_type", f"a .go, .py or .pyi file: delete_symbol "
                          f"supports Go and Python files; use delete_range for "
                          f"{ext or 'extension-less'} files")]
    return []


@attrs.frozen
class Plan:
    """A computed deletion: the new bytes and what the model is told."""

    data: bytes
    summary: str
    diff: str


def _fail(message: str, code: str) -> ToolError:
    return ToolError("tool_error", f"delete_symbol: {message}", code)


def _read(gated: GatedPath, limit: int) -> bytes:
    """The gated version's bytes, read beneath the held root (a change since the gate is a
    stale version)."""
    data, st = read_source(gated.resolved, gated.display, limit, "delete_symbol")
    if gated.stat is not None and version_of(st) != version_of(gated.stat):
        raise stale(gated.display)
    return data


def _describe(symbol: Symbol) -> str:
    on = f" (on {symbol.parent})" if symbol.parent else ""
    return f"line {symbol.line}: {symbol.kind} {symbol.name}{on}"


def _choose(symbols: list[Symbol], args: dict[str, Any], display: str) -> Symbol:
    name = args["name"]
    named = [s for s in symbols if s.name == name]
    if not named:
        raise _fail(f'no symbol named "{name}" in {display}', "CODE_NO_SYMBOL")
    kind = _ALIASES.get(args.get("kind", ""), args.get("kind"))
    chosen = named
    if kind:
        chosen = [s for s in chosen if s.kind == kind or (kind == "type" and s.kind in _GO_TYPES)]
    parent = args.get("parent")
    if parent:
        chosen = [s for s in chosen if s.parent == parent]
    if not chosen:
        on = f" on {parent}" if parent else ""
        found = ", ".join(_describe(s) for s in named)
        raise _fail(f'no {kind or "symbol"} named "{name}"{on} in {display}; found: {found}',
                    "CODE_NO_SYMBOL")
    if len(chosen) > 1:
        listed = "\n".join(f"  {_describe(s)}" for s in chosen)
        raise _fail(f'"{name}" matches {len(chosen)} symbols in {display}; pass kind and/or '
                    f"parent:\n{listed}", "CODE_AMBIGUOUS")
    return chosen[0]


def plan(ctx: ToolContext, args: dict[str, Any]) -> Plan:
    """Work out the deletion without writing anything (also the preview)."""
    gated = ctx.gated["path"]
    display = gated.display
    grammar = BY_EXTENSION[extension_of(args["path"])]
    if parser(grammar) is None:
        raise _fail(f"no grammar installed for {extension_of(args['path'])} (install "
                    f"{grammar.package})", "CODE_NO_GRAMMAR")
    data = _read(gated, max_file_bytes(ctx))
    body = data[len(BOM):] if data.startswith(BOM) else data
    try:
        body.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = body[:exc.start].count(b"\n") + 1
        raise _fail(f"{display} is not valid UTF-8 (first bad byte on line {line}); use "
                    "delete_range", "CODE_NOT_UTF8") from None
    parsed = parse(grammar, data)
    assert parsed is not None
    if parsed.error_line is not None:
        raise _fail(f"{display} does not parse cleanly (first error at line "
                    f"{parsed.error_line}); fix it or use delete_range", "CODE_PARSE_ERROR")
    symbol = _choose(parsed.symbols(grammar), args, display)
    if symbol.together:
        raise _fail(f'"{symbol.name}" is declared together with {", ".join(symbol.together)}; '
                    "use delete_range or edit_file", "CODE_DECLARED_TOGETHER")
    lines = Lines.of(parsed.source)
    language = "go" if grammar.label == "go" else "python"
    try:
        first, last = symbol_rows(lines, symbol.node, b"//" if language == "go" else b"#")
    except SharedLine as exc:
        raise _fail(f'"{symbol.name}" shares line {exc.line} with other code; use edit_file',
                    "CODE_SHARED_LINE") from None
    first = preamble_start(lines, parsed.tree.root_node, first, language)
    first, last = with_seam(lines, first, last)
    remaining = lines.without(first, last)
    again = parse(grammar, remaining)
    if again is None or again.error_line is not None or \
            (language == "python" and not _python_still_valid(parsed.source, again)):
        raise _fail(f'deleting "{symbol.name}" would break parsing of {display}; use '
                    "delete_range", "CODE_WOULD_BREAK")
    new_data = (BOM if parsed.bom else b"") + remaining
    summary = f"deleted {symbol.kind} {symbol.qualified} (lines {first + 1}-{last + 1}) from " \
              f"{display}"
    return Plan(new_data, summary, unified_diff(parsed.source, remaining, display))


def _python_still_valid(before: bytes, after: Parsed) -> bool:
    """tree-sitter accepts an empty block (``class A:`` alone); Python does not. When the
    running interpreter can compile the original, the result must compile too."""
    stack = [after.tree.root_node]
    while stack:
        node = stack.pop()
        if node.type == "block" and not any(c.type != "comment" for c in node.named_children):
            return False
        stack.extend(node.children)
    try:
        ast.parse(before)
    except (SyntaxError, ValueError):
        return True
    try:
        ast.parse(after.source)
    except (SyntaxError, ValueError):
        return False
    return True


def unified_diff(before: bytes, after: bytes, display: str) -> str:
    old = before.decode("utf-8").splitlines()
    new = after.decode("utf-8").splitlines()
    return "\n".join(difflib.unified_diff(old, new, f"a/{display}", f"b/{display}", n=3,
                                          lineterm=""))


def preview(ctx: ToolContext, args: dict[str, Any]) -> str:
    """The unified diff the deletion would apply (nothing is written)."""
    return plan(ctx, args).diff


def execute(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    result = plan(ctx, args)
    gated = ctx.gated["path"]

    def unchanged_since_gate() -> None:
        try:
            now = gated.resolved.stat()
        except OSError:
            raise stale(gated.display) from None
        if gated.stat is not None and version_of(now) != version_of(gated.stat):
            raise stale(gated.display)

    try:
        # under a read lease: another program's write during the replace is never lost
        replace_file(gated.resolved, result.data, before_publish=unchanged_since_gate,
                     guard_writers=True)
    except ToolError:
        raise
    except WriterOpen:
        raise open_for_writing(gated.display) from None
    except FileChanged:
        raise changed_while_applying(gated.display) from None
    except OSError as exc:
        raise _fail(f"cannot write {gated.display}: {exc.strerror}", "CODE_IO") from None
    ctx.files.record(gated.resolved, result.data)
    return ToolResult.ok(f"{result.summary}\n{result.diff}",
                         {"path": gated.display, "bytes": len(result.data)})
