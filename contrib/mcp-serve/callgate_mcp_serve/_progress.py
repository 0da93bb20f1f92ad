"""``notifications/progress`` for the ``tools/call`` requests that asked for it.

Every ``tools/call`` whose client can hear progress gets a `Reporter` (a JSON-RPC request
without a ``progressToken`` gets none: the SDK would send nothing for it, and the call is
spared the forwarding and the flush before its result; an in-process client's callback is
called without a token, so its calls always get one): the tool's
``ctx.progress(done, total, message)`` reports (from the event loop or any worker thread)
are queued to the loop and sent in order with the SDK's ``report_progress``, which uses
the client's token. Progress values only grow (a
report lower than the last one sent is dropped, as MCP requires).
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.lowlevel
from callgate.host import Session

log = logging.getLogger("callgate.mcp_serve")

Report = tuple[float, "float | None", "str | None"]
#: the longest the result waits for its progress reports to go out
FLUSH_TIMEOUT_S = 2.0


class Reporter:
    """Sends one request's progress reports to its client.

    Costs nothing until the first report: then one task drains the queued reports, in
    order, and ends when the queue is empty (`flush` waits for it before the result goes)."""

    def __init__(self, ctx: Any) -> None:
        self._ctx = ctx
        self._loop = asyncio.get_running_loop()
        self._queue: deque[Report] = deque()
        self._task: asyncio.Task[None] | None = None
        self._last = -math.inf

    def sink(self, done: float, total: float | None, message: str | None) -> None:
        """`callgate.Session.progress_to`'s sink: any thread, never blocks."""
        try:
            self._loop.call_soon_threadsafe(self._push, (done, total, message))
        except RuntimeError:  # the loop is gone: the connection ended
            pass

    def _push(self, report: Report) -> None:
        self._queue.append(report)
        if self._task is None or self._task.done():
            self._task = self._loop.create_task(self._drain())

    async def _drain(self) -> None:
        while self._queue:
            done, total, message = self._queue.popleft()
            if done <= self._last:
                continue
            self._last = done
            try:
                await self._ctx.session.report_progress(done, total, message)
            except Exception as exc:  # the client went away: the call goes on
                log.debug("progress not sent: %s", exc)

    async def flush(self) -> None:
        """Wait until every report queued so far was sent (or given up)."""
        await anyio.lowlevel.checkpoint()  # let reports scheduled from threads arrive
        task = self._task
        if task is not None and not task.done():
            with anyio.move_on_after(FLUSH_TIMEOUT_S):
                await asyncio.shield(task)


def progress_token(ctx: Any) -> Any:
    meta = getattr(ctx, "meta", None) or {}
    if not isinstance(meta, dict):
        meta = dict(meta)
    return meta.get("progress_token", meta.get("progressToken"))


_UNKNOWN = object()


def reporter(ctx: Any) -> Reporter | None:
    """A `Reporter` for the request of ``ctx``, or ``None`` when no report could reach its
    client: a JSON-RPC request that brought no ``progressToken`` (the SDK's
    ``report_progress`` sends nothing for it). A request from any other dispatcher gets one
    (the SDK's in-process client calls its callback without a token)."""
    # the SDK's per-request dispatch context, which ``report_progress`` goes through
    dispatch = getattr(getattr(ctx, "session", None), "_request_outbound", None)
    if getattr(dispatch, "_progress_token", _UNKNOWN) is None:
        return None
    return Reporter(ctx)


@asynccontextmanager
async def forwarding(reporter: Reporter, session: Session) -> AsyncIterator[None]:
    """Run the block with its calls' progress going to ``reporter``; the reports are sent
    before the block's result is (a call without a progress token enters none)."""
    with session.progress_to(reporter.sink):
        try:
            yield
        finally:
            with anyio.CancelScope(shield=True):
                await reporter.flush()


__all__ = ["Reporter", "forwarding", "progress_token", "reporter"]
