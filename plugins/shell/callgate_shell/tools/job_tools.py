"""``job_output`` and ``job_kill``, and the hidden compatibility aliases ``bash_output``,
``kill_shell`` and ``wait`` (shell.md §4). Shared by both shells."""

from __future__ import annotations

import re
import threading
import time
from typing import TYPE_CHECKING, Any

from callgate import ToolContext, ToolError, ToolResult, ToolSpec, Violation

from .._keys import JOBS

if TYPE_CHECKING:  # the jobs' machinery: imported by the session's first job
    from .._jobs import Job, JobTable

#: what other agents and plain words call these tools (an unknown call by one of
#: these names is answered "did you mean" the tool)
JOB_OUTPUT_KNOWN_AS = ("BashOutput", "shell_output", "read_output")
JOB_KILL_KNOWN_AS = ("KillShell", "KillBash", "kill", "kill_job")

DEFAULT_WAIT_MS = 30_000
MAX_WAIT_MS = 600_000
WAIT_SLICE_S = 0.1
PROGRESS_EVERY_S = 1.0

JOB_OUTPUT_DESCRIPTION = (
    "Read a background job's output: only what it printed since your last read of that job, "
    "under a status header ([id] running, done, failed or killed, with the exit code). Returns "
    "at once unless wait=true, which blocks until the job ends or timeout_ms passes (default "
    "30000): prefer one waiting read to polling a running job over and over. filter keeps only "
    "the new lines that match a Python regular expression. Without job_id, lists every job of "
    "this session with its status, exit code, runtime and unread bytes."
)
JOB_KILL_DESCRIPTION = (
    "Stop a running background job by its id. Returns immediately; the job's whole process "
    "tree is ended and the job settles as killed."
)
BASH_OUTPUT_DESCRIPTION = "Reads a background job's new output without waiting, like job_output."
KILL_SHELL_DESCRIPTION = "Stops a running background job, like job_kill."
WAIT_DESCRIPTION = (
    "Waits up to timeout_seconds for the given background jobs (or every running one) and "
    "shows each one's status and new output, like job_output(wait=true) per job."
)

_FILTER = {"type": "string", "description": "Keep only new lines matching this Python regular "
                                            "expression (re.search)."}
JOB_OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "job_id": {"type": "string", "description": "The job to read (bash-N / pwsh-N); omit "
                                                    "it to list every job."},
        "wait": {"type": "boolean", "default": False,
                 "description": "Block until the job ends or timeout_ms passes."},
        "timeout_ms": {"type": "integer", "minimum": 1, "maximum": MAX_WAIT_MS,
                       "default": DEFAULT_WAIT_MS,
                       "description": "How long wait=true may block, in milliseconds."},
        "filter": _FILTER,
    },
    "additionalProperties": False,
}
JOB_KILL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"job_id": {"type": "string", "description": "The job to stop."}},
    "required": ["job_id"],
    "additionalProperties": False,
}
BASH_OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"job_id": {"type": "string"}, "filter": _FILTER},
    "required": ["job_id"],
    "additionalProperties": False,
}
WAIT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "job_ids": {"type": "array", "items": {"type": "string"},
                    "description": "The jobs to wait for; omitted or empty: every running job."},
        "timeout_seconds": {"type": "integer", "minimum": 1, "maximum": 600, "default": 30},
    },
    "additionalProperties": False,
}


def valid_filter(ctx: ToolContext, args: dict[str, Any]) -> list[Violation]:
    pattern = args.get("filter")
    if pattern is None:
        return []
    try:
        re.compile(pattern)
    except re.error as exc:
        return [Violation("/filter", "regex", f"a valid Python regular expression ({exc})")]
    return []


def _table(ctx: ToolContext) -> JobTable:
    return ctx.session.extension(JOBS)


def _job(table: JobTable, job_id: str) -> Job:
    job = table.get(job_id)
    if job is None:
        raise ToolError("not_found", f'no background job "{job_id}" in this session; '
                        "job_output() with no job_id lists this session's jobs", "not_found")
    return job


