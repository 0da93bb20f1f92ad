"""The one place a call is recorded: its span (`telemetry`), its entries in the session
store (the session's `Journal`) and, for a writer or a destructive call, its execution
fact on the host. The stages never record anything themselves; the pipeline's loop hands
every stage's news here (pytest's ``call_and_report``: run a stage, then report it).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .._model.facts import ExecutionFact
from .._model.values import ToolResult
from .._store.records import FactRecord
from . import telemetry
from .step import Event, Step

if TYPE_CHECKING:
    from .._results.results import StoredResult
    from .._store.records import CallEnded
    from .state import SessionState


def batch_started(state: SessionState, steps: Sequence[Step]) -> None:
    """The batch and its calls, in call order, before any of them runs."""
    journal = state.journal
    if not journal.calls:
        return
    turn = journal.batch()
    for position, step in enumerate(steps):
        step.record = journal.call_started(turn, position, step.call, state.turn_origin)
    journal.batch_ended()


def batch_ended(state: SessionState) -> None:
    if state.journal.calls:
        state.journal.batch_ended()


def call_started(state: SessionState, step: Step) -> None:
    """The call's span opens (when the session traces)."""
    if state.tracer is not None:
        step.span = telemetry.start(state.tracer, state.id, step.sent.id, step.sent.name)


def event(step: Step, news: Event | None) -> None:
    """A stage's news on the call's span (nothing without a span or news)."""
    if news is not None and step.span is not None:
        step.span.add_event(*news)


def answered(step: Step, result: ToolResult, news: Event | None) -> None:
    """A stage answered the call: its news, and the validation verdict an invalid call's
    answer is (whichever stage found the arguments invalid)."""
    event(step, news)
    if result.error is not None and result.error.kind == "invalid_arguments":
        event(step, ("validation", {"valid": False}))


def dispatched(
    state: SessionState,
    step: Step,
    result: ToolResult,
    paths: tuple[str, ...],
    started: float,
    ended: float,
) -> None:
    """A writer's (or a destructive call's) gate finding on the span, and its execution fact
    on the host: the paths its gate held, and from when to when (monotonic); a session that
    records its calls keeps the fact in the session store too (Unix times there)."""
    event(step, step.gate)
    profile = state.profile
    error = result.error
    fact = ExecutionFact(
        session=state.id,
        profile=profile.name if profile is not None else None,
        depth=state.depth,
        call_id=step.sent.id,
        tool=str(step.call.name),
        paths=paths,
        destructive=step.destructive,
        started=started,
        ended=ended,
        outcome=error.kind if error is not None else "ok",
    )
    state.host.record_fact(fact)
    journal = state.journal
    if journal.calls:
        offset = time.time() - time.monotonic()  # monotonic spans as wall-clock times
        journal.fact(
            FactRecord(
                fact.session,
                fact.call_id,
                fact.tool,
                fact.profile,
                fact.depth,
                fact.paths,
                fact.destructive,
                fact.started + offset,
                fact.ended + offset,
                fact.outcome,
            )
        )


def shaped(
    state: SessionState,
    step: Step,
    result: ToolResult,
    complete: str,
    shown: str | None,
    item: StoredResult,
    notices: list[str],
) -> None:
    """The call's end: its record in the store (how it was judged, its result after
    shaping, so what a redaction plugin removed is not stored; ``shown`` when the model saw
    other text; ``item`` is its whole text in the result store), the notices shown with it,
    and its span's outcome."""
    if step.record is not None:
        item.end = _ended(state, step, result, complete, shown, item.seq)
        state.results.recorded()  # a store trim this call caused goes in after its record
        if notices:
            state.journal.notices(notices)
    _end_span(step, result)


def cancelled(state: SessionState, step: Step) -> None:
    """The call's task is being cancelled: it ends without a result."""
    result = ToolResult.failure("cancelled", "cancelled", "cancelled")
    if step.record is not None:
        _ended(state, step, result, "cancelled", None, None)
    _end_span(step, result, effective=False)


def _ended(
    state: SessionState,
    step: Step,
    result: ToolResult,
    complete: str,
    shown: str | None,
    result_seq: int | None,
) -> CallEnded:
    assert step.record is not None
    error = result.error
    effective = step.call.name if isinstance(step.call.name, str) else None
    return state.journal.call_ended(
        step.record,
        tool=effective if effective != step.sent.name else None,
        outcome=error.kind if error is not None else "ok",
        is_error=result.is_error,
        signature=error.signature if error is not None else None,
        permission=step.permission,
        decided_by=step.decided_by,
        text=complete,
        shown=shown,
        ended=step.ended or time.time(),
        result_seq=result_seq or 0,
    )


def _end_span(step: Step, result: ToolResult, *, effective: bool = True) -> None:
    if step.span is None:
        return
    tool = step.call.name if effective and step.call.name != step.sent.name else None
    telemetry.end(
        step.span, result, tool=tool, permission=step.permission, decided_by=step.decided_by
    )


__all__ = [
    "answered",
    "batch_ended",
    "batch_started",
    "call_started",
    "cancelled",
    "dispatched",
    "event",
    "shaped",
]
