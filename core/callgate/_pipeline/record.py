"""The one place a call is recorded: its span (`telemetry`), its entries in the session
store (the session's `Journal`) and, for a writer or a destructive call, its execution
fact on the host. The stages never record anything themselves; the pipeline's loop hands
every stage's news here (pytest's ``call_and_report``: run a stage, then report it).

For the store, the event loop only queues what the call did as it is: the step, its
result's verdict, the texts, the times (`Journal.call_started`, `call_ended`, `fact`).
The store's writer thread builds the ops from them (`_started`, `_ended`, `_fact`, below),
then encodes, hashes and writes them, many calls in one transaction. Those builders read
only what nothing changes once it is queued: a step's verdict and names are final when it
is shaped, and what may still change (the result, the effective call) is passed by value.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .._model.facts import ExecutionFact
from .._model.values import ToolCall, ToolResult
from .._store.records import (
    BatchStarted,
    CallEnded,
    CallStarted,
    FactRecord,
    FactRecorded,
    NoticeRecorded,
)
from . import telemetry
from .step import Event, Step

if TYPE_CHECKING:
    from .._model.values import ErrorInfo
    from .._results.results import StoredResult
    from .._store.journal import Journal
    from .._store.records import Op
    from .state import SessionState


def batch_started(state: SessionState, steps: Sequence[Step]) -> None:
    """The batch and its calls, in call order, before any of them runs (a call that runs
    long, or whose process dies, is in the store as running)."""
    journal = state.journal
    if not journal.calls:
        return
    # (a batch of one is queued by `started_one`: `pipeline.run_batch`)
    calls = tuple([(step, step.call) for step in steps])
    journal.call_started((_started, journal, calls, state.turn_origin, time.time()))


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
    if journal.calls:  # monotonic spans as wall-clock times
        journal.fact((_fact, fact, time.time() - time.monotonic()))


def shaped(
    state: SessionState,
    step: Step,
    result: ToolResult,
    complete: str,
    shown: str | None,
    item: StoredResult,
    notices: list[str] | None,
) -> None:
    """The call's end: its record in the store (how it was judged, its result after
    shaping, so what a redaction plugin removed is not stored; ``shown`` when the model saw
    other text; ``item`` is its whole text in the result store), the notices shown with it,
    and its span's outcome."""
    journal = state.journal
    if journal.calls:
        item.end = step  # its record is on its way: the writer links the two (`_ended`)
        error = result.error
        ended = step.ended or time.time()
        journal.call_ended(
            (_ended, journal, step, error, result.is_error, complete, shown, ended, item, notices)
        )  # ``notices`` is the caller's own list, or None
        results = state.results
        if results.trim_due is not None:  # a store trim this call caused: after its record
            results.recorded()
    if step.span is not None:
        _end_span(step, result)


def cancelled(state: SessionState, step: Step) -> None:
    """The call's task is being cancelled: it ends without a result."""
    result = ToolResult.failure("cancelled", "cancelled", "cancelled")
    journal = state.journal
    if journal.calls:
        error, at = result.error, time.time()
        journal.call_ended((_ended, journal, step, error, True, "cancelled", None, at, None, None))
    _end_span(step, result, effective=False)


# --- the writer thread: the store's ops, built from what the loop queued ---------------------


def _started(
    journal: Journal, calls: tuple[tuple[Step, ToolCall], ...], origin: str | None, at: float
) -> list[Op]:
    """The batch's op and each call's (``calls``: each step with its call as it came)."""
    session, run = journal.session_id, journal.run
    assert run is not None
    batch = BatchStarted(session)
    ops: list[Op] = [batch]
    for position, (step, call) in enumerate(calls):
        name = call.name
        op = CallStarted(
            session,
            batch,
            position,
            call.id,
            name if isinstance(name, str) else repr(name),
            call.arguments,
            origin,
            at,
            run,
        )
        step.record = op  # only this thread reads it (`_ended`)
        ops.append(op)
    return ops


def started_one(
    journal: Journal, step: Step, call: ToolCall, origin: str | None, at: float
) -> list[Op]:
    """`_started` for a batch of one call (the usual turn: the pipeline queues it with no
    tuple of calls, `pipeline.run_batch`)."""
    return _started(journal, ((step, call),), origin, at)


def _ended(
    journal: Journal,
    step: Step,
    error: ErrorInfo | None,
    is_error: bool,
    text: str,
    shown: str | None,
    ended: float,
    item: StoredResult | None,
    notices: list[str] | None,
) -> list[Op]:
    """The call's end (applied with its start when that is still queued) and the notices
    shown with it; its stored result is linked to the record (``item.end``: the result store
    lets the bytes go once it is committed)."""
    start = step.record
    results = journal.results
    if start is None:  # no record will commit it: the result store must not wait for one
        if item is not None and results is not None:
            results.link(item, step, None)
            journal.recorder.after_commit(id(journal), results.settle)  # type: ignore[union-attr]
        return []
    effective = step.call.name if isinstance(step.call.name, str) else None
    op = CallEnded(
        start,
        effective if effective != step.sent.name else None,
        error.kind if error is not None else "ok",
        is_error,
        error.signature if error is not None else None,
        step.permission,
        step.decided_by,
        text,
        shown,
        ended,
        item.seq if item is not None else 0,
    )
    start.end = op  # applied whole if the start is still queued
    if item is not None and results is not None:
        results.link(item, step, op)
        # the result store settles once this commit is done
        journal.recorder.after_commit(id(journal), results.settle)  # type: ignore[union-attr]
    if not notices:
        return [op]
    now = time.time()
    return [op, *(NoticeRecorded(journal.session_id, text, now) for text in notices)]


def _fact(fact: ExecutionFact, offset: float) -> list[Op]:
    return [
        FactRecorded(
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
    ]


def _end_span(step: Step, result: ToolResult, *, effective: bool = True) -> None:
    if step.span is None:
        return
    tool = step.call.name if effective and step.call.name != step.sent.name else None
    telemetry.end(
        step.span, result, tool=tool, permission=step.permission, decided_by=step.decided_by
    )


__all__ = [
    "answered",
    "batch_started",
    "call_started",
    "cancelled",
    "dispatched",
    "event",
    "shaped",
]
