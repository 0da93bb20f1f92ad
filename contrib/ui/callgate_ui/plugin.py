"""``callgate ui``: the subcommand, added through the ``callgate.commands`` entry point.

Importing this module stays cheap (no Starlette, uvicorn or Jinja2 import): the
``callgate`` command loads every command plugin before it parses its arguments.
"""

from __future__ import annotations

import argparse
import ipaddress
import os
import re
import sys
from typing import Any

EXIT_OK, EXIT_USAGE = 0, 2
DEFAULT_PORT = 8377
#: A token is sent in a cookie and a header: letters, digits and ``-._~``, 16 or more.
TOKEN = re.compile(r"[A-Za-z0-9._~-]{16,512}")
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")


def register(subparsers: Any) -> None:
    """Add ``ui`` to the ``callgate`` command (entry point ``callgate.commands``)."""
    p = subparsers.add_parser(
        "ui",
        help="a local, read-only web page over the session store",
        description="Serve a web page over the session store: every session, each one's "
        "timeline of batches and calls (arguments, pipeline stages, the deciding "
        "rule, results, edits as diffs, jobs, goal and todos), history search, "
        "and an open session updating live. It only reads the store. It binds "
        "to loopback; any other address needs --token or --token-file, checked "
        "on every request.",
    )
    p.add_argument(
        "--store",
        help="the store (a path or URL; default: the default location, "
        "<state dir>/sessions/sessions.sqlite3)",
    )
    p.add_argument(
        "--host",
        default="127.0.0.1",
        help="the address to bind (default 127.0.0.1; others need a token)",
    )
    p.add_argument(
        "--port",
        type=int,
        default=DEFAULT_PORT,
        help=f"the port (default {DEFAULT_PORT}; 0 picks a free one)",
    )
    group = p.add_mutually_exclusive_group()
    group.add_argument("--token", help="require this token (16+ of A-Z a-z 0-9 - . _ ~)")
    group.add_argument("--token-file", help="require the token in this file (its first line)")
    p.set_defaults(func=cmd_ui)


def is_loopback(host: str) -> bool:
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def read_token(args: argparse.Namespace) -> str | None:
    """The token from ``--token`` or ``--token-file``; `ValueError` says what is wrong."""
    if args.token_file:
        try:
            with open(args.token_file, encoding="utf-8") as fh:
                token = fh.readline().strip()
        except OSError as exc:
            raise ValueError(f"token file {args.token_file}: {exc.strerror or exc}") from None
    else:
        token = args.token
    if token is not None and not TOKEN.fullmatch(token):
        raise ValueError("the token must be 16 to 512 of A-Z a-z 0-9 - . _ ~")
    return token


def cmd_ui(args: argparse.Namespace) -> int:
    try:
        token = read_token(args)
    except ValueError as exc:
        print(f"callgate: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if not is_loopback(args.host) and token is None:
        print(
            f"callgate: binding {args.host} (not loopback) needs --token or --token-file",
            file=sys.stderr,
        )
        return EXIT_USAGE
    if not 0 <= args.port <= 65535:
        print(f"callgate: --port {args.port} is not a port", file=sys.stderr)
        return EXIT_USAGE

    from callgate.store import StoreError, default_location, open_reader

    location = args.store or default_location()
    if "://" not in location:
        location = os.path.abspath(os.path.expanduser(location))
    try:
        store = open_reader(location)
    except StoreError as exc:
        print(f"callgate: {exc}", file=sys.stderr)
        return EXIT_USAGE
    return serve(store, args.host, args.port, token)


def serve(store: Any, host: str, port: int, token: str | None) -> int:
    import socket

    import uvicorn

    from ._app import create_app

    # names the browser may use for this address (a Host header with another name is refused)
    hosts = set(LOOPBACK_NAMES) if is_loopback(host) else None
    app = create_app(store, token=token, allowed_hosts=hosts)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
        sock.listen(128)  # connections made once the address is printed wait in the backlog
    except OSError as exc:
        print(f"callgate: cannot bind {host}:{port}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_USAGE
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{bound}/"
    print(
        f"callgate ui: {store.location} (read-only) at {url}"
        + (" (with its token: " + url + "?token=<token>)" if token else ""),
        file=sys.stderr,
        flush=True,
    )
    config = uvicorn.Config(
        app, log_level="warning", access_log=False, lifespan="off", timeout_graceful_shutdown=1
    )
    server = uvicorn.Server(config)
    try:
        server.run(sockets=[sock])
    finally:
        store.close()
    return EXIT_OK


__all__ = ["cmd_ui", "register"]
