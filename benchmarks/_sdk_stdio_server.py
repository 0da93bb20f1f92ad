"""The baseline of ``serve_stdio``: the MCP SDK's own minimal stdio server with one
``read_file`` tool (the file's text, line-numbered like callgate's), nothing else.

    python _sdk_stdio_server.py WORKSPACE
"""

from __future__ import annotations

import logging
import os
import sys

from mcp.server.mcpserver import MCPServer


def main() -> None:
    workspace = sys.argv[1]
    logging.disable(logging.INFO)
    server = MCPServer("bare-sdk", log_level="WARNING")

    @server.tool()
    def read_file(path: str) -> str:
        """Read a file of the workspace."""
        with open(os.path.join(workspace, path), encoding="utf-8") as fh:
            return "".join(f"{n}→{line}" for n, line in enumerate(fh, 1))

    server.run("stdio")


if __name__ == "__main__":
    main()
