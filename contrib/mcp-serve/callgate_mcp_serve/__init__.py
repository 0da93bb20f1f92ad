"""callgate-mcp-serve: serve a callgate host to any MCP client over stdio.

``callgate serve --workspace DIR [--config FILE] [--surface lean|full]`` speaks
MCP on stdin/stdout with the official ``mcp`` SDK's low-level server:
``tools/list`` is the host's surface in its ``mcp`` rendering, and every
``tools/call`` runs through the full pipeline in one session that lives as
long as the connection. ``ask`` permissions, and the ``ask`` tool's questions
(`ElicitationAsker`), reach the client's user through MCP elicitation when the
client supports it.

Embedding the server in your own process::

    from callgate import Host
    from callgate_mcp_serve import CallgateMCP, ElicitationApprover, ElicitationAsker, serve_stdio

    host = Host.boot("callgate.toml", plugins=[ElicitationApprover(), ElicitationAsker()])
    anyio.run(serve_stdio, CallgateMCP(host, "/path/to/workspace"))

The package registers no tools; it adds the ``serve`` command through the
``callgate.commands`` entry point (``callgate_mcp_serve.plugin:register``). The ``mcp`` SDK
is imported only when a server is built, so the other ``callgate`` commands stay fast.
"""

from __future__ import annotations

from typing import Any

from .plugin import ElicitationApprover, ElicitationAsker

__all__ = ["CallgateMCP", "ElicitationApprover", "ElicitationAsker", "serve_stdio"]


def __getattr__(name: str) -> Any:
    if name == "CallgateMCP":
        from ._server import CallgateMCP

        return CallgateMCP
    if name == "serve_stdio":
        from ._stdio import serve_stdio

        return serve_stdio
    raise AttributeError(f"module 'callgate_mcp_serve' has no attribute {name!r}")
