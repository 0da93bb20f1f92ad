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
The answering happens in the task that reads the SDK's stream (`AnsweringStream`), not in a
relay task of its own: a message costs no extra task switch on its way to the server.

Piped stdin and stdout (how MCP clients start a server) are served from the event loop
(`_pipes`): no worker-thread round trip to read a request or to write and flush its answer.
A terminal, a file or another event loop gets the SDK's own transport.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
from typing import Any

import anyio
import anyio.abc
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

from . import _pipes
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


class AnsweringStream:
    """The SDK's stdin stream as the server reads it, with each line the SDK could not read
    answered with its JSON-RPC error on the way (the server would only log it).

    It filters in the reading task itself: no task and no memory stream of its own between
    the stdin reader and the server, so a request costs no extra task switch (a relay task
    did, once per message). The sender's context (``last_context``) is the SDK stream's."""

    def __init__(self, incoming: Any, replies: Any) -> None:
        self._incoming = incoming
        self._replies = replies

    @property
    def last_context(self) -> Any:
        return getattr(self._incoming, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        while True:
            item = await self._incoming.receive()
            if isinstance(item, Exception):
                answer = answer_for(item)
                if answer is not None:
                    log.warning("answered an unreadable request: %s", answer.error.message)
                    await self._replies.send(SessionMessage(answer))
                    continue
            return item

    async def aclose(self) -> None:
        await self._incoming.aclose()

    def __aiter__(self) -> AnsweringStream:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> AnsweringStream:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


async def serve_stdio(app: CallgateMCP) -> None:
    """Serve ``app`` on this process's stdin/stdout until the client goes away."""
    async with anyio.create_task_group() as tasks:
        if SIGNALS:
            await tasks.start(_stop_on_signal, app)
        wire = _pipes.pipe_stdio() if _pipes.usable() else stdio_server()
        async with wire as (read_stream, write_stream):
            await app.server.run(AnsweringStream(read_stream, write_stream), write_stream,
                                 app.server.create_initialization_options())
        tasks.cancel_scope.cancel()


__all__ = ["AnsweringStream", "serve_stdio"]
