"""``run_skill`` and ``read_only_skill``: an inline skill rendered, a subagent skill run as a
child session through the integrator's runner (the tasks plugin's
``callgate_subagent_runner`` hook).

The child is opened with a `callgate.ChildProfile` the pipeline enforces on every
call: ``allowed-tools`` as its tool list, strict read-only when the skill says
``read-only: true`` and always for ``read_only_skill``, and ``[tasks] max_depth``.
The runner receives a request shaped like the tasks plugin's ``SubagentRequest``
(``ref``, ``description``, ``prompt``, ``workspace``, ``continuation``,
``session``, ``profile``, ``max_steps``) plus ``system_prompt`` (the skill's body)
and ``task`` (the arguments); ``prompt`` holds both for runners that read only it.
Records go to the tasks plugin's ``session.extension(SUBAGENTS)`` book, so
``read_subagent_result`` pages a long answer and ``continue_from`` retries one:
``run_skill`` only, and only a child ``run_skill`` started for the same skill, which
runs again with the profile it was started with (a ``read_only_skill`` child is never
continued, so it never runs without its strict profile).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import anyio
import attrs
from callgate import ChildProfile, SessionKey, ToolContext, ToolError, ToolResult
from callgate_toolkit.subagents import STATUSES, SubagentOutcome

from .._keys import SKILLS
from .._session import skill_error
from .read_skill import skill_name

log = logging.getLogger("callgate.skills")

#: the tasks plugin's subagent records, when it is loaded (a key of the same name)
SUBAGENTS: SessionKey[Any] = SessionKey("subagents")

SLACK = 512

@attrs.frozen(kw_only=True)
class SkillRequest:
    """One child run, as the integrator's runner receives it."""

    ref: str
    description: str
    prompt: str
    workspace: str
    continuation: Any = None
    session: Any = None
    profile: Any = None
    max_steps: int | None = None
    system_prompt: str = ""
    task: str = ""
    skill: str = ""


def _outcome(value: Any) -> SubagentOutcome:
    """A runner's answer as an outcome: a string (completed), a mapping (``callgate replay
    --subagents`` answers those) or an object with the outcome's fields."""
    if isinstance(value, str):
        return SubagentOutcome(status="completed", answer=value)
    if isinstance(value, Mapping):
        if value.get("status") in STATUSES:
            answer = value.get("answer")
            return SubagentOutcome(
                status=value["status"],
                answer=answer if isinstance(answer, str) else None,
                error_code=value.get("error_code"),
                retryable=value.get("retryable"),
                state=value.get("state"),
            )
        value = None
    status = getattr(value, "status", None)
    if status in STATUSES:
        return SubagentOutcome(
            status=status,
            answer=getattr(value, "answer", None),
            error_code=getattr(value, "error_code", None),
            retryable=getattr(value, "retryable", None),
            state=getattr(value, "state", None),
        )
    log.warning("a subagent runner returned %r, not an outcome", type(value).__name__)
    return SubagentOutcome(status="failed", error_code="subagent_error", retryable=False)


def _error_outcome(exc: Exception) -> SubagentOutcome:
    code = getattr(exc, "code", None)
    if isinstance(code, str):  # the tasks plugin's SubagentError
        return SubagentOutcome(
            status="failed", error_code=code, retryable=bool(getattr(exc, "retryable", False))
        )
    if isinstance(exc, TimeoutError):
        return SubagentOutcome(status="cancelled", error_code="cancelled", retryable=False)
    return SubagentOutcome(status="failed", error_code="subagent_error", retryable=False)


#: Claude Code's tool names, as ``allowed-tools`` often lists them, and callgate's
CLAUDE_NAMES = {
    "Read": "read_file",
    "Write": "write_file",
    "Edit": "edit_file",
    "MultiEdit": "edit_file",
    "Bash": "bash",
    "Grep": "grep",
    "Glob": "glob",
    "LS": "ls",
    "WebFetch": "web_fetch",
    "WebSearch": "web_search",
    "NotebookEdit": "notebook_edit",
    "TodoWrite": "todo_write",
    "Task": "task",
}


def child_tools(allowed: tuple[str, ...] | None) -> tuple[str, ...] | None:
    """``allowed-tools`` as callgate tool names: ``Bash(git diff:*)`` reads as ``bash`` (the
    command pattern is not a tool name; permission rules judge commands) and Claude Code's
    names map to callgate's."""
    if allowed is None:
        return None
    names = []
    for entry in allowed:
        base = entry.split("(", 1)[0].strip()
        names.append(CLAUDE_NAMES.get(base, base))
    return tuple(dict.fromkeys(n for n in names if n))


def runner_of(session: Any) -> Any:
    caller = getattr(session.host.pm.hook, "callgate_subagent_runner", None)
    if caller is None:
        return None
    found = caller(session=session)
    if isinstance(found, list):  # no firstresult spec registered (no tasks plugin)
        found = next((r for r in found if r is not None), None)
    return found


def _book(session: Any) -> Any:
    return session.find_extension(SUBAGENTS)


