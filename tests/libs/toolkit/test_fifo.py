"""callgate_toolkit.fifo.FifoLock: arrival order, no owner task, lending (the lock the
MCP server's turn is)."""

from __future__ import annotations

import anyio
import pytest
from callgate_toolkit.fifo import FifoLock


@pytest.mark.anyio
async def test_waiters_are_served_in_arrival_order_and_a_cancelled_one_passes_it_on() -> None:
    lock, order = FifoLock(), []
    await lock.acquire()

    async def waiter(name: str, scope: anyio.CancelScope | None = None) -> None:
        with scope or anyio.CancelScope():
            async with lock:
                order.append(name)

    cancelled = anyio.CancelScope()
    async with anyio.create_task_group() as tg:
        for name in ("a", "b", "c"):
            tg.start_soon(waiter, name, cancelled if name == "b" else None)
            await anyio.wait_all_tasks_blocked()
        cancelled.cancel()
        await anyio.wait_all_tasks_blocked()
        lock.release()  # from a task that is not the one that acquired it
    assert order == ["a", "c"]
    async with lock:  # free again
        pass


@pytest.mark.anyio
async def test_a_lent_lock_lets_a_waiter_in_and_is_taken_back_behind_it() -> None:
    lock, order = FifoLock(), []
    async with anyio.create_task_group() as tg:
        await lock.acquire()

        async def other() -> None:
            async with lock:
                order.append("other")

        tg.start_soon(other)
        await anyio.wait_all_tasks_blocked()
        async with lock.lent():
            await anyio.wait_all_tasks_blocked()
            order.append("lender waited")
        order.append("lender back")
        lock.release()
    assert order == ["other", "lender waited", "lender back"]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
