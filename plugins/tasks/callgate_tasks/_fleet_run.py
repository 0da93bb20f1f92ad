"""Running a planned fleet: dependencies first, concurrency and writers capped.

An item starts once every item it depends on completed; when one of them ended any
other way (failed, partial, cancelled, skipped) it is skipped, and so are its own
dependents: a failure skips only what depends on it. With ``fail_fast`` the first
failure cancels the children still running and skips everything not started. At most
``max_parallel`` children run at once, at most ``max_writers`` of them writers.
Cancelling the call (``cancelled``), or closing the session, cancels every child.
Each child gets its record (a ``Subagent reference``) when it starts.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

import anyio
import anyio.abc
import attrs
from callgate import ToolError

from ._fleet_plan import Item
from ._keys import SUBAGENTS
from ._model import SubagentOutcome, SubagentRecord, SubagentRequest
from ._run import CANCELLED, POLL_SECONDS, outcome_of_error, outcome_of_value

log = logging.getLogger("callgate.tasks")

DONE = ("completed", "partial", "failed", "cancelled", "skipped")


@attrs.define(eq=False)
class Slot:
    """One item's progress: ``pending``, ``running``, a child status, or ``skipped``."""

    item: Item
    status: str = "pending"
    record: SubagentRecord | None = None
    reason: str | None = None
    scope: anyio.CancelScope | None = None


class FleetRun:
    """One fleet's scheduler (`run` once)."""

    def __init__(
        self,
        runner: Any,
        session: Any,
        items: Sequence[Item],
        *,
        max_parallel: int,
        max_writers: int,
        fail_fast: bool,
        cancelled: Callable[[], bool],
        profile_of: Callable[[Item], Any],
    ) -> None:
        self.slots = [Slot(item) for item in items]
        self._by_id = {s.item.id: s for s in self.slots}
        self._runner = runner
        self._session = session
        self._book = session.extension(SUBAGENTS)
        self._max_parallel = max_parallel
        self._max_writers = max_writers
        self._fail_fast = fail_fast
        self._cancelled = cancelled
        self._profile_of = profile_of
        self._changed: anyio.Event | None = None
        self.stopped: str | None = None

    @property
    def finished(self) -> int:
        return sum(1 for s in self.slots if s.status in DONE)

    async def run(self) -> list[Slot]:
        self._changed = anyio.Event()
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(self._watch)
            while True:
                self._schedule(tasks)
                if not any(s.status in ("pending", "running") for s in self.slots):
                    break
                assert self._changed is not None
                await self._changed.wait()
                self._changed = anyio.Event()
            tasks.cancel_scope.cancel()
        return self.slots

    # --- scheduling -------------------------------------------------------------------

    def _skip_reason(self, slot: Slot) -> str | None:
        if self.stopped:
            return self.stopped
        for dep in slot.item.depends_on:
            other = self._by_id[dep]
            if other.status in DONE and other.status != "completed":
                return f"dependency {dep} ended {other.status}"
        return None

    def _schedule(self, tasks: anyio.abc.TaskGroup) -> None:
        changed = True
        while changed:  # a skip may make more skips
            changed = False
            for slot in self.slots:
                if slot.status == "pending" and (why := self._skip_reason(slot)):
                    slot.status, slot.reason = "skipped", why
                    changed = True
        running = [s for s in self.slots if s.status == "running"]
        writers = sum(1 for s in running if s.item.claims)
        for slot in self.slots:
            if len(running) >= self._max_parallel:
                break
            if slot.status != "pending":
                continue
            if not all(self._by_id[d].status == "completed" for d in slot.item.depends_on):
                continue
            if slot.item.claims and writers >= self._max_writers:
                continue
            slot.status = "running"
            slot.record = self._book.start(slot.item.description, tool="fleet",
                                           profile=self._profile_of(slot.item))
            slot.scope = anyio.CancelScope()
            running.append(slot)
            writers += bool(slot.item.claims)
            tasks.start_soon(self._run_child, slot)

    def _stop(self, why: str) -> None:
        if self.stopped is None:
            self.stopped = why
        for slot in self.slots:
            if slot.status == "running" and slot.scope is not None:
                slot.scope.cancel()
        if self._changed is not None:
            self._changed.set()

    async def _watch(self) -> None:
        while not self._cancelled():
            await anyio.sleep(POLL_SECONDS)
        self._stop("the fleet was cancelled")

    # --- one child --------------------------------------------------------------------------

    async def _run_child(self, slot: Slot) -> None:
        assert slot.scope is not None and slot.record is not None
        outcome = CANCELLED
        with slot.scope:
            outcome = await self._call(slot)
        if slot.scope.cancelled_caught:
            outcome = CANCELLED
        try:
            slot.record = self._book.finish(slot.record, outcome)
        except Exception:  # the store failed: the outcome still reaches the model
            log.warning("could not record subagent %s", slot.record.ref, exc_info=True)
            slot.record = attrs.evolve(
                slot.record,
                status=outcome.status,
                retryable=outcome.is_retryable,
                error_code=outcome.error_code,
                answer=outcome.answer,
            )
        slot.status = outcome.status
        if self._fail_fast and outcome.status in ("failed", "cancelled") and not self.stopped:
            self._stop(f"fail_fast: {slot.item.id} ended {outcome.status}")
        if self._changed is not None:
            self._changed.set()

    async def _call(self, slot: Slot) -> SubagentOutcome:
        assert slot.record is not None
        profile = self._profile_of(slot.item)
        try:
            child = self._session.open_child(profile=profile)
        except ToolError as exc:  # no subagent depth remains
            return SubagentOutcome(
                status="failed", answer=exc.message, error_code="max_depth", retryable=False
            )
        request = SubagentRequest(
            ref=slot.record.ref,
            description=slot.item.description,
            prompt=slot.item.prompt,
            workspace=self._session.workspace.root,
            session=child,
            profile=profile,
            max_steps=slot.item.max_steps,
        )
        try:
            return outcome_of_value(await self._runner.run(request))
        except Exception as exc:
            log.debug("subagent %s raised", slot.record.ref, exc_info=True)
            return outcome_of_error(exc)
        finally:
            with anyio.CancelScope(shield=True):
                await child.close()
