"""The lsp plugin's hook implementations: tools, ``[lsp]``, ``session.lsp``, edits, session end."""

from __future__ import annotations

import sys
from typing import Any

from callgate import ToolResult, hookimpl

from ._specs import EXTENSION, tool_specs
from ._table import SERVER_SCHEMA

#: ``x-workspace`` (callgate's config layering): a workspace config the user config does not
#: trust may lower the limits, list fewer diagnostics and turn after-edit diagnostics off
#: (they start servers); it never defines or changes a server (`_table.SERVER_SCHEMA`).
CONFIG_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "diagnostics_after_edit": {"type": "boolean", "default": False,
                                   "x-workspace": [True, False], "x-kind": "scope"},
        "after_edit_wait_ms": {"type": "integer", "minimum": 100, "maximum": 2000,
                               "default": 2000, "x-workspace": "min", "x-kind": "limit"},
        "after_edit_max_lines": {"type": "integer", "minimum": 1, "maximum": 50, "default": 10,
                                 "x-workspace": "min", "x-kind": "limit"},
        "after_edit_min_severity": {"enum": ["error", "warning", "information", "hint"],
                                    "default": "warning",
                                    "x-workspace": ["hint", "information", "warning", "error"]},
        "diagnostics_wait_ms": {"type": "integer", "minimum": 0, "maximum": 10000,
                                "default": 2000, "x-workspace": "min", "x-kind": "limit"},
        # how long lsp_references waits for a server to load a small workspace (issue 35)
        "references_wait_ms": {"type": "integer", "minimum": 0, "maximum": 60000,
                               "default": 10000, "x-workspace": "min", "x-kind": "limit"},
        "initialize_timeout_s": {"type": "number", "minimum": 1, "maximum": 300, "default": 30,
                                 "x-workspace": "min", "x-kind": "limit"},
        "request_timeout_s": {"type": "number", "minimum": 1, "maximum": 300, "default": 30,
                              "x-workspace": "min", "x-kind": "limit"},
        "max_results": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 100,
                        "x-workspace": "min", "x-kind": "limit"},
        "max_file_bytes": {"type": "integer", "minimum": 1024, "maximum": 67108864,
                           "default": 2097152, "x-workspace": "min", "x-kind": "limit"},
        # directories searched for servers after callgate's environment and PATH: never
        # from a workspace (a directory inside the workspace is dropped even here)
        "server_paths": {"type": "array", "items": {"type": "string", "minLength": 1},
                         "default": [], "x-workspace": "user", "x-kind": "path"},
        "servers": {"type": "object", "additionalProperties": SERVER_SCHEMA, "default": {},
                    "x-workspace": "user", "x-kind": "program"},
    },
}


def enabled(session: Any) -> bool:
    """``[lsp] diagnostics_after_edit`` (read on every call: keep it cheap)."""
    return bool(session.host.config("lsp").get("diagnostics_after_edit"))


def new_manager(session: Any) -> Any:
    """``session.lsp`` (the client stack is imported with the first one)."""
    from ._manager import LspManager

    return LspManager(session)


@hookimpl
def callgate_register_tools(registry: Any) -> None:
    registry.add_config("lsp", CONFIG_SCHEMA)
    registry.add_session_extension(EXTENSION, new_manager)
    for spec in tool_specs():
        registry.add(spec)


@hookimpl(trylast=True)
def callgate_pre_tool_use(call: Any, tool: Any, session: Any) -> None:
    """With ``diagnostics_after_edit``: snapshot the pre-edit diagnostics of a mutation's
    paths, or warm the server up on a read-only call about a path.

    ``trylast``: runs after the hooks that may refuse the call."""
    if not enabled(session) or not (tool.mutates_paths or tool.contract_read_only):
        return
    from . import _after_edit

    if tool.mutates_paths:
        _after_edit.take_snapshot(call, tool, session)
    else:
        _after_edit.warm(call, tool, session)


@hookimpl
def callgate_shape_result(call: Any, tool: Any, result: ToolResult,
                          session: Any) -> ToolResult | None:
    """Append the diagnostics a successful mutation introduced."""
    if not enabled(session):
        return None
    from . import _after_edit

    return _after_edit.shape(call, tool, result, session)


@hookimpl
def callgate_session_end(session: Any) -> None:
    """Stop the session's language servers (shutdown, exit, kill of each process group)."""
    if "callgate_lsp._manager" not in sys.modules:
        return  # no session of this process ever used a language server
    from ._manager import LspManager

    manager = getattr(session, EXTENSION, None)
    if isinstance(manager, LspManager):
        manager.close()
