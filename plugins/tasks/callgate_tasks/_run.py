"""Running children through the integrator's runner: error mapping, cancellation, limits.

A runner's return value is used as given. What it raises is mapped onto an
outcome (goals-and-workflow.md §3 "Outcomes"); nothing a child does escapes as
an exception, and one child's failure never cancels its siblings. Cancelling
the call (``ctx.cancelled``) cancels every child still running or waiting.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping, Sequence
from typing import Any

import anyio
import attrs
from callgate import ChildProfile, ToolError

from ._model import STATUSES, SubagentError, SubagentOutcome, SubagentRecord, SubagentRequest

log = logging.getLogger("callgate.tasks")

CANCELLED = SubagentOutcome(status="cancelled", error_code="cancelled", retryable=False)
RETRYABLE_HTTP = frozenset({408, 409, 429})
POLL_SECONDS = 0.05


@attrs.frozen
class Job:
    """One child to run: its record (already written as running), prompt and continuation;
    ``profile`` (a `callgate.ChildProfile`) limits what the child's session may run and
    ``max_steps`` how many model turns the runner should give it (``None``: its own)."""

    record: SubagentRecord
    prompt: str
    continuation: SubagentRecord | None = None
    profile: ChildProfile | None = None
    max_steps: int | None = None


def _status_code(exc: BaseException) -> int | None:
    for holder in (exc, getattr(exc, "response", None)):
        code = getattr(holder, "status_code", None)
        if isinstance(code, int) and not isinstance(code, bool):
            return code
    return None


def outcome_of_error(exc: Exception) -> SubagentOutcome:
    """The outcome of a runner that raised ``exc``."""
    if isinstance(exc, TimeoutError):
        return CANCELLED
    if isinstance(exc, SubagentError):
        return SubagentOutcome(status="failed", error_code=exc.code,
                               retryable=bool(exc.retryable))
    code = _status_code(exc)
    if code is not None:
        return SubagentOutcome(status="failed", error_code=f"provider_http_{code}",
                               retryable=code in RETRYABLE_HTTP or code >= 500)
    if isinstance(exc, ConnectionError):
        return SubagentOutcome(status="failed", error_code="provider_connection",
                               retryable=True)
    return SubagentOutcome(status="failed", error_code="subagent_error", retryable=False)


def _text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def outcome_of_value(value: Any) -> SubagentOutcome:
    """A returned value as an outcome: a `SubagentOutcome` as given, a string as a completed
    answer, a mapping with a known ``status`` (and ``answer``, ``error_code``,
    ``retryable``) as that outcome, anything else a ``subagent_error`` failure."""
    if isinstance(value, SubagentOutcome) and value.status in STATUSES:
        return value
    if isinstance(value, str):
        return SubagentOutcome(status="completed", answer=value)
    if isinstance(value, Mapping) and value.get("status") in STATUSES:
        # a runner that cannot import this package (the core's scripted runner)
        try:
            return SubagentOutcome(
                status=value["status"], answer=_text_or_none(value.get("answer")),
                error_code=_text_or_none(value.get("error_code")),
                retryable=value.get("retryable") if isinstance(value.get("retryable"), bool)
                else None)
        except (TypeError, ValueError):
            pass
    log.warning("a subagent runner returned %r, not a SubagentOutcome", type(value).__name__)
    return SubagentOutcome(status="failed", error_code="subagent_error", retryable=False)


class ChildRunner:
    """Runs a call's children concurrently (at most ``max_parallel`` at once)."""

    def __init__(self, runner: Any, session: Any, cancelled: threading.Event,
                 max_parallel: int) -> None:
        self._runner = runner
        self._session = session
        self._cancelled = cancelled
        self._limiter = anyio.CapacityLimiter(max_parallel)
        self._scopes: list[anyio.CancelScope] = []

    async def run_all(self, jobs: Sequence[Job]) -> list[SubagentOutcome]:
        outcomes: list[SubagentOutcome] = [CANCELLED] * len(jobs)
        try:
            async with anyio.create_task_group() as watcher:
                watcher.start_soon(self._watch)
                async with anyio.create_task_group() as children:
                    for i, job in enumerate(jobs):
                        children.start_soon(self._run_child, i, job, outcomes)
                watcher.cancel_scope.cancel()
        finally:
            for scope in self._scopes:
                scope.cancel()
        return outcomes

    async def _watch(self) -> None:
        while not self._cancelled.is_set():
            await anyio.sleep(POLL_SECONDS)
        for scope in self._scopes:
            scope.cancel()

    async def _run_child(self, i: int, job: Job, outcomes: list[SubagentOutcome]) -> None:
        with anyio.CancelScope() as scope:
            self._scopes.append(scope)
            if self._cancelled.is_set():
                scope.cancel()
            async with self._limiter:
                outcomes[i] = await self._call(job)
        if scope.cancelled_caught:
            outcomes[i] = CANCELLED

    async def _call(self, job: Job) -> SubagentOutcome:
        try:
            child = self._session.open_child(profile=job.profile)
        except ToolError as exc:  # no depth remains
            return SubagentOutcome(status="failed", answer=exc.message,
                                   error_code="max_depth", retryable=False)
        request = SubagentRequest(ref=job.record.ref, description=job.record.description,
                                  prompt=job.prompt, workspace=self._session.workspace.root,
                                  continuation=job.continuation, session=child,
                                  profile=job.profile, max_steps=job.max_steps)
        try:
            return outcome_of_value(await self._runner.run(request))
        except Exception as exc:
            log.debug("subagent %s raised", job.record.ref, exc_info=True)
            return outcome_of_error(exc)
        finally:
            with anyio.CancelScope(shield=True):
                await child.close()
