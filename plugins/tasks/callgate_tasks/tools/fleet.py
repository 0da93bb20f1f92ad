"""``fleet``: up to 64 subagents with write claims and dependencies, and ``fleet_output``.

Why here and not in a package of its own: a fleet's children are the tasks plugin's
children (the same runner hook, records, ``Subagent reference``s, previews and
``read_subagent_result`` pages), and its limits belong in the same ``[tasks]`` table.

The preflight (`_fleet_plan`) refuses bad graphs and overlapping write claims as
``invalid_arguments`` before any child starts; the scheduler (`_fleet_run`) runs the
rest; `_fleet_text` fits the combined result into the output budget.

Background fleets (``run_in_background``) run on a thread of their own (with its own
event loop) and are kept in this session's `FleetBook`; the call answers a job id at
once, read with ``fleet_output``. They are not shell jobs: ``callgate_shell``'s job
table has no public way to hold a job that is not a process, so ``job_output`` does
not list them. Closing the session cancels them.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

import anyio
import attrs
from callgate import ChildProfile, ToolContext, ToolError, ToolResult

from .. import _fleet_plan, _fleet_text
from .._changes import change_set
from .._fleet_plan import Item
from .._fleet_run import FleetRun, Slot
from .._keys import FLEETS
from .builtin import PROMPTS, READS_CHANGES
from .specs import PROFILES
from .task import (
    _runner,
    depth_profile,
)

log = logging.getLogger("callgate.tasks")

CLOSE_TIMEOUT_S = 10.0
WAIT_SLICE_S = 0.05

# --- children --------------------------------------------------------------------------------


def profile_of(session: Any, item: Item) -> ChildProfile:
    """The child profile of one item: a built-in ``profile``'s own, else a reader
    (``read_only``) is a strict read-only child, ``tools`` its allowlist; either way with
    ``[tasks] max_depth``. The pipeline enforces it on every call; a child that cannot open
    (no depth remains) is that item's failure (``max_depth``)."""
    if item.profile:
        return depth_profile(session, PROFILES[item.profile])
    return depth_profile(
        session, ChildProfile(name=f"fleet:{item.id}", tools=item.tools, read_only=item.read_only)
    )


async def with_profile_prompts(session: Any, items: list[Item]) -> list[Item]:
    """Items with a built-in profile get its instructions before their prompt, and the
    review profiles the change set (read once per fleet)."""
    changes: str | None = None
    if any(it.profile in READS_CHANGES for it in items):
        changes = (
            await anyio.to_thread.run_sync(change_set, session)
            or "(not a git work tree: find the changes to review yourself)"
        )
    out = []
    for it in items:
        if it.profile:
            prompt = f"{PROMPTS[it.profile]}\n\nTask:\n{it.prompt}"
            if it.profile in READS_CHANGES:
                prompt += f"\n\nChange set:\n{changes}"
            it = attrs.evolve(it, prompt=prompt)
        out.append(it)
    return out


# --- background fleets -----------------------------------------------------------------------


@attrs.define(eq=False)
class FleetJob:
    """One background fleet: its thread, progress and, once done, its text."""

    id: str
    size: int
    started: float = attrs.field(factory=time.monotonic)
    stop: threading.Event = attrs.field(factory=threading.Event)
    done: threading.Event = attrs.field(factory=threading.Event)
    run: FleetRun | None = None
    result: ToolResult | None = None
    thread: threading.Thread | None = None


class FleetBook:
    """The background fleets of one session (``session.extension(FLEETS)``)."""

    def __init__(self, session: Any) -> None:
        self._session = session
        self._lock = threading.Lock()
        self._jobs: dict[str, FleetJob] = {}
        self._count = 0

    def start(self, make_run: Any, finish: Any, size: int) -> FleetJob:
        with self._lock:
            self._count += 1
            job = FleetJob(f"fleet-{self._count}", size)
            self._jobs[job.id] = job

        def main() -> None:
            try:
                job.run = make_run(lambda: job.stop.is_set() or self._session.closed)
                anyio.run(job.run.run)
                job.result = finish(job.run)
            except Exception as exc:
                log.exception("background fleet %s failed", job.id)
                job.result = ToolResult.failure(
                    "tool_error", f"fleet {job.id} failed: {exc}", "FLEET_FAILED"
                )
            finally:
                job.done.set()

        job.thread = threading.Thread(target=main, name=f"callgate {job.id}", daemon=True)
        job.thread.start()
        return job

    def get(self, job_id: str) -> FleetJob:
        with self._lock:
            job = self._jobs.get(job_id)
        if job is None:
            raise ToolError(
                "not_found", f"no background fleet {job_id!r} in this session", "FLEET_NOT_FOUND"
            )
        return job

    def close(self) -> None:
        """Cancel every running fleet and wait (a bounded time) for its children to end."""
        with self._lock:
            jobs = list(self._jobs.values())
        for job in jobs:
            job.stop.set()
        deadline = time.monotonic() + CLOSE_TIMEOUT_S
        for job in jobs:
            if job.thread is not None:
                job.thread.join(max(0.0, deadline - time.monotonic()))


