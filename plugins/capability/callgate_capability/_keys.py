"""The capability plugin's session-extension keys, apart from the objects they name: the
plugin registers them without importing the MCP machinery (issue 38)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from callgate import SessionKey

if TYPE_CHECKING:
    from ._servers import McpServers

#: ``session.extension(MCP_SERVERS)``: this plugin's per-session object
MCP_SERVERS: SessionKey[McpServers] = SessionKey("mcp_servers")