def _wait(event: threading.Event, seconds: float, cancelled: threading.Event,
          ctx: ToolContext | None = None, what: str = "the job") -> bool:
    """Wait for ``event`` at most ``seconds``; gives up early when the call is cancelled.
    Reports progress (seconds waited of ``seconds``) about once a second."""
    deadline = time.monotonic() + seconds
    started = last = time.monotonic()
    while not event.is_set():
        now = time.monotonic()
        left = deadline - now
        if left <= 0 or cancelled.is_set():
            return False
        if ctx is not None and now - last >= PROGRESS_EVERY_S:
            last = now
            ctx.progress(round(now - started, 1), seconds,
                         f"waiting for {what}: {now - started:.0f} s")
        event.wait(min(left, WAIT_SLICE_S))
    return True


# --- job_output ------------------------------------------------------------------------------


def report(ctx: ToolContext, job: Job, *, wait: bool, timeout_ms: int,
           pattern: str | None) -> str:
    """One job's block: header, new output since the cursor (cursor moved), notes."""
    return _report(ctx, job, wait=wait, timeout_ms=timeout_ms, pattern=pattern)[0]


def _report(ctx: ToolContext, job: Job, *, wait: bool, timeout_ms: int,
            pattern: str | None) -> tuple[str, str]:
    """`report`'s text, and the new output it shows (filtered)."""
    waited_out = False
    if wait and not job.finished.is_set():
        waited_out = not _wait(job.finished, timeout_ms / 1000, ctx.cancelled, ctx,
                               f"job {job.id}")
    read = _table(ctx).read(job, ctx.config["max_capture_bytes"])
    notes = []
    body = read.text
    filtered_all = False
    if pattern is not None:
        lines = body.splitlines(keepends=True)
        rx = re.compile(pattern)
        kept = [line for line in lines if rx.search(line.rstrip("\r\n"))]
        body = "".join(kept)
        filtered_all = bool(lines) and not kept  # the note says so; "(no new output)" would lie
        notes.append(f"(filter kept {len(kept)} of {len(lines)} new lines)")
    if waited_out and not read.final:
        notes.append(f"(still running after waiting {timeout_ms} ms)")
    notes.extend(read.notes)
    parts = [read.header, *read.lines_before]
    if body:
        parts.append(body.removesuffix("\n"))
    elif not filtered_all:
        parts.append("(no new output)")
    return "\n".join([*parts, *notes]), body


def list_jobs(ctx: ToolContext, table: JobTable, *, wait: bool, timeout_ms: int) -> str:
    """List mode: every job of the session, id order; never moves a cursor."""
    if wait:
        deadline = time.monotonic() + timeout_ms / 1000
        for job in table.running():
            if not _wait(job.finished, max(0.0, deadline - time.monotonic()), ctx.cancelled):
                break
    jobs = table.jobs()
    if not jobs:
        return "No background jobs in this session."
    running = sum(1 for job in jobs if job.running)
    lines = [f"Background jobs in this session: {len(jobs)} ({running} running)"]
    for job in jobs:
        summary = job.summary()
        code = "-" if summary["exit_code"] is None else str(summary["exit_code"])
        lines.append("  ".join([job.id, summary["status"], f"exit={code}",
                                f"runtime={job.runtime():.1f}s",
                                f"unread={summary['unread_bytes']}B", job.label]))
    return "\n".join(lines)


