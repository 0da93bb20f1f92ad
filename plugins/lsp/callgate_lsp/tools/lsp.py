"""The four tools, one group sharing one implementation: ``lsp_definition``,
``lsp_references``, ``lsp_hover`` and ``lsp_diagnostics`` as registered (names, schemas,
descriptions, flags) and the ``execute`` each runs.

Registration must stay cheap (``callgate tools`` imports every plugin; the client stack
takes over a second to import), so each ``execute`` imports the query code (`_queries`:
pygls, lsprotocol, cattrs) on its first call only.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from callgate import PermissionSubject, SessionKey, ToolContext, ToolResult, ToolSpec

#: ``session.extension(EXTENSION)``: the session's language servers (`LspManager`)
EXTENSION: SessionKey[Any] = SessionKey("lsp")

_FILE = {"type": "string", "minLength": 1, "maxLength": 4096,
         "description": "The source file, relative to the workspace root (or absolute inside "
                        "it)."}
_LINE = {"type": "integer", "minimum": 1, "maximum": 100000000,
         "description": "The 1-based line number the symbol is on."}
_SYMBOL = {"type": "string", "minLength": 1, "maxLength": 256,
           "description": "The name as written on that line (a function, class, method, "
                          "variable, field ...). Only code counts, not strings or comments; "
                          "when the name is code more than once on the line, the error lists "
                          "the columns: pass column to choose."}
_COLUMN = {"type": "integer", "minimum": 1, "maximum": 1000000,
           "description": "The 1-based column (in characters) of the symbol on the line: "
                          "needed only when it occurs there more than once."}
_SEVERITY = {"enum": ["errors", "warnings", "all"], "default": "warnings",
             "description": "Which diagnostics to list: errors only, errors and warnings "
                            "(the default), or all (information and hints too)."}

POSITION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"file": _FILE, "line": _LINE, "symbol": _SYMBOL, "column": _COLUMN},
    "required": ["file", "line", "symbol"],
    "additionalProperties": False,
}
FILE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"file": _FILE, "severity": _SEVERITY},
    "required": ["file"],
    "additionalProperties": False,
}

_HOW = ("Name the symbol by the file, the 1-based line it is on and its exact text on that "
        "line; no column is needed. Answered by the project's language server for that file "
        "type (started on first use, so the first query can take a few seconds).")

DESCRIPTIONS = {
    "lsp_definition": (
        "Jump to where a symbol is defined, as the language server resolves it: imports, "
        "overloads, methods on the right class and re-exports included, which text search gets "
        "wrong. " + _HOW + " Answers 'N definition(s):' with path:line and that line's source; "
        "a definition outside the workspace (a library) is listed with its absolute path."),
    "lsp_references": (
        "List every place a symbol is used across the project, its declaration included, as "
        "the language server sees them (a rename's blast radius, a function's callers). "
        + _HOW + " Answers 'N reference(s):' with path:line and the source of each line."),
    "lsp_hover": (
        "Show what the language server knows about a symbol: its signature or inferred type "
        "and its documentation, as plain text. " + _HOW),
    "lsp_diagnostics": (
        "List the errors and warnings the language server reports for one file (type errors, "
        "undefined names, bad imports; severity chooses errors only, or all with hints), "
        "waiting up to about two seconds for it to finish checking the current contents and "
        "the files changed since. Lines read 'line:col severity [source] message'. Use it "
        "after changing a file to see whether the change broke it or the files that use it."),
}

SUBJECT = PermissionSubject("path", ("file",))


def _lazy(name: str) -> Callable[[ToolContext, dict[str, Any]], Coroutine[Any, Any, ToolResult]]:
    async def execute(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
        from .._queries import EXECUTE

        return await EXECUTE[name](ctx, args)

    execute.__name__ = name
    return execute


def tool_specs() -> list[ToolSpec]:
    common: dict[str, Any] = {"read_only": True, "visibility": "hidden",
                              "permission_subject": SUBJECT}
    return [
        ToolSpec(name=name, description=DESCRIPTIONS[name],
                 schema=FILE_SCHEMA if name == "lsp_diagnostics" else POSITION_SCHEMA,
                 execute=_lazy(name), **common)
        for name in ("lsp_definition", "lsp_references", "lsp_hover", "lsp_diagnostics")
    ]
