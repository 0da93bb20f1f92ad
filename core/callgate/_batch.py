"""The batch scheduler: when each call of one model turn may run, and when it is shaped.

Every call of a batch runs the whole pipeline (`_pipeline.run_call`); the
scheduler only orders them (host.md §3):

- read-only calls run concurrently; a mutation or an ``exclusive`` call starts
  after every earlier call has finished, and holds back every later one (so a
  read after a mutation sees its effect);
- results are shaped in call order, once every call has its result: the storm
  breaker looks at the whole batch first, and the first result carries its hint
  and the session's notices.

A batch of one runs inline (`Alone`), with no task and no waiting.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import anyio
import attrs

from ._model import ToolResult

#: The storm breaker's look at a whole batch: its results and, in the same order, the
#: arguments each call was sent with; the hint for its first result, if due.
Observe = Callable[[list[ToolResult], list[Any]], "str | None"]


def cancelled_result() -> ToolResult:
    return ToolResult.failure("cancelled", "cancelled before it started; nothing was run",
                              "cancelled", {"executed": False})


@attrs.frozen
class Tail:
    """What the host appends to a shaped result: the storm hint and notices go to the first."""

    first: bool
    hint: str | None = None


FIRST = Tail(True)
LATER = Tail(False)


class Slot(Protocol):
    """One call's place in its batch: the pipeline asks it when to run and when to shape."""

    def start(self, read_only: bool, exclusive: bool) -> Awaitable[None] | None:
        """What to await before the call may run (steps 3-6), or ``None``: at once."""

    def finish(self, result: ToolResult) -> Tail | None:
        """The call has its (unshaped) result: its `Tail` when it may be shaped at once,
        else ``None`` (await `shape_turn`)."""

    async def shape_turn(self) -> Tail:
        """Wait until the call may be shaped: every call has its result, earlier ones are
        shaped."""

    def shaped(self) -> None:
        """This call's result is shaped; the next one may be."""


class Alone:
    """The slot of a batch of one: it runs at once and is the first result."""

    def __init__(self, observe: Observe) -> None:
        self._observe = observe

    def start(self, read_only: bool, exclusive: bool) -> None:
        return None

    def finish(self, result: ToolResult) -> Tail:
        hint = self._observe([result])
        return FIRST if hint is None else Tail(True, hint)

    async def shape_turn(self) -> Tail:  # pragma: no cover - finish answers at once
        return FIRST

    def shaped(self) -> None:
        return None


async def _until(event: anyio.Event) -> None:
    """Wait for ``event`` (anyio yields to the loop even for a set event: not needed here)."""
    if not event.is_set():
        await event.wait()


class Batch:
    """The shared state of one batch of several calls: what each is, what has finished."""

    def __init__(self, size: int, observe: Observe) -> None:
        self._observe = observe
        self._kinds: list[str | None] = [None] * size  # "read", "write", "answered"
        self._known = [anyio.Event() for _ in range(size)]
        self._done = [anyio.Event() for _ in range(size)]
        self._shaped = [anyio.Event() for _ in range(size)]
        self._results: list[ToolResult | None] = [None] * size
        self._all_done = anyio.Event()
        self._left = size
        self._hint: str | None = None

    def slot(self, index: int) -> BatchSlot:
        return BatchSlot(self, index)

    async def wait_turn(self, index: int, kind: str) -> None:
        """Record what call ``index`` is, then wait until it may start."""
        self._kinds[index] = kind
        self._known[index].set()
        for earlier in range(index):  # what the earlier calls are is known in call order
            await _until(self._known[earlier])
        if kind == "write":
            for earlier in range(index):
                await _until(self._done[earlier])
            return
        for earlier in range(index - 1, -1, -1):  # the last mutation before it, if any
            if self._kinds[earlier] == "write":
                await _until(self._done[earlier])
                return

    def finish(self, index: int, result: ToolResult) -> None:
        """Call ``index`` has its result (or was answered before its turn)."""
        if self._kinds[index] is None:
            self._kinds[index] = "answered"
            self._known[index].set()
        self._results[index] = result
        self._done[index].set()
        self._left -= 1
        if self._left == 0:
            final = [r for r in self._results if r is not None]
            self._hint = self._observe(final)
            self._all_done.set()

    async def shape_turn(self, index: int) -> Tail:
        await _until(self._all_done)
        if index:
            await _until(self._shaped[index - 1])
        if index:
            return LATER
        return FIRST if self._hint is None else Tail(True, self._hint)

    def shaped(self, index: int) -> None:
        self._shaped[index].set()


class BatchSlot:
    """Call ``index`` of a `Batch`."""

    def __init__(self, batch: Batch, index: int) -> None:
        self._batch = batch
        self._index = index

    def start(self, read_only: bool, exclusive: bool) -> Awaitable[None]:
        kind = "read" if read_only and not exclusive else "write"
        return self._batch.wait_turn(self._index, kind)

    def finish(self, result: ToolResult) -> None:
        self._batch.finish(self._index, result)

    async def shape_turn(self) -> Tail:
        return await self._batch.shape_turn(self._index)

    def shaped(self) -> None:
        self._batch.shaped(self._index)


class FifoLock:
    """An event-loop lock that serves waiters in arrival order and costs nothing uncontended.

    Only touched from the session's event loop, so plain attributes suffice.
    """

    def __init__(self) -> None:
        self._held = False
        self._waiters: deque[anyio.Event] = deque()

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


__all__ = ["Alone", "Batch", "FifoLock", "Slot", "Tail", "cancelled_result"]
