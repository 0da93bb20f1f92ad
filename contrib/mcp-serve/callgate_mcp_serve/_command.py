"""``callgate serve``: what the subcommand runs (`plugin.register` adds it to the ``callgate``
command through the ``callgate.commands`` entry point).

Importing this module stays cheap (no ``mcp`` import): the ``callgate`` command
loads every command plugin before it parses its arguments.
"""

from __future__ import annotations

import argparse
import os
import sys

EXIT_OK, EXIT_USAGE = 0, 2


def cmd_serve(args: argparse.Namespace) -> int:
    import anyio
    from callgate import Host
    from callgate.host import BootError

    from ._server import CallgateMCP
    from ._stdio import serve_stdio
    from .plugin import ElicitationApprover, ElicitationAsker

    if args.pair:
        if args.mode == "plan":
            return _usage("--pair starts every MCP session as a planner in plan mode by "
                          "itself; drop --mode plan")
        if args.session is not None:
            return _usage("--pair makes each connection a new planner/executor pair; a "
                          "pair is not joined by name (drop --session)")
        if args.workspace_from_roots:
            return _usage("--pair works in one fixed workspace: give --workspace DIR (or "
                          "--http with --workspace-root DIR)")
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
                      plan_mode=args.mode == "plan", session_name=args.session,
                      pair=args.pair)
    anyio.run(serve_stdio, app)
    return EXIT_OK


def _serve_roots(args: argparse.Namespace) -> int:
    """stdio with the workspace from the client's roots: a host booted for each root (its
    own callgate.toml read as a workspace's), the user's config for the rest."""
    import anyio
    from callgate import Host
    from callgate.host import BootError

    from ._server import CallgateMCP
    from ._stdio import serve_stdio
    from .plugin import ElicitationApprover, ElicitationAsker

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
    from callgate import Host
    from callgate.host import BootError

    from ._auth import TokenError, load_tokens
    from ._http import HttpOptions, parse_bind, serve_http
    from .plugin import ElicitationApprover

    try:
        bind_host, port = parse_bind(args.http)
        tokens = load_tokens(args.token_file)
        options = HttpOptions(
            host=bind_host, port=port,
            workspace=workspace if args.workspace is not None else None,
            workspace_root=workspace if args.workspace_root is not None else None,
            tokens=tokens, idle_timeout=args.idle_timeout or None,
            allowed_hosts=args.allow_host, allowed_origins=args.allow_origin,
            plan_mode=args.mode == "plan", pair=args.pair)
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


__all__ = ["EXIT_OK", "EXIT_USAGE", "cmd_serve"]