async def _run_child(
    ctx: ToolContext, runner: Any, request: SkillRequest, profile: ChildProfile
) -> SubagentOutcome:
    child = ctx.session.open_child(profile=profile)
    request = attrs.evolve(request, session=child)
    outcome = SubagentOutcome(status="cancelled", error_code="cancelled", retryable=False)
    try:
        async with anyio.create_task_group() as tg:

            async def run() -> None:
                nonlocal outcome
                try:
                    outcome = _outcome(await runner.run(request))
                except Exception as exc:
                    log.debug("skill subagent %s raised", request.ref, exc_info=True)
                    outcome = _error_outcome(exc)
                tg.cancel_scope.cancel()

            async def watch() -> None:
                while not ctx.cancelled.is_set():
                    await anyio.sleep(0.05)
                tg.cancel_scope.cancel()

            tg.start_soon(run)
            tg.start_soon(watch)
    finally:
        with anyio.CancelScope(shield=True):
            await child.close()
    return outcome


def _cut(answer: str, limit: int, ref: str) -> str:
    if len(answer) <= limit:
        return answer
    mark = f'\n…[preview truncated; read the full result with read_subagent_result(ref="{ref}")]…\n'
    room = max(0, limit - len(mark))
    return answer[: room - room // 2] + mark + answer[len(answer) - room // 2 :]


def _result(record: Any, max_chars: int) -> ToolResult:
    text = (
        f"Subagent reference: {record.ref}\nSubagent outcome: status={record.status} "
        f"retryable={'true' if record.retryable else 'false'}"
    )
    if record.error_code:
        text += f" error_code={record.error_code}"
    if record.answer:
        text += (
            "\n\nFinal answer:\n" if record.status == "completed" else "\n\nLast visible answer:\n"
        )
        text += _cut(record.answer, max(0, max_chars - SLACK - len(text)), record.ref)
    meta = {
        "subagents": [
            {
                "ref": record.ref,
                "status": record.status,
                "retryable": record.retryable,
                "error_code": record.error_code,
            }
        ]
    }
    if record.status == "cancelled":
        return ToolResult.failure("cancelled", text, "cancelled", meta)
    if record.status == "failed":
        return ToolResult.failure("tool_error", text, record.error_code or "subagent_failed", meta)
    return ToolResult.ok(text, meta)


async def run_subagent(
    ctx: ToolContext,
    skill: Any,
    arguments: str,
    *,
    read_only: bool,
    tool: str,
    continue_from: str | None = None,
) -> ToolResult:
    """Run ``skill`` as a child for ``tool`` (``run_skill`` or ``read_only_skill``: the
    record names it, and only it continues the child); its answer (or failure) as the
    tool's result."""
    runner = runner_of(ctx.session)
    book = _book(ctx.session)
    if runner is None or book is None:
        raise skill_error(
            "NO_RUNNER",
            f"{skill.name} is a subagent skill, and this session "
            "has no subagent runner (the integrator's callgate_subagent_runner "
            "hook, with the tasks plugin); nothing was run",
            "unavailable",
        )
    if not arguments.strip():
        raise skill_error(
            "ARGUMENTS_REQUIRED",
            f"{skill.name} is a subagent skill: arguments "
            "are the child's whole task, so they are required",
            "invalid_arguments",
        )
    depth = ctx.session.host.plugin_config_value("tasks", "max_depth", 3)
    profile = ChildProfile(
        name=f"skill-{skill.name}",
        tools=child_tools(skill.allowed_tools),
        read_only=read_only,
        max_depth=depth,
    )
    body = ctx.session.extension(SKILLS).render(skill, "")
    prompt = f"{body}\n\n# Task\n{arguments}"
    description = f"skill {skill.name}: {arguments.strip().splitlines()[0][:80]}"
    continuation = None
    if continue_from:
        continuation = book.continuable(continue_from, tool=tool)
        started = book.profile_of(continuation)
        if started is None or started.name != profile.name:
            raise skill_error(
                "WRONG_SKILL",
                f"{continue_from} was started for another skill "
                f"({started.name if started else 'unknown'}); continue it with that skill",
                "invalid_arguments",
            )
        profile = started
        record = book.restart(continuation, description)
    else:
        record = book.start(description, tool=tool, profile=profile)
    request = SkillRequest(
        ref=record.ref,
        description=description,
        prompt=prompt,
        workspace=ctx.workspace.root,
        continuation=continuation,
        profile=profile,
        system_prompt=body,
        task=arguments,
        skill=skill.name,
    )
    try:
        outcome = await _run_child(ctx, runner, request, profile)
    except ToolError as exc:  # no depth remains: the child never opened
        outcome = SubagentOutcome(status="failed", error_code="max_depth", retryable=False)
        log.debug("skill %s could not open a child: %s", skill.name, exc.message)
    record = book.finish(record, outcome)
    return _result(record, ctx.session.max_chars)


async def run_run_skill(ctx: ToolContext, args: dict[str, Any]) -> Any:
    skill = ctx.session.extension(SKILLS).find(skill_name(args["name"]))
    arguments = args.get("arguments", "") or ""
    if not skill.is_subagent:
        if "continue_from" in args:
            raise skill_error(
                "NOT_SUBAGENT",
                f"{skill.name} is an inline skill; continue_from applies to subagent runs",
                "invalid_arguments",
            )
        return ctx.session.extension(SKILLS).render(skill, arguments)
    return await run_subagent(
        ctx, skill, arguments, read_only=skill.read_only, tool="run_skill",
        continue_from=args.get("continue_from"),
    )


async def run_read_only_skill(ctx: ToolContext, args: dict[str, Any]) -> Any:
    skill = ctx.session.extension(SKILLS).find(skill_name(args["name"]))
    arguments = args.get("arguments", "") or ""
    if not skill.is_subagent:
        return ctx.session.extension(SKILLS).render(skill, arguments)
    return await run_subagent(ctx, skill, arguments, read_only=True, tool="read_only_skill")
