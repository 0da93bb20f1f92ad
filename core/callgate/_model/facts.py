"""Execution facts: who ran which writer or destructive call on which paths (issue 22).

Every call the pipeline dispatches that is not read-only (for its arguments) adds one
`ExecutionFact` to its host's `FactLog` once it ends, whichever session of the host ran
it (a root session, a subagent's child, a planner or an executor): the session and its
profile, the tool as it ran (a proxy's target), the canonical paths the host gate leased,
when it held them, and how it ended. Two writers of one path never overlap (the gate's
writer lease is process-wide), and the facts show it: their ``[started, ended]`` spans
on a shared path are disjoint. The log keeps the newest `MAX_FACTS`.
"""

from __future__ import annotations

import collections
import threading

import attrs

MAX_FACTS = 10_000


@attrs.frozen(kw_only=True)
class ExecutionFact:
    """One writer or destructive call: ``session`` (its id), ``profile`` (the child
    profile's name, ``None`` for a session without one), ``depth``, ``call_id``, ``tool``
    (as it ran), ``paths`` (canonical, those the gate leased), ``destructive``,
    ``started``/``ended`` (``time.monotonic()`` around the gate and the tool) and
    ``outcome`` (``"ok"`` or the error kind)."""

    session: str
    profile: str | None
    depth: int
    call_id: str
    tool: str
    paths: tuple[str, ...]
    destructive: bool
    started: float
    ended: float
    outcome: str


class FactLog:
    """The host's execution facts, oldest first (thread-safe)."""

    def __init__(self, limit: int = MAX_FACTS) -> None:
        self._lock = threading.Lock()
        self._facts: collections.deque[ExecutionFact] = collections.deque(maxlen=limit)

    def add(self, fact: ExecutionFact) -> None:
        with self._lock:
            self._facts.append(fact)

    def facts(self) -> list[ExecutionFact]:
        with self._lock:
            return list(self._facts)
