"""``notifications/progress`` for the ``tools/call`` requests that asked for it.

Every ``tools/call`` gets a `Reporter` (the SDK sends nothing for a request without a
``progressToken``; an in-process client's callback is called directly): the tool's
``ctx.progress(done, total, message)`` reports (from the event loop or any worker thread)
are queued to the loop and sent in order with the SDK's ``report_progress``, which uses
the client's token. Progress values only grow (a
report lower than the last one sent is dropped, as MCP requires).
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from callgate import Session

log = logging.getLogger("callgate.mcp_serve")

Report = tuple[float, "float | None", "str | None"]


class Reporter:
    """Sends one request's progress reports to its client."""

    def __init__(self, ctx: Any) -> None:
        self._ctx = ctx
        self._loop = asyncio.get_running_loop()
        self._in: MemoryObjectSendStream[Report]
        self._out: MemoryObjectReceiveStream[Report]
        self._in, self._out = anyio.create_memory_object_stream[Report](math.inf)
        self._last = -math.inf

    def sink(self, done: float, total: float | None, message: str | None) -> None:
        """`callgate.Session.progress_to`'s sink: any thread, never blocks."""
        try:
            self._loop.call_soon_threadsafe(self._in.send_nowait, (done, total, message))
        except RuntimeError:  # the loop is gone: the connection ended
            pass

    async def forward(self) -> None:
        async with self._out:
            async for done, total, message in self._out:
                if done <= self._last:
                    continue
                self._last = done
                try:
                    await self._ctx.session.report_progress(done, total, message)
                except Exception as exc:  # the client went away: the call goes on
                    log.debug("progress not sent: %s", exc)

    def close(self) -> None:
        self._loop.call_soon_threadsafe(self._in.close)


def progress_token(ctx: Any) -> Any:
    meta = getattr(ctx, "meta", None) or {}
    if not isinstance(meta, dict):
        meta = dict(meta)
    return meta.get("progress_token", meta.get("progressToken"))


def reporter(ctx: Any) -> Reporter | None:
    """A `Reporter` for the request of ``ctx`` (the SDK's ``report_progress`` does nothing
    for a request that asked for none; an in-process client asks without a token)."""
    return Reporter(ctx)


@asynccontextmanager
async def forwarding(reporter: Reporter | None, session: Session) -> AsyncIterator[None]:
    """Run the block with its calls' progress going to ``reporter`` (if any)."""
    if reporter is None:
        yield
        return
    async with anyio.create_task_group() as tg:
        tg.start_soon(reporter.forward)
        try:
            with session.progress_to(reporter.sink):
                yield
        finally:
            reporter.close()


__all__ = ["Reporter", "forwarding", "progress_token", "reporter"]
