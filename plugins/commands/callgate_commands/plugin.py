"""The commands plugin's hook implementations: the tool, ``session.command_names`` and the
connect gate for MCP prompts."""

from __future__ import annotations

from typing import Any

from callgate import Decision, ToolCall, ToolSpec, hookimpl

from . import _mcp_prompts, _tool

SLASH_COMMAND = ToolSpec(
    name="slash_command",
    description=_tool.DESCRIPTION,
    schema=_tool.SCHEMA,
    execute=_tool.run_slash_command,
    read_only=_tool.is_read_only,
    destructive=False,
    groups=("commands",),
)


@hookimpl
def callgate_register_tools(registry: Any) -> None:
    registry.add(SLASH_COMMAND)
    registry.deny_in_read_only_children(SLASH_COMMAND.name)  # a strict child asks nothing
    registry.add_session_extension("command_names", lambda session: lambda: _tool.names(session))


@hookimpl
def callgate_check_permission(call: ToolCall, tool: ToolSpec, session: Any) -> Decision | None:
    """Expanding (or listing) an MCP server's prompts starts the server: the call needs what
    a connect of that server needs."""
    if tool.name != SLASH_COMMAND.name or tool.execute is not SLASH_COMMAND.execute:
        return None
    name = _tool.command_of(call.arguments)
    if not name.startswith("mcp:"):
        return None
    server = name.split(":", 2)[1]
    config = _mcp_prompts.servers(session).get(server)
    if config is None:
        return None
    return _mcp_prompts.connect_decision(session, config)
