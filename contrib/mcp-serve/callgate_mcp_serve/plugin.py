"""What callgate loads of this package: the ``serve`` command (`register`, the
``callgate.commands`` entry point) and the hooks ``callgate serve`` registers on the host it
boots (`ElicitationApprover`, `ElicitationAsker`; an embedding integrator registers them too).

Importing this module stays cheap (no ``mcp`` import): the ``callgate`` command loads every
command plugin before it parses its arguments.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

from callgate import Decision, hookimpl

from ._approval import ask_approval, belongs_to, current_channel
from ._ask import ask_questions
from ._command import cmd_serve
from .config import SERVE_CONFIG_SCHEMA


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
    p.add_argument("--pair", action="store_true",
                   help="make each MCP session a planner/executor pair: the client's calls "
                        "run in a read-only planner until the user approves (in the client, "
                        "by elicitation) the plan handed over with exit_plan_mode, then in "
                        "the executor; a client without elicitation can never hand over")
    p.add_argument("--session", metavar="NAME",
                   help="join the stored session NAME (created on first use); every connection "
                        "that names it continues it")
    p.add_argument("--session-dir", help="a scratch directory for the session (job logs, MCP "
                                         "server logs); reopening it continues its session")
    p.set_defaults(func=cmd_serve)


class ElicitationApprover:
    """The ``callgate_ask_permission`` hook of ``callgate serve``.

    Registered in process when the server boots its host. It answers only for
    calls that run inside an MCP request whose client can elicit; otherwise it
    returns ``None`` so that the host's configured fallback decides.
    """

    @hookimpl
    def callgate_register_tools(self, registry: Any) -> None:
        registry.add_config("serve", SERVE_CONFIG_SCHEMA)

    # --- a full host for the MCP servers the session proxies (issue 34, item 5) ---------
    # The capability plugin's hooks, called in a worker thread in the context of the call
    # the server answers: the channel there is that call's request.

    @staticmethod
    def _relay(session: Any) -> Any:
        channel = current_channel.get()
        if channel is None or channel.relay is None or not belongs_to(session, channel.session):
            return None
        return channel.relay

    @hookimpl(optionalhook=True)
    def callgate_mcp_elicit(self, session: Any, server: str,
                            request: dict[str, Any]) -> dict[str, Any] | None:
        relay = self._relay(session)
        return relay.elicit_for(server, request) if relay is not None else None

    @hookimpl(optionalhook=True)
    def callgate_mcp_sample(self, session: Any, server: str,
                            request: dict[str, Any]) -> dict[str, Any] | None:
        relay = self._relay(session)
        return relay.sample(server, request) if relay is not None else None

    @hookimpl(optionalhook=True)
    def callgate_mcp_log(self, session: Any, server: str, message: dict[str, Any]) -> None:
        logger = f"mcp:{server}" + (f"/{message['logger']}" if message.get("logger") else "")
        level = str(message.get("level", "info"))
        relay = self._relay(session)
        if relay is not None:
            relay.log(level, logger, message.get("data"))
            return
        from ._server import app_of  # the SDK: only when a server is running

        app = app_of(session)
        if app is not None:
            app.log_outside_calls(level, logger, message.get("data"))

    @hookimpl
    def callgate_ask_permission(self, call: Any, tool: Any, session: Any,
                                preview: Any) -> Awaitable[Decision | None] | None:
        channel = current_channel.get()
        if channel is None or channel.elicit is None or not belongs_to(session, channel.session):
            return None
        return ask_approval(channel.elicit, call, tool, session, preview)


class ElicitationAsker:
    """The ``callgate_ask_user`` hook of ``callgate serve`` (registered beside the approver)."""

    @hookimpl(optionalhook=True)
    def callgate_ask_user(
        self, session: Any, questions: list[dict[str, Any]]
    ) -> Awaitable[dict[str, Any] | None] | None:
        channel = current_channel.get()
        if channel is None or channel.elicit is None or not belongs_to(session, channel.session):
            return None
        return ask_questions(channel.elicit, questions)


__all__ = ["ElicitationApprover", "ElicitationAsker", "register"]
