"""``callgate serve``: the subcommand, added through the ``callgate.commands`` entry point.

Importing this module stays cheap (no ``mcp`` import): the ``callgate`` command
loads every command plugin before it parses its arguments.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

EXIT_OK, EXIT_USAGE = 0, 2


def register(subparsers: Any) -> None:
    """Add ``serve`` to the ``callgate`` command (entry point ``callgate.commands``)."""
    p = subparsers.add_parser(
        "serve", help="serve the host's tools to an MCP client over stdio",
        description="Speak MCP over stdin/stdout: tools/list is the host's surface, every "
                    "tools/call runs through the full pipeline in one session. Without "
                    "--session, that session lasts as long as the connection (it is recorded "
                    "in the session store and can be resumed later); with --session NAME, "
                    "every connection naming NAME joins the same stored session, so a client "
                    "that reconnects for each call keeps its observations (read, then edit), "
                    "results, goals, todos and finished jobs. Running background jobs end "
                    "with the process that started them.")
    p.add_argument("--workspace", required=True, help="the directory the tools work in")
    p.add_argument("--config", help="a callgate.toml (default: the workspace's callgate.toml "
                                    "or [tool.callgate] in its pyproject.toml)")
    p.add_argument("--surface", choices=["lean", "full"],
                   help="surface mode (default: [surface] mode, else lean)")
    p.add_argument("--mode", choices=["default", "plan"], default="default",
                   help="start in plan mode: only read-only calls run until the user approves "
                        "the plan the model presents with the exit_plan_mode tool")
    p.add_argument("--session", metavar="NAME",
                   help="join the stored session NAME (created on first use); every connection "
                        "that names it continues it")
    p.add_argument("--session-dir", help="a scratch directory for the session (job logs, MCP "
                                         "server logs); reopening it continues its session")
    p.set_defaults(func=cmd_serve)


def cmd_serve(args: argparse.Namespace) -> int:
    import anyio
    from callgate import BootError, Host

    from ._approval import ElicitationApprover
    from ._server import CallgateMCP
    from ._stdio import serve_stdio

    workspace = os.path.abspath(args.workspace)
    if not os.path.isdir(workspace):
        print(f"callgate: workspace {args.workspace} is not a directory", file=sys.stderr)
        return EXIT_USAGE
    try:
        host = Host.boot(args.config, surface=args.surface, workspace=workspace,
                         plugins=[("callgate_mcp_serve.approver", ElicitationApprover())])
    except (BootError, OSError) as exc:
        print(f"callgate: {exc}", file=sys.stderr)
        return EXIT_USAGE
    for warning in host.warnings:
        print(f"callgate: warning: {warning}", file=sys.stderr)
    app = CallgateMCP(host, workspace, session_dir=args.session_dir,
                      plan_mode=args.mode == "plan", session_name=args.session)
    anyio.run(serve_stdio, app)
    return EXIT_OK


__all__ = ["cmd_serve", "register"]
