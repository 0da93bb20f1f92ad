"""The lsp plugin's hook implementations: tools, ``[lsp]``, ``session.extension(LSP)``,
edits, session end."""

from __future__ import annotations

import sys
from typing import Any

from callgate import ToolResult, hookimpl

from .config import CONFIG_SCHEMA, enabled
from .tools.lsp import EXTENSION, tool_specs


def new_manager(session: Any) -> Any:
    """``session.extension(LSP)`` (the client stack is imported with the first one)."""
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

    manager = session.find_extension(EXTENSION)
    if isinstance(manager, LspManager):
        manager.close()
