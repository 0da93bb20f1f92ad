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
        "serve", help="serve the host's tools to an MCP client over stdio or streamable HTTP",
        description="Speak MCP over stdin/stdout: tools/list is the host's surface, every "
                    "tools/call runs through the full pipeline in one session. Without "
                    "--session, that session lasts as long as the connection (it is recorded "
                    "in the session store and can be resumed later); with --session NAME, "
                    "every connection naming NAME joins the same stored session, so a client "
                    "that reconnects for each call keeps its observations (read, then edit), "
                    "results, goals, todos and finished jobs. Running background jobs end "
                    "with the process that started them.")
    p.add_argument("--workspace", help="the directory the tools work in")
    p.add_argument("--workspace-from-roots", action="store_true",
                   help="(stdio) work in the one root the client lists (roots/list) instead "
                        "of a fixed --workspace, and follow it when the client says its "
                        "roots changed: one user-level registration serves every project "
                        "the client opens; no root or several are refused with an error")
    p.add_argument("--http", metavar="[HOST:]PORT",
                   help="serve MCP over streamable HTTP on http://HOST:PORT/mcp instead of "
                        "stdio (HOST defaults to 127.0.0.1; port 0 picks one): one callgate "
                        "session per MCP session, resumable after a restart (docs/mcp.md)")
    p.add_argument("--workspace-root", metavar="DIR",
                   help="with --http: every MCP session works in its own DIR/<session id> "
                        "(instead of one --workspace)")
    p.add_argument("--token-file", metavar="FILE",
                   help="with --http: bearer tokens, one a line (also $CALLGATE_SERVE_TOKENS); "
                        "required to bind anything but loopback")
    p.add_argument("--idle-timeout", type=float, metavar="SECONDS", default=1800.0,
                   help="with --http: end a session after this long with no request in "
                        "flight (default 1800; 0 never)")
    p.add_argument("--allow-host", action="append", default=[], metavar="NAME:PORT",
                   help="with --http: one more Host header value to accept (DNS-rebinding "
                        "protection accepts the loopback names by default); repeatable")
    p.add_argument("--allow-origin", action="append", default=[], metavar="URL",
                   help="with --http: one more Origin to accept; repeatable")
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
    from ._ask import ElicitationAsker
    from ._server import CallgateMCP
    from ._stdio import serve_stdio

    if args.workspace_from_roots:
        if args.http is not None:
            return _usage("--workspace-from-roots is for stdio: over --http a client's roots "
                          "would choose any directory of this machine; give --workspace DIR "
                          "or --workspace-root DIR")
        if args.workspace is not None or args.workspace_root is not None:
            return _usage("give --workspace DIR or --workspace-from-roots, not both")
        if args.session is not None:
            return _usage("--session joins one stored session, which works in one "
                          "workspace; with --workspace-from-roots each root gets its own")
        return _serve_roots(args)
    if args.http is None:
        for flag in ("workspace_root", "token_file"):
            if getattr(args, flag) is not None:
                return _usage(f"--{flag.replace('_', '-')} needs --http")
        if args.workspace is None:
            return _usage("give --workspace DIR (or --workspace-from-roots)")
    elif (args.workspace is None) == (args.workspace_root is None):
        return _usage("with --http give --workspace DIR or --workspace-root DIR")
    elif args.session is not None or args.session_dir is not None:
        return _usage("--session and --session-dir are for stdio: over --http every MCP "
                      "session is its own stored session")
    where = args.workspace if args.workspace is not None else args.workspace_root
    workspace = os.path.abspath(where)
    if not os.path.isdir(workspace):
        print(f"callgate: workspace {where} is not a directory", file=sys.stderr)
        return EXIT_USAGE
    if args.http is not None:
        return _serve_http(args, workspace)
    try:
        host = Host.boot(args.config, surface=args.surface, workspace=workspace,
                         plugins=[("callgate_mcp_serve.approver", ElicitationApprover()),
                                  ("callgate_mcp_serve.asker", ElicitationAsker())])
    except (BootError, OSError) as exc:
        print(f"callgate: {exc}", file=sys.stderr)
        return EXIT_USAGE
    for warning in host.warnings:
        print(f"callgate: warning: {warning}", file=sys.stderr)
    app = CallgateMCP(host, workspace, session_dir=args.session_dir,
                      plan_mode=args.mode == "plan", session_name=args.session)
    anyio.run(serve_stdio, app)
    return EXIT_OK


def _serve_roots(args: argparse.Namespace) -> int:
    """stdio with the workspace from the client's roots: a host booted for each root (its
    own callgate.toml read as a workspace's), the user's config for the rest."""
    import anyio
    from callgate import BootError, Host

    from ._approval import ElicitationApprover
    from ._ask import ElicitationAsker
    from ._server import CallgateMCP
    from ._stdio import serve_stdio

    def boot(workspace: str | None) -> Host:
        return Host.boot(args.config, surface=args.surface, workspace=workspace,
                         plugins=[("callgate_mcp_serve.approver", ElicitationApprover()),
                                  ("callgate_mcp_serve.asker", ElicitationAsker())])

    try:
        host = boot(None)
    except (BootError, OSError) as exc:
        print(f"callgate: {exc}", file=sys.stderr)
        return EXIT_USAGE
    for warning in host.warnings:
        print(f"callgate: warning: {warning}", file=sys.stderr)
    app = CallgateMCP(host, None, session_dir=args.session_dir,
                      plan_mode=args.mode == "plan", session_name=args.session,
                      workspace_from_roots=boot)
    anyio.run(serve_stdio, app)
    return EXIT_OK


def _usage(message: str) -> int:
    print(f"callgate serve: {message}", file=sys.stderr)
    return EXIT_USAGE


def _serve_http(args: argparse.Namespace, workspace: str) -> int:
    import anyio
    from callgate import BootError, Host

    from ._approval import ElicitationApprover
    from ._auth import TokenError, load_tokens
    from ._http import HttpOptions, parse_bind, serve_http

    try:
        bind_host, port = parse_bind(args.http)
        tokens = load_tokens(args.token_file)
        options = HttpOptions(
            host=bind_host, port=port,
            workspace=workspace if args.workspace is not None else None,
            workspace_root=workspace if args.workspace_root is not None else None,
            tokens=tokens, idle_timeout=args.idle_timeout or None,
            allowed_hosts=args.allow_host, allowed_origins=args.allow_origin,
            plan_mode=args.mode == "plan")
    except (TokenError, ValueError) as exc:
        return _usage(str(exc))
    config_dir = workspace if args.workspace is not None else None
    try:
        host = Host.boot(args.config, surface=args.surface, workspace=config_dir,
                         plugins=[("callgate_mcp_serve.approver", ElicitationApprover())])
    except (BootError, OSError) as exc:
        print(f"callgate: {exc}", file=sys.stderr)
        return EXIT_USAGE
    for warning in host.warnings:
        print(f"callgate: warning: {warning}", file=sys.stderr)
    try:
        anyio.run(serve_http, host, options)
    except OSError as exc:  # the address is taken, or not ours to bind
        print(f"callgate: cannot serve on {args.http}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    return EXIT_OK


__all__ = ["cmd_serve", "register"]
