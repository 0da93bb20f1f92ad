"""What ``bash`` and ``pwsh`` share (shell.md §2-§3): the schema, the blank-command check,
the launch through the core's door (`callgate.process`: sandbox, environment, lifetime),
a foreground run with its status line, and a background start.

A `Shell` says how one shell turns a command into argv; everything else is common.
"""

from __future__ import annotations

import functools
import logging
import signal
import time
from collections.abc import Callable
from typing import Any

import attrs
from callgate import ToolContext, ToolError, ToolResult, Violation, process
from callgate.results import ErrorInfo, TextBlock

from .._capture import Capture
from .._env import command_environment
from .._exemption import keeps_background_processes
from .._jobs import PIPE_NOTE, Job, JobTable, job_label, os_error_text
from .._keys import JOBS
from .._process import start_group
from .schema import DEFAULT_TIMEOUT_MS

log = logging.getLogger("callgate.shell")

CANCEL_POLL_S = 0.1
#: how often a running command reports its progress (`ProgressTicker`)
PROGRESS_EVERY_S = 1.0


@attrs.frozen
class Shell:
    """One shell as a tool: its name (also the job-id prefix), program and argv builder."""

    name: str
    executable: str
    argv: Callable[[str], list[str]]
    reaping_exemption: bool = False


def blank_command(ctx: ToolContext, args: dict[str, Any]) -> list[Violation]:
    if not args["command"].strip():
        return [Violation("/command", "not_blank",
                          "a command with something to run: command must not be blank")]
    if "\x00" in args["command"]:  # no argv can carry it: the launch itself would fail
        return [Violation("/command", "no_nul",
                          "a command without NUL characters: a command line cannot hold one")]
    return []


# --- launching ------------------------------------------------------------------------------


def prepare_launch(ctx: ToolContext, shell: Shell, command: str) -> process.Prepared:
    """The command through the door: confined by the session's sandbox (the workspace
    writable), the host's environment without secrets, tied to the session's lifetime.
    Raises `OSError` when the shell cannot be found, `ToolError` when the sandbox refuses."""
    return process.prepare(ctx.session, shell.argv(command), workspace="write", network=True,
                           env=command_environment(ctx.config), cwd=ctx.workspace.root,
                           purpose=shell.name, call=ctx.call)


def reaps_leftovers(shell: Shell, command: str) -> bool:
    return not (shell.reaping_exemption and keeps_background_processes(command))


def could_not_start(shell: Shell, exc: OSError, meta: dict[str, Any] | None = None
                    ) -> ToolResult:
    message = f"could not start {shell.name}: {os_error_text(exc)}"
    return ToolResult.failure("tool_error", message, f"start_failed:{shell.name}", meta)


# --- foreground -----------------------------------------------------------------------------


def run_foreground(ctx: ToolContext, shell: Shell, args: dict[str, Any]) -> ToolResult:
    command = args["command"]
    timeout_ms = args.get("timeout_ms", DEFAULT_TIMEOUT_MS)
    try:
        launch = prepare_launch(ctx, shell, command)
    except OSError as exc:
        return could_not_start(shell, exc)
    capture = Capture(ctx.config["max_capture_bytes"])
    ticker = ProgressTicker(ctx, timeout_ms / 1000)

    def sink(data: bytes) -> None:
        ticker.lines += data.count(b"\n")
        capture.add(data)

    def stop() -> str | None:
        ticker.tick()
        return "cancelled" if ctx.cancelled.is_set() else None

    try:
        group = start_group(launch, sink, reap_leftovers=reaps_leftovers(shell, command))
    except OSError as exc:
        return could_not_start(shell, exc)
    outcome = group.run(deadline=time.monotonic() + timeout_ms / 1000, deadline_reason="timeout",
                        stop=stop, poll=CANCEL_POLL_S)
    output = capture.text()
    notes = [PIPE_NOTE] if outcome.pipe_held else []
    if launch.note is not None:
        try:
            line = launch.note(output, outcome.exit_code)
        except Exception:
            log.exception("the command wrapper's note failed")
            line = None
        if line:
            notes.append(f"[note: {line}]")
    meta = {"exit_code": outcome.exit_code, "signal": outcome.signal,
            "timed_out": outcome.ended_by == "timeout",
            "cancelled": outcome.ended_by == "cancelled", "duration_ms": outcome.duration_ms,
            "pid": group.pid, "output_bytes": capture.total}
    if capture.dropped:
        meta["capture_dropped_bytes"] = capture.dropped
    error: ErrorInfo | None
    if outcome.ended_by == "timeout":
        status = (f"[timed out after {timeout_ms} ms; process group killed; output above is "
                  "partial]")
        error = ErrorInfo("timeout", "timeout", f"timed out after {timeout_ms} ms")
    elif outcome.ended_by == "cancelled":
        status = "[cancelled; process group killed; output above is partial]"
        error = ErrorInfo("cancelled", "cancelled", "cancelled; the process group was killed")
    elif outcome.signal is not None:
        status = f"[terminated by signal {outcome.signal} ({signal_name(outcome.signal)})]"
        error = ErrorInfo("tool_error", f"signal:{outcome.signal}",
                          f"terminated by signal {outcome.signal}")
    else:
        status = f"[exit code {outcome.exit_code}]"
        error = None if outcome.exit_code == 0 else ErrorInfo(
            "tool_error", f"exit:{outcome.exit_code}", f"exit code {outcome.exit_code}")
    text = format_output(output, notes, status)
    return ToolResult(content=[TextBlock(text)], is_error=error is not None, error=error,
                      meta=meta)


