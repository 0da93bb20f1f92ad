"""The batch scheduler: when each call of one model turn may run.

Every call of a batch runs the pipeline's stages (`_pipeline.pipeline.run_call`); the
scheduler only orders them (host.md §3): read-only calls run concurrently; a mutation or
an ``exclusive`` call starts after every earlier call has finished, and holds back every
later one (so a read after a mutation sees its effect). Shaping comes after the batch's
barrier (`_pipeline.pipeline.run_batch`), in call order.

A batch of one runs inline (`ALONE`), with no task and no waiting.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Awaitable
from typing import Protocol

import anyio
import attrs

from .._model.values import ToolResult


def cancelled_result() -> ToolResult:
    return ToolResult.failure(
        "cancelled",
        "cancelled before it started; nothing was run",
        "cancelled",
        {"executed": False},
    )


@attrs.frozen
class Tail:
    """What the host appends to a shaped result: the storm hint and notices go to the first."""

    first: bool
    hint: str | None = None


#: the tails of a batch's first result (without a storm hint) and of every later one
FIRST = Tail(True)
LATER = Tail(False)


class Slot(Protocol):
    """One call's place in its batch: the pipeline asks it when the call may run."""

    def start(self, read_only: bool, exclusive: bool) -> Awaitable[None] | None:
        """What to await before the call may run (pre-tool-use onwards), or ``None``."""

    def finish(self) -> None:
        """The call has its result, or ends without one (its task is being cancelled):
        the calls waiting for it may go."""


class _Alone:
    """The slot of a batch of one: it runs at once."""

    def start(self, read_only: bool, exclusive: bool) -> None:
        return None

    def finish(self) -> None:
        return None


#: the slot of every batch of one
ALONE: Slot = _Alone()


class BatchOrder:
    """The order of one batch of several calls: what each is, which have finished."""

    def __init__(self, size: int) -> None:
        self._kinds: list[str | None] = [None] * size  # "read", "write", "answered"
        self._known = [anyio.Event() for _ in range(size)]
        self._done = [anyio.Event() for _ in range(size)]

    def slot(self, index: int) -> BatchSlot:
        return BatchSlot(self, index)

    def _mark(self, index: int, kind: str) -> None:
        if self._kinds[index] is None:
            self._kinds[index] = kind
            self._known[index].set()

    async def wait_turn(self, index: int, kind: str) -> None:
        """Record what call ``index`` is, then wait until it may start: a mutation after
        every earlier call, a read after the last mutation before it."""
        self._mark(index, kind)
        for earlier in range(index):  # what the earlier calls are is known in call order
            if self._kinds[earlier] is None:
                await self._known[earlier].wait()
        if kind == "write":
            waits = range(index)
        else:
            last = next((e for e in range(index - 1, -1, -1) if self._kinds[e] == "write"), None)
            waits = range(last, last + 1) if last is not None else range(0)
        for earlier in waits:
            if not self._done[earlier].is_set():
                await self._done[earlier].wait()

    def finish(self, index: int) -> None:
        """Call ``index`` has its result (or will have none): later ones may go."""
        self._mark(index, "answered")
        self._done[index].set()


class BatchSlot:
    """Call ``index`` of a `BatchOrder`."""

    def __init__(self, order: BatchOrder, index: int) -> None:
        self._order = order
        self._index = index

    async def start(self, read_only: bool, exclusive: bool) -> None:
        kind = "read" if read_only and not exclusive else "write"
        await self._order.wait_turn(self._index, kind)

    def finish(self) -> None:
        self._order.finish(self._index)


class FifoLock:
    """An event-loop lock that serves waiters in arrival order and costs nothing uncontended.

    Only touched from the session's event loop, so plain attributes suffice.
    """

    def __init__(self) -> None:
        self._held = False
        self._waiters: deque[anyio.Event] = deque()

    def take_now(self) -> bool:
        """Take the lock if it is free (``True``), without awaiting: what ``async with``
        does uncontended, minus a coroutine; else leave it to ``__aenter__`` (``False``).
        Pair a ``True`` with `release`."""
        if not self._held and not self._waiters:
            self._held = True
            return True
        return False

    def release(self) -> None:
        """Let the lock go (to the next waiter, in arrival order)."""
        self._release()

    async def __aenter__(self) -> None:
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
            elif event.is_set():  # handed over to us while we were being cancelled
                self._release()
            raise

    async def __aexit__(self, *exc: object) -> None:
        self._release()

    def _release(self) -> None:
        if self._waiters:
            self._waiters.popleft().set()  # ownership passes directly to the next waiter
        else:
            self._held = False


__all__ = ["ALONE", "FIRST", "LATER", "BatchOrder", "FifoLock", "Slot", "Tail", "cancelled_result"]
