"""The capability plugin's hook implementations: the tool, its config tables and session
extensions, the connect check for calls that would start a server, ``auto_start``, and
stopping the servers with the session."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import attrs
from callgate import Decision, Registry, ToolCall, ToolSpec, hookimpl

from . import hookspecs
from ._keys import MCP_SERVERS
from ._names import rule_name_check, server_of_permission_name
from ._native import FACES as NATIVE_SEARCH
from .config import CAPABILITY_SCHEMA, MCP_SERVERS_SCHEMA
from .tools.specs import CAPABILITY_DECLINES
from .tools.specs import SPEC as USE_CAPABILITY

if TYPE_CHECKING:
    from ._servers import McpServers

log = logging.getLogger("callgate.capability")


def _servers(session: Any) -> McpServers:
    """The session's MCP servers: the MCP machinery is imported when a session opens, not
    while the plugin registers (issue 38)."""
    from ._servers import McpServers

    return McpServers(session)


@hookimpl
def callgate_register_tools(registry: Registry) -> None:
    registry.add_hookspecs(hookspecs)  # what its MCP servers ask goes to the integrator
    registry.add_config("capability", CAPABILITY_SCHEMA)
    servers = registry.add_config("mcp_servers", MCP_SERVERS_SCHEMA)
    registry.add(attrs.evolve(USE_CAPABILITY, native=NATIVE_SEARCH))
    registry.add_rule_names(rule_name_check(servers))
    registry.add_session_extension(MCP_SERVERS, _servers)
    registry.add_session_extension(CAPABILITY_DECLINES, lambda session: [])


@hookimpl
def callgate_check_permission(call: ToolCall, tool: ToolSpec, session: Any) -> Decision | None:
    """A call that would start a server (``mcp-server:<s>``, or an MCP tool whose server is
    not connected) needs what the connect needs (`_policy.connect_decision`): the rules for
    ``mcp_connect__<s>``, else the connect fallback, and an approval for a server an
    untrusted workspace config added. One prompt covers the call and the start.
    """
    from ._targets import plan_of  # the targets: imported by the first call that asks

    plan = plan_of(tool)
    if plan is None:
        return None
    if plan.tool is not None and not plan.deferred:
        return None
    server = server_of_permission_name(call.name) or plan.server
    servers = session.extension(MCP_SERVERS)
    config = servers.config(server)
    if config is None or servers.live(server) is not None:
        return None
    from . import _policy

    return _policy.connect_decision(session.host, session, config,
                                    caller=call.name if plan.tool is not None else None)


@hookimpl
def callgate_session_start(session: Any) -> None:
    """Connect ``auto_start`` servers in the background when no prompt would be needed."""
    tables = session.host.config("mcp_servers") or {}
    if not any(t.get("auto_start") and t.get("enabled", True) for t in tables.values()):
        return
    from . import _policy
    from ._servers import mcp_installed

    if not mcp_installed():
        log.warning("auto_start MCP servers are configured but the mcp SDK is not installed")
        return
    servers: McpServers = session.extension(MCP_SERVERS)
    for name in servers.names():
        config = servers.config(name)
        assert config is not None
        if not (config.auto_start and config.enabled):
            continue
        if _policy.connect_allowed_without_asking(session.host, session, config):
            servers.start_in_background(name)


@hookimpl
def callgate_session_end(session: Any) -> None:
    """The session stops using its family's MCP servers (the last one stops them)."""
    session.extension(MCP_SERVERS).close()
