"""The server's turn: one ``tools/call`` batch at a time, in arrival order, lendable.

A call that waits for its user's approval lends the turn (`Turn.lent`), so the session's
other requests run meanwhile; it takes the turn back, in arrival order, when the answer
(or the timeout, or the request's cancellation) comes. Unlike ``anyio.Lock`` it has no
owner task: the batch's approver runs in whichever task the pipeline gives it. The lock
is the library's (`callgate_toolkit.fifo.FifoLock`).
"""

from __future__ import annotations

from callgate_toolkit.fifo import FifoLock as Turn

__all__ = ["Turn"]