# --- the tools -------------------------------------------------------------------------------


def validate(ctx: ToolContext, args: dict[str, Any]) -> list[Any]:
    return _fleet_plan.plan(args.get("tasks", []), ctx.session.workspace)[1]


def _meta(slots: list[Slot], stopped: str | None) -> dict[str, Any]:
    return {
        "fleet": {
            "stopped": stopped,
            "tasks": [
                {
                    "id": s.item.id,
                    "status": s.status,
                    "reason": s.reason,
                    "ref": s.record.ref if s.record else None,
                }
                for s in slots
            ],
        },
        "subagents": [
            {
                "ref": s.record.ref,
                "status": s.record.status,
                "retryable": s.record.retryable,
                "error_code": s.record.error_code,
            }
            for s in slots
            if s.record is not None
        ],
    }


def _result(run: FleetRun, max_chars: int) -> ToolResult:
    text = _fleet_text.fleet_text(run.slots, run.stopped, max_chars)
    meta = _meta(run.slots, run.stopped)
    if all(s.status in ("failed", "cancelled", "skipped") for s in run.slots):
        if all(s.status in ("cancelled", "skipped") for s in run.slots):
            return ToolResult.failure("cancelled", text, "cancelled", meta)
        return ToolResult.failure("tool_error", text, "FLEET_ALL_FAILED", meta)
    return ToolResult.ok(text, meta)


async def run_fleet(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    items, problems = _fleet_plan.plan(args["tasks"], ctx.session.workspace)
    assert not problems  # validate refused them before the call ran
    runner = _runner(ctx)
    items = await with_profile_prompts(ctx.session, items)
    session = ctx.session
    max_chars = session.max_chars
    cfg = ctx.config

    def make_run(cancelled: Any) -> FleetRun:
        return FleetRun(
            runner,
            session,
            items,
            max_parallel=cfg.get("fleet_max_parallel", 16),
            max_writers=cfg.get("fleet_max_writers", 4),
            fail_fast=bool(args.get("fail_fast", False)),
            cancelled=cancelled,
            profile_of=lambda item: profile_of(session, item),
        )

    if args.get("run_in_background", False):
        job = session.extension(FLEETS).start(make_run, lambda run: _result(run, max_chars),
                                              len(items))
        return ToolResult.ok(
            f"Started background fleet {job.id} of {len(items)} tasks. Read its progress and "
            f'result with fleet_output(job_id="{job.id}"), wait=true to wait for it.',
            {"job_id": job.id, "tasks": [it.id for it in items]},
        )
    run = make_run(ctx.cancelled.is_set)
    await run.run()
    return _result(run, max_chars)


def _progress(job: FleetJob) -> str:
    run = job.run
    finished = run.finished if run is not None else 0
    running = [s.item.id for s in run.slots if s.status == "running"] if run else []
    text = (
        f"Fleet {job.id} running for {time.monotonic() - job.started:.1f}s: {finished} of "
        f"{job.size} tasks finished"
    )
    if running:
        text += f"; running: {', '.join(running[:16])}" + (" …" if len(running) > 16 else "")
    return text + f'.\nCall fleet_output(job_id="{job.id}", wait=true) to wait for the result.'


def run_output(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    job = ctx.session.extension(FLEETS).get(args["job_id"])
    if args.get("wait", False):
        deadline = time.monotonic() + args.get("timeout_ms", 30000) / 1000
        while not job.done.is_set() and not ctx.cancelled.is_set():
            left = deadline - time.monotonic()
            if left <= 0:
                break
            job.done.wait(min(left, WAIT_SLICE_S))
    if not job.done.is_set():
        return ToolResult.ok(_progress(job), {"job_id": job.id, "status": "running"})
    assert job.result is not None
    result = job.result
    return attrs.evolve(result, meta={**result.meta, "job_id": job.id, "status": "finished"})