class ProgressTicker:
    """``ctx.progress`` at most every `PROGRESS_EVERY_S`: seconds elapsed of the timeout,
    with the output lines so far (an MCP client shows a long command is alive)."""

    def __init__(self, ctx: ToolContext, total_s: float | None) -> None:
        self.ctx, self.total_s = ctx, total_s
        self.started = self._last = time.monotonic()
        self.lines = 0

    def tick(self) -> None:
        now = time.monotonic()
        if now - self._last < PROGRESS_EVERY_S:
            return
        self._last = now
        elapsed = now - self.started
        self.ctx.progress(round(elapsed, 1), self.total_s,
                          f"{elapsed:.0f} s elapsed, {self.lines} output lines")


def format_output(output: str, notes: list[str], status: str) -> str:
    """Output (or ``(no output)``) ending in a newline, note lines, then the status line."""
    body = output or "(no output)"
    if not body.endswith("\n"):
        body += "\n"
    return body + "".join(f"{note}\n" for note in notes) + status


def signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"SIG{number}"


# --- background -------------------------------------------------------------------------------


def start_background(ctx: ToolContext, shell: Shell, args: dict[str, Any]) -> ToolResult:
    config = ctx.config
    if not config["background_jobs"]:
        raise ToolError("tool_error", "background jobs are not available in this context; run "
                        "the command in the foreground", "background_jobs_disabled")
    command = args["command"]
    table: JobTable = ctx.session.extension(JOBS)
    job = table.reserve(shell.name, job_label(args.get("description"), command), command,
                        config["max_running_jobs"], ctx.call.id)
    if not isinstance(job, Job):
        raise ToolError("tool_error", job, "too_many_jobs")
    meta = {"job_id": job.id}
    try:
        launch = prepare_launch(ctx, shell, command)
        table.launch(job, launch, reap_leftovers=reaps_leftovers(shell, command),
                     lifetime_ms=config["job_max_lifetime_ms"])
    except OSError as exc:
        if job.running:  # the door could not find the shell: the job never started
            job.fail_to_start(os_error_text(exc))
        return could_not_start(shell, exc, meta)
    except BaseException as exc:  # the sandbox refused it: the job never started
        if job.running:
            job.fail_to_start(str(exc))
        raise
    meta["pid"] = job.pid
    return ToolResult.ok(
        f"Started background job {job.id}: {job.label}\n"
        f'Read new output with job_output(job_id="{job.id}"); stop it with '
        f'job_kill(job_id="{job.id}"). job_output() with no job_id lists all jobs.', meta)


@functools.lru_cache(maxsize=8)
def shell_of(kind: str, executable: str) -> Shell:
    """The `Shell` a ``bash`` or ``pwsh`` tool runs ``executable`` as."""
    if kind == "bash":
        from .bash import bash_argv

        return Shell("bash", executable, lambda command: bash_argv(executable, command),
                     reaping_exemption=True)
    from .pwsh import pwsh_argv

    return Shell("pwsh", executable, lambda command: pwsh_argv(executable, command))


def run_shell(kind: str, executable: str, ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    """A shell tool's code (its spec binds ``kind`` and the program found at boot: see
    `callgate.deferred`): a foreground command, or a background job started."""
    shell = shell_of(kind, executable)
    if args.get("run_in_background"):
        return start_background(ctx, shell, args)
    return run_foreground(ctx, shell, args)
