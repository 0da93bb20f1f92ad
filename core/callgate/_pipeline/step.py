"""`Step`: one call on its way through the pipeline, and `Answered`, how a stage ends it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

import attrs

from .._model.values import Decision, ToolCall, ToolResult

if TYPE_CHECKING:
    from .._model.spec import ToolSpec
    from .._store.records import CallStarted
    from .batch import Slot

#: A stage's news for the call's span: ``(event name, attributes)``.
Event = tuple[str, dict[str, Any]]


class Answered(Exception):
    """A stage answered the call itself; the stages after it never run. ``event`` is what
    the answering stage tells the call's span (a refusal's verdict)."""

    def __init__(self, result: ToolResult, event: Event | None = None) -> None:
        super().__init__(result.text)
        self.result = result
        self.event = event


@attrs.define(slots=True)
class Step:
    """One call on its way: as the model sent it, and what its hooks see (each stage fills
    in what it learned: the tool, the effective call, how it may run, its verdict)."""

    sent: ToolCall
    call: ToolCall
    tool: ToolSpec | None = None
    read_only: bool = False
    destructive: bool = False
    exclusive: bool = False
    fallback: str | None = None
    inside: bool = False  # the arguments sit inside a proxy's call (feedback wording)
    slot: Slot | None = None  # its place in the batch
    ask: Decision | None = None  # an ``ask`` for the approver (the permission stage's)
    expected: dict[str, Any] | None = None  # the versions an approved preview was made on
    result: ToolResult | None = None  # the call's answer, once a stage has one
    record: CallStarted | None = None  # its record's start: the store writer's (`record`)
    permission: str | None = None  # allow, deny, ask:allow, ask:deny (when it was judged)
    decided_by: str | None = None  # the rule, plugin, mode or approver that decided
    gate: Event | None = None  # what the host gate found (for the span)
    ended: float = 0.0
    span: Any = None  # the call's OpenTelemetry span (`_pipeline.telemetry`), when traced

    #: A stored result stands linked to its call while the call's record is on its way to
    #: the store (`StoredResult.end`; the writer links it to the record it builds): a call
    #: is never a committed record itself.
    committed: ClassVar[bool] = False


def judged(step: Step, decision: str, decided_by: str) -> Event:
    """The permission verdict, kept for the call's record and span."""
    step.permission, step.decided_by = decision, decided_by
    return ("permission", {"decision": decision, "decided_by": decided_by})


__all__ = ["Answered", "Event", "Step", "judged"]
