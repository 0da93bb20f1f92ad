"""callgate's capability plugin: ``use_capability`` over hidden tools, MCP servers and results.

One fixed, provider-visible tool reaches everything that is not on the tool
list, so the surface never changes mid-session:

- ``tool:<name>`` — any tool registered in the session (hidden ones included);
- ``mcp-server:<s>`` / ``mcp-tool:<s>/<t>`` — MCP servers from
  ``[mcp_servers.<s>]`` in ``callgate.toml``, started as stdio children only
  after a gated connect (permission name ``mcp_connect__<s>``), shared with the
  session's sub-agents and planner/executor sibling (``session.shared``), and
  stopped when the last of them closes (needs the ``[mcp]`` extra: the official
  ``mcp`` SDK). callgate is a full host of them: what a server asks while a call runs
  (elicitation, sampling) and its log messages go to the integrator's hooks
  (`hookspecs`: ``callgate serve`` relays them to its own client), and its
  ``roots/list`` is the session's workspace;
- ``session:tool_result`` — pages through a stored tool result.

Configure a server::

    [mcp_servers.time]
    command = "python"
    args = ["-m", "mcp_server_time", "--local-timezone", "UTC"]

The integrator may change a server's settings while a session runs with
``session.extension(MCP_SERVERS).set_enabled(name, False)`` or
``session.extension(MCP_SERVERS).reconfigure(name, ...)``; calls re-check them right
before every connect and ``tools/call``. ``session.extension(CAPABILITY_DECLINES)`` lists
the ``(capability_id, reason)`` pairs the model declined.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._keys import MCP_SERVERS
from ._names import connect_permission_name, norm, tool_permission_name
from .plugin import (
    CAPABILITY_DECLINES,
    USE_CAPABILITY,
    callgate_check_permission,
    callgate_register_tools,
    callgate_session_end,
    callgate_session_start,
)

if TYPE_CHECKING:
    from ._servers import McpServers, mcp_installed


def __getattr__(name: str) -> Any:
    """`McpServers` and `mcp_installed`, imported on first use: registering the plugin
    imports none of the MCP machinery (issue 38)."""
    if name not in ("McpServers", "mcp_installed"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from . import _servers

    return getattr(_servers, name)


__all__ = [
    "CAPABILITY_DECLINES",
    "MCP_SERVERS",
    "USE_CAPABILITY",
    "McpServers",
    "callgate_check_permission",
    "callgate_register_tools",
    "callgate_session_end",
    "callgate_session_start",
    "connect_permission_name",
    "mcp_installed",
    "norm",
    "tool_permission_name",
]
