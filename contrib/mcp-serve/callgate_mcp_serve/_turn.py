"""The server's turn: one ``tools/call`` batch at a time, in arrival order, lendable.

A call that waits for its user's approval lends the turn (`Turn.lent`), so the session's
other requests run meanwhile; it takes the turn back, in arrival order, when the answer
(or the timeout, or the request's cancellation) comes. Unlike ``anyio.Lock`` it has no
owner task: the batch's approver runs in whichever task the pipeline gives it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio


class Turn:
    """A FIFO lock of the event loop, free to release from any task of it."""

    def __init__(self) -> None:
        self._held = False
        self._waiters: deque[anyio.Event] = deque()

    async def acquire(self) -> None:
        if not self._held and not self._waiters:
            self._held = True
            return
        event = anyio.Event()
        self._waiters.append(event)
        try:
            await event.wait()
        except BaseException:
            if event in self._waiters:
                self._waiters.remove(event)
            elif event.is_set():  # handed to us while we were being cancelled
                self.release()
            raise

    def release(self) -> None:
        if self._waiters:
            self._waiters.popleft().set()  # ownership passes to the next waiter
        else:
            self._held = False

    async def __aenter__(self) -> None:
        await self.acquire()

    async def __aexit__(self, *exc: object) -> None:
        self.release()

    @asynccontextmanager
    async def lent(self) -> AsyncIterator[None]:
        """Release the held turn for the body; take it back (shielded) afterwards."""
        self.release()
        try:
            yield
        finally:
            with anyio.CancelScope(shield=True):
                await self.acquire()


__all__ = ["Turn"]
