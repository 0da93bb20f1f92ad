"""Running `CallgateMCP` over stdio until the client goes away or a signal arrives.

The SDK's ``stdio_server`` points fd 0 at the null device and fd 1 at stderr
while it serves, so nothing a tool or a background job prints can corrupt the
JSON-RPC stream. The session is closed on every way out:

- end of input (the client closed our stdin, the MCP shutdown sequence): the
  server loop ends, the connection's lifespan closes the session, we return;
- SIGTERM or SIGINT (the client's escalation, or Ctrl-C): the SDK's stdin reader
  sits in a blocking read that cannot be interrupted, so the session is closed
  first (jobs killed, child servers stopped) and the process then exits at once.

A line the SDK cannot read (not JSON, a lone surrogate escape, nested deeper than its
parser allows, not a JSON-RPC message) is answered with a JSON-RPC error carrying the
request's id (`_unreadable`), so the client is never left waiting; the session goes on.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
from typing import Any

import anyio
import anyio.abc
from anyio.streams.memory import MemoryObjectSendStream
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

from ._server import CallgateMCP
from ._unreadable import answer_for

log = logging.getLogger("callgate.mcp_serve")

SIGNALS = (signal.SIGTERM, signal.SIGINT) if sys.platform != "win32" else ()


async def _stop_on_signal(app: CallgateMCP, *, task_status: anyio.abc.TaskStatus[None]) -> None:
    with anyio.open_signal_receiver(*SIGNALS) as signals:
        task_status.started()
        async for signum in signals:
            log.info("signal %s: closing the session", signum)
            with anyio.CancelScope(shield=True):
                await app.aclose()
            sys.stderr.flush()
            os._exit(0)


async def _answer_unreadable(incoming: Any,
                             forward: MemoryObjectSendStream[SessionMessage | Exception],
                             replies: Any) -> None:
    """Pass what the client sent on to the server; answer each line the SDK could not read
    with its JSON-RPC error instead (the server would only log it)."""
    async with forward:
        while True:
            try:
                item = await incoming.receive()
            except (anyio.EndOfStream, anyio.ClosedResourceError):
                return
            if isinstance(item, Exception):
                answer = answer_for(item)
                if answer is not None:
                    log.warning("answered an unreadable request: %s", answer.error.message)
                    await replies.send(SessionMessage(answer))
                    continue
            await forward.send(item)


async def serve_stdio(app: CallgateMCP) -> None:
    """Serve ``app`` on this process's stdin/stdout until the client goes away."""
    async with anyio.create_task_group() as tasks:
        if SIGNALS:
            await tasks.start(_stop_on_signal, app)
        async with stdio_server() as (read_stream, write_stream):
            checked_in, checked = anyio.create_memory_object_stream[SessionMessage | Exception]()
            tasks.start_soon(_answer_unreadable, read_stream, checked_in, write_stream)
            await app.server.run(checked, write_stream,
                                 app.server.create_initialization_options())
        tasks.cancel_scope.cancel()


__all__ = ["serve_stdio"]