def job_output(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    table = _table(ctx)
    wait = bool(args.get("wait", False))
    timeout_ms = int(args.get("timeout_ms", DEFAULT_WAIT_MS))
    job_id = args.get("job_id")
    if job_id is None:
        text = list_jobs(ctx, table, wait=wait, timeout_ms=timeout_ms)
        jobs = table.jobs()
        listed = []
        for j in jobs:
            summary = j.summary()
            listed.append({"job_id": j.id, "status": summary["status"],
                           "exit_code": summary["exit_code"],
                           "runtime_s": round(j.runtime(), 1),
                           "unread_bytes": summary["unread_bytes"], "label": j.label})
        return ToolResult.ok(text, {"jobs": len(jobs),
                                    "running": sum(1 for j in jobs if j.running),
                                    "structured_content": {"jobs": listed}})
    job = _job(table, job_id)
    text, output = _report(ctx, job, wait=wait, timeout_ms=timeout_ms,
                           pattern=args.get("filter"))
    return ToolResult.ok(text, {"job_id": job.id, "status": job.status,
                                "exit_code": job.exit_code, "structured_content": {
                                    "job_id": job.id, "status": job.status,
                                    "exit_code": job.exit_code, "output": output}})


# --- job_kill --------------------------------------------------------------------------------


def job_kill(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    job = _job(_table(ctx), args["job_id"])
    if job.request_stop("job_kill"):
        return ToolResult.ok(f"Kill requested for background job {job.id}; it will settle as "
                             "killed.", {"job_id": job.id, "status": "killed"})
    return ToolResult.ok(f"Background job {job.id} is not running (status: {job.status}); "
                         "nothing to kill.", {"job_id": job.id, "status": job.status})


# --- the aliases -------------------------------------------------------------------------------


def wait_for_jobs(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    """``wait``: ``job_output(wait=true)`` per target, under one shared deadline."""
    table = _table(ctx)
    wanted = list(dict.fromkeys(args.get("job_ids") or []))
    targets = wanted or [job.id for job in table.running()]
    if not targets:
        return ToolResult.ok("No background jobs to wait for.")
    found = {job_id: table.get(job_id) for job_id in targets}
    unknown = [job_id for job_id, job in found.items() if job is None]
    if unknown:  # as job_output, bash_output and kill_shell answer: not found, nothing waited
        names = ", ".join(f'"{job_id}"' for job_id in unknown)
        raise ToolError("not_found", f"no background job {names} in this session; "
                        "job_output() with no job_id lists this session's jobs", "not_found")
    deadline = time.monotonic() + int(args.get("timeout_seconds", 30))
    blocks = []
    for job in found.values():
        assert job is not None  # every unknown id was refused above
        left_ms = max(0, int((deadline - time.monotonic()) * 1000))
        blocks.append(report(ctx, job, wait=True, timeout_ms=left_ms, pattern=None))
    return ToolResult.ok("\n\n".join(blocks), {"job_ids": targets})


#: ``structuredContent`` (MCP) of ``job_output``: one job's state and new output, or (no
#: ``job_id``) every job of the session.
JOB_OUTPUT_OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "anyOf": [
        {"properties": {
            "job_id": {"type": "string"},
            "status": {"type": "string"},
            "exit_code": {"type": ["integer", "null"]},
            "output": {"type": "string",
                       "description": "What the job printed since the last read (filtered)."}},
         "required": ["job_id", "status", "exit_code", "output"]},
        {"properties": {"jobs": {"type": "array", "items": {
            "type": "object",
            "properties": {"job_id": {"type": "string"}, "status": {"type": "string"},
                           "exit_code": {"type": ["integer", "null"]},
                           "runtime_s": {"type": "number"},
                           "unread_bytes": {"type": "integer"},
                           "label": {"type": "string"}},
            "required": ["job_id", "status", "exit_code"]}}},
         "required": ["jobs"]},
    ],
}


def job_tools() -> list[ToolSpec]:
    """The two job tools and the three hidden aliases."""
    return [
        ToolSpec(name="job_output", description=JOB_OUTPUT_DESCRIPTION, schema=JOB_OUTPUT_SCHEMA,
                 known_as=JOB_OUTPUT_KNOWN_AS,
                 execute=job_output, read_only=True, visibility="surface", surface_order=20,
                 validate=valid_filter, output_schema=JOB_OUTPUT_OUTPUT_SCHEMA),
        ToolSpec(name="job_kill", description=JOB_KILL_DESCRIPTION, schema=JOB_KILL_SCHEMA,
                 known_as=JOB_KILL_KNOWN_AS,
                 execute=job_kill, read_only=False, visibility="surface", surface_order=30),
        ToolSpec(name="bash_output", description=BASH_OUTPUT_DESCRIPTION,
                 schema=BASH_OUTPUT_SCHEMA, read_only=True, visibility="alias",
                 alias_of="job_output", validate=valid_filter,
                 alias_args=lambda a: {**a, "wait": False}),
        ToolSpec(name="kill_shell", description=KILL_SHELL_DESCRIPTION, schema=JOB_KILL_SCHEMA,
                 read_only=False, visibility="alias", alias_of="job_kill",
                 alias_args=lambda a: {"job_id": a["job_id"]}),
        ToolSpec(name="wait", description=WAIT_DESCRIPTION, schema=WAIT_SCHEMA,
                 execute=wait_for_jobs, read_only=True, visibility="alias",
                 alias_of="job_output"),
    ]
