"""`FifoLock`: an event-loop lock that serves waiters in arrival order and may be lent.

Unlike ``anyio.Lock`` it has no owner task: whichever task of the loop holds it may
release it, so a call that waits for a user's answer can lend its turn (`FifoLock.lent`)
and take it back, in arrival order, when the answer comes. Uncontended it costs nothing
but a flag. The core's session keeps a private copy of the same lock for its batches (the
core never imports a library; this tier sits above it).
"""

from __future__ import annotations

from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio


class FifoLock:
    """A FIFO lock of one event loop, free to release from any task of it.

    Only touched from that loop, so plain attributes suffice.
    """

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
            self._waiters.popleft().set()  # ownership passes directly to the next waiter
        else:
            self._held = False

    async def __aenter__(self) -> None:
        await self.acquire()

    async def __aexit__(self, *exc: object) -> None:
        self.release()

    @asynccontextmanager
    async def lent(self) -> AsyncIterator[None]:
        """Release the held lock for the body; take it back (shielded) afterwards, behind
        whoever queued meanwhile."""
        self.release()
        try:
            yield
        finally:
            with anyio.CancelScope(shield=True):
                await self.acquire()


__all__ = ["FifoLock"]
