"""The subagent tools: ``task``, ``parallel_tasks`` and ``read_subagent_result``.

A child gets a stable ``Subagent reference`` before it runs; its whole answer
is kept in its record, and the tool result shows a preview that fits the
output budget, so long answers are paged with ``read_subagent_result``
instead of flooding the parent's context.
"""

from __future__ import annotations

from typing import Any

import attrs
from callgate import ChildProfile, ToolContext, ToolError, ToolResult

from .. import _text
from .._book import subagent_error
from .._keys import SUBAGENTS
from .._model import SubagentRecord
from .._run import ChildRunner, Job


def runner_for(session: Any) -> Any:
    """The subagent runner for ``session`` (the ``callgate_subagent_runner`` hook: the
    integrator's, or the scripted one of ``callgate replay --subagents``), or ``None``."""
    return session.host.pm.hook.callgate_subagent_runner(session=session)


def _runner(ctx: ToolContext) -> Any:
    runner = runner_for(ctx.session)
    if runner is None:
        raise ToolError("unavailable", f"{ctx.tool.name}: the integrator no longer provides a "
                        "subagent runner for this session", f"unavailable:{ctx.tool.name}")
    return runner


def available(session: Any) -> bool:
    """The task tools exist only where the integrator provides a runner."""
    return runner_for(session) is not None


def depth_profile(session: Any, profile: ChildProfile | None = None,
                  name: str = "task") -> ChildProfile:
    """``profile`` (else an unrestricted one named ``name``) with ``[tasks] max_depth``
    when it sets no depth of its own: every child the tasks plugin opens carries it."""
    depth = session.host.plugin_config_value("tasks", "max_depth", 3)
    if profile is None:
        return ChildProfile(name=name, max_depth=depth)
    return profile if profile.max_depth is not None else attrs.evolve(profile, max_depth=depth)


def nesting_available(session: Any) -> bool:
    """A tool that opens children exists only with a runner and while depth remains."""
    return available(session) and session.depth < depth_profile(session).max_depth \
        and session.can_open_child


def children(ctx: ToolContext, runner: Any, max_parallel: int | None = None) -> ChildRunner:
    """A `ChildRunner` for this call's children (``[tasks] max_parallel`` at once unless
    ``max_parallel`` says otherwise; cancelled with the call)."""
    limit = max_parallel or ctx.session.host.plugin_config_value("tasks", "max_parallel", 4)
    return ChildRunner(runner, ctx.session, ctx.cancelled, limit)


_children = children


def _meta(records: list[SubagentRecord]) -> dict[str, Any]:
    return {"subagents": [{"ref": r.ref, "status": r.status, "retryable": r.retryable,
                           "error_code": r.error_code} for r in records]}


async def run_task(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    runner = _runner(ctx)
    book = ctx.session.extension(SUBAGENTS)
    continuation = None
    profile = depth_profile(ctx.session)
    if "continue_from" in args:
        continuation = book.continuable(args["continue_from"], tool="task")
        profile = book.profile_of(continuation) or profile
        record = book.restart(continuation, args["description"])
    else:
        record = book.start(args["description"], tool="task", profile=profile)
    [outcome] = await _children(ctx, runner).run_all(
        [Job(record, args["prompt"], continuation, profile)])
    record = book.finish(record, outcome)
    text = _text.one_child(record, ctx.session.max_chars)
    meta = _meta([record])
    if record.status == "cancelled":
        return ToolResult.failure("cancelled", text, "cancelled", meta)
    if record.status == "failed":
        return ToolResult.failure("tool_error", text, record.error_code or "subagent_failed",
                                  meta)
    return ToolResult.ok(text, meta)


async def run_parallel(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    runner = _runner(ctx)
    book = ctx.session.extension(SUBAGENTS)
    profile = depth_profile(ctx.session)
    # task children run side by side: task continues them (same tool family, same profile)
    jobs = [Job(book.start(t["description"], tool="task", profile=profile), t["prompt"],
                profile=profile) for t in args["tasks"]]
    outcomes = await _children(ctx, runner).run_all(jobs)
    records = [book.finish(job.record, o) for job, o in zip(jobs, outcomes, strict=True)]
    text = _text.many_children(records, ctx.session.max_chars)
    meta = _meta(records)
    statuses = {r.status for r in records}
    if statuses <= {"failed", "cancelled"}:
        kind = "cancelled" if statuses == {"cancelled"} else "tool_error"
        return ToolResult.failure(kind, text, "SUBAGENTS_ALL_FAILED" if kind == "tool_error"
                                  else "cancelled", meta)
    return ToolResult.ok(text, meta)


def run_read(ctx: ToolContext, args: dict[str, Any]) -> str:
    record = ctx.session.extension(SUBAGENTS).readable(args["ref"])
    assert record.answer is not None
    data = record.answer.encode("utf-8", "surrogatepass")
    offset = args.get("offset_bytes", 0)
    if offset > len(data):
        raise subagent_error("OFFSET_OUT_OF_RANGE", f"offset_bytes {offset} is past the end of "
                             f"{record.ref} ({len(data)} bytes)")
    limit = min(args.get("limit_bytes", 12288),
                _text.budget(ctx.session.max_chars) - _text.PAGE_SLACK)
    start, end = _text.page_bounds(data, offset, max(1, limit))
    if end <= start < len(data):
        raise subagent_error("LIMIT_TOO_SMALL", f"limit_bytes {limit} is too small for the "
                             f"character at byte {start}; raise limit_bytes")
    return _text.page(record, start, end, data)
