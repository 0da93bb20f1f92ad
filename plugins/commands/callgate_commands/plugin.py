"""The commands plugin's hook implementations: the tool, `COMMAND_NAMES` and the
connect gate for MCP prompts."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from callgate import Decision, SessionKey, ToolCall, ToolSpec, hookimpl

from .tools.specs import SLASH_COMMAND

#: ``session.extension(COMMAND_NAMES)()``: every name slash_command answers to (install_skill
#: refuses to shadow one)
COMMAND_NAMES: SessionKey[Callable[[], list[str]]] = SessionKey("command_names")


def _names(session: Any) -> Any:
    from .tools import slash_command  # the discovery: imported by the first that asks

    return slash_command.names(session)


@hookimpl
def callgate_register_tools(registry: Any) -> None:
    registry.add(SLASH_COMMAND)
    registry.deny_in_read_only_children(SLASH_COMMAND.name)  # a strict child asks nothing
    registry.add_session_extension(COMMAND_NAMES, lambda session: lambda: _names(session))


@hookimpl
def callgate_check_permission(call: ToolCall, tool: ToolSpec, session: Any) -> Decision | None:
    """Expanding (or listing) an MCP server's prompts starts the server: the call needs what
    a connect of that server needs (the capability plugin's connect check)."""
    if tool.name != SLASH_COMMAND.name or tool.execute is not SLASH_COMMAND.execute:
        return None
    from . import _mcp_prompts
    from .tools import slash_command

    name = slash_command.command_of(call.arguments)
    if not name.startswith("mcp:"):
        return None
    server = name.split(":", 2)[1]
    if _mcp_prompts.servers(session).get(server) is None:
        return None
    return session.extension(_mcp_prompts.MCP_SERVERS).connect_decision(
        server, f"expanding a prompt of MCP server {server} starts it")
