"""The batch scheduler: when each call of one model turn may run, and when it is shaped.

Every call of a batch runs the whole pipeline (`_pipeline.run_call`); the
scheduler only orders them (host.md §3):

- read-only calls run concurrently; a mutation or an ``exclusive`` call starts
  after every earlier call has finished, and holds back every later one (so a
  read after a mutation sees its effect);
- results are shaped in call order, once every call has its result: the storm
  breaker looks at the whole batch first, and the first result carries its hint
  and the session's notices (the call that finishes last shapes them all).

A batch of one runs inline (`Alone`), with no task and no waiting.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import anyio
import attrs

from .._model.values import ToolResult

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


#: Step 7 for one call: ``shape(step, result, tail)`` (the pipeline's `shape`).
Shape = Callable[[Any, ToolResult, Tail], ToolResult]


class Slot(Protocol):
    """One call's place in its batch: the pipeline asks it when to run, then hands it the
    call's result to be shaped when the batch allows."""

    def start(self, read_only: bool, exclusive: bool) -> Awaitable[None] | None:
        """What to await before the call may run (steps 3-6), or ``None``: at once."""

    async def shaped(self, step: Any, result: ToolResult) -> ToolResult:
        """The call's result after step 7, run in call order once every call of the batch
        has its result (the storm breaker looks at all of them first)."""

    def abandon(self) -> None:
        """The call ends without a result (its task is being cancelled)."""


class Alone:
    """The slot of a batch of one: it runs at once and is shaped at once, as the first."""

    def __init__(self, observe: Observe, shape: Shape) -> None:
        self._observe = observe
        self._shape = shape

    def start(self, read_only: bool, exclusive: bool) -> None:
        return None

    async def shaped(self, step: Any, result: ToolResult) -> ToolResult:
        hint = self._observe([result], [step.sent.arguments])
        return self._shape(step, result, FIRST if hint is None else Tail(True, hint))

    def abandon(self) -> None:
        return None


class Batch:
    """The shared state of one batch of several calls: what each is, what has finished.

    The last call to finish shapes every result, in call order; the others wait for it.
    """

    def __init__(self, size: int, observe: Observe, shape: Shape) -> None:
        self._observe = observe
        self._shape = shape
        self._kinds: list[str | None] = [None] * size  # "read", "write", "answered"
        self._known = [anyio.Event() for _ in range(size)]
        self._done = [anyio.Event() for _ in range(size)]
        self._steps: list[Any] = [None] * size
        self._results: list[ToolResult | None] = [None] * size
        self._shaped: list[ToolResult | None] = [None] * size
        self._all_shaped = anyio.Event()
        self._left = size

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
            last = next((e for e in range(index - 1, -1, -1) if self._kinds[e] == "write"),
                        None)
            waits = range(last, last + 1) if last is not None else range(0)
        for earlier in waits:
            if not self._done[earlier].is_set():
                await self._done[earlier].wait()

    async def shaped(self, index: int, step: Any, result: ToolResult) -> ToolResult:
        self._mark(index, "answered")
        self._steps[index], self._results[index] = step, result
        self._done[index].set()
        self._left -= 1
        if self._left == 0:
            self._shape_all()
        elif not self._all_shaped.is_set():
            await self._all_shaped.wait()
        shaped = self._shaped[index]
        assert shaped is not None
        return shaped

    def _shape_all(self) -> None:
        done = [(s, r) for s, r in zip(self._steps, self._results, strict=True)
                if r is not None]
        hint = self._observe([r for _s, r in done], [s.sent.arguments for s, _r in done])
        try:
            for index, (step, result) in enumerate(zip(self._steps, self._results,
                                                       strict=True)):
                if result is None:
                    continue
                tail = (FIRST if hint is None else Tail(True, hint)) if index == 0 else LATER
                self._shaped[index] = self._shape(step, result, tail)
        finally:
            self._all_shaped.set()

    def abandon(self, index: int) -> None:
        self._mark(index, "answered")
        self._done[index].set()
        self._left -= 1


class BatchSlot:
    """Call ``index`` of a `Batch`."""

    def __init__(self, batch: Batch, index: int) -> None:
        self._batch = batch
        self._index = index

    def start(self, read_only: bool, exclusive: bool) -> Awaitable[None]:
        kind = "read" if read_only and not exclusive else "write"
        return self._batch.wait_turn(self._index, kind)

    async def shaped(self, step: Any, result: ToolResult) -> ToolResult:
        return await self._batch.shaped(self._index, step, result)

    def abandon(self) -> None:
        self._batch.abandon(self._index)


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


__all__ = ["Alone", "Batch", "FifoLock", "Shape", "Slot", "Tail", "cancelled_result"]
