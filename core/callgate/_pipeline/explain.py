"""`explain`: every stage's verdict for one call, the tool never run (`callgate.rules`).

The same stages as `_pipeline.pipeline` decide, on the same `SessionState`: resolve,
validation (the target and the child's profile included), the pre-tool-use hooks (asked as
in a real call: a hook that runs a program runs it), permission (every hook and rule heard,
then the fallback), the host gates (checked without holding anything) and the tool, which
is never run. The approver is never asked.
"""

from __future__ import annotations

import inspect
import json
from typing import TYPE_CHECKING, Any

import anyio
import attrs

from .._files.gate import check_paths
from .._model.errors import ToolError
from .._model.values import Refuse, Replace, ToolCall, ToolResult
from . import profiles as _profiles
from .pipeline import (
    RULES,
    _signature,
    decoded,
    permission,
    profile,
    resolve,
    target,
    valid_arguments,
    validate,
)
from .step import Answered, Step

if TYPE_CHECKING:
    from .state import SessionState

#: the stages `explain` reports, in order
STAGES = ("resolve", "validation", "pre-tool-use", "permission", "host gates", "tool")


@attrs.frozen
class StageVerdict:
    """One stage of `explain`: its ``stage`` name, its ``verdict`` (``passed``, ``stopped``,
    ``allow``/``ask``/``deny`` for permission, ``skipped``, ``not reached``, ``not run``),
    what it saw (``detail``), who decided (``by``: a rule, a plugin, the mode) and each
    answer heard (``answers``: ``(who, what)``)."""

    stage: str
    verdict: str
    detail: str = ""
    by: str | None = None
    answers: tuple[tuple[str, str], ...] = ()


@attrs.frozen
class Explanation:
    """`explain`'s answer: the ``decision`` the pipeline would reach before the tool runs
    (``allow``: it would run, ``ask``: the approver would be asked, ``deny``: it would be
    refused: invalid, blocked by a hook, denied), who decided (``decided_by``), the
    ``message`` the model would read when it is refused, the ``arguments`` it would run
    with (after any replacement) and every stage."""

    tool: str | None
    decision: str
    decided_by: str | None
    message: str | None
    arguments: Any
    stages: tuple[StageVerdict, ...]


def _not_reached(after: str) -> list[StageVerdict]:
    return [StageVerdict(name, "not reached") for name in STAGES[STAGES.index(after) + 1 :]]


async def explain(state: SessionState, call: ToolCall) -> Explanation:
    """Every stage's verdict for ``call`` as the pipeline would decide it in the session of
    ``state``, without running the tool."""
    step = Step(call, decoded(call))
    stages: list[StageVerdict] = []

    def refused(stage: str, result: ToolResult) -> Explanation:
        error = result.error
        signature = error.signature if error is not None else None
        stages.append(StageVerdict(stage, "stopped", result.text, signature))
        stages.extend(_not_reached(stage))
        name = step.tool.name if step.tool else None
        return Explanation(name, "deny", signature, result.text, step.call.arguments, tuple(stages))

    try:
        resolve(state, step)
    except Answered as answered:
        return refused("resolve", answered.result)
    assert step.tool is not None
    stages.append(StageVerdict("resolve", "passed", f"tool {step.tool.name}"))
    try:
        validate(state, step)
        news = target(state, step)
        if not isinstance(news, tuple):
            await news
        profile(state, step)
    except Answered as answered:
        return refused("validation", answered.result)
    except ToolError as exc:
        return refused("validation", exc.to_result())
    effective = step.tool
    assert effective is not None
    detail = f"valid for {effective.name}" + (
        f" (reached through {step.sent.name})" if effective.name != step.sent.name else ""
    )
    stages.append(StageVerdict("validation", "passed", detail))
    heard: list[tuple[str, str]] = []
    answers = state.host.hooks.pre_tool_use(step.call, effective, state.view)
    try:
        for index, answer in enumerate(answers):
            if inspect.isawaitable(answer):
                answers[index] = None  # awaited here (it is not closed below)
                answer = await answer
            if isinstance(answer, Refuse):
                by = f"hook:{answer.source}"
                heard.append((by, f"refuse: {answer.reason}"))
                stages.append(
                    StageVerdict(
                        "pre-tool-use", "stopped", f"blocked: {answer.reason}", by, tuple(heard)
                    )
                )
                stages.extend(_not_reached("pre-tool-use"))
                return Explanation(
                    effective.name,
                    "deny",
                    by,
                    f"blocked: {answer.reason}",
                    step.call.arguments,
                    tuple(stages),
                )
            if isinstance(answer, Replace):
                heard.append(
                    (
                        f"hook:{answer.source}",
                        "replace: " + json.dumps(answer.arguments, default=str),
                    )
                )
                step.call = attrs.evolve(
                    step.call,
                    arguments=valid_arguments(
                        state,
                        effective,
                        answer.arguments,
                        step.call.id,
                        inside=step.inside,
                        via=step.call.via,
                    ),
                )
    except Answered as answered:
        stages.append(
            StageVerdict("pre-tool-use", "stopped", answered.result.text, None, tuple(heard))
        )
        stages.extend(_not_reached("pre-tool-use"))
        return Explanation(
            effective.name,
            "deny",
            None,
            answered.result.text,
            step.call.arguments,
            tuple(stages),
        )
    finally:
        for answer in answers:
            close = getattr(answer, "close", None)
            if inspect.isawaitable(answer) and close is not None:
                close()  # an answer never awaited (an earlier one decided)
    replaced = any(what.startswith("replace") for _who, what in heard)
    stages.append(
        StageVerdict(
            "pre-tool-use", "passed", "arguments replaced" if replaced else "", answers=tuple(heard)
        )
    )
    verdict = _permission(state, step)
    stages.append(verdict)
    if verdict.verdict == "deny":
        message = None
        try:
            permission(state, step)
        except Answered as answered:
            message = answered.result.text
        stages.extend(_not_reached("permission"))
        return Explanation(
            effective.name, "deny", verdict.by, message, step.call.arguments, tuple(stages)
        )
    stages.append(await _gates(state, step))
    stages.append(StageVerdict("tool", "not run", "explain runs nothing"))
    return Explanation(
        effective.name, verdict.verdict, verdict.by, None, step.call.arguments, tuple(stages)
    )


def _permission(state: SessionState, step: Step) -> StageVerdict:
    """The permission stage's verdict and every answer it would hear (`pipeline.permission`)."""
    call, tool = step.call, step.tool
    assert tool is not None
    if (
        state.mode == "plan"
        and not step.read_only
        and not _profiles.plan_allows(state.profiles, step, state.host.registry)
    ):
        return StageVerdict("permission", "deny", "the session is in plan mode", "mode:plan")
    heard: list[tuple[str, str]] = []
    decisions = state.host.hooks.check_permission(call, tool, state.view)
    for d in decisions:
        said = d.action + (f" {d.rule}" if d.rule else "") + (f" ({d.reason})" if d.reason else "")
        heard.append((f"hook:{d.source}", said))
    engine = state.host.permissions
    if engine.rules:
        ruled = engine.decide(call.name, tool, call.arguments, state.view)
        if ruled is not None:
            said = f"{ruled.action} {ruled.rule}" + (f" ({ruled.reason})" if ruled.reason else "")
            heard.append((RULES, said))
            decisions.append(attrs.evolve(ruled, source=RULES))
    if decisions:  # deny over ask over allow, as `pipeline.decide`
        decision = next(
            d for action in ("deny", "ask", "allow") for d in decisions if d.action == action
        )
        return StageVerdict(
            "permission", decision.action, decision.reason or "", _signature(decision), tuple(heard)
        )
    if step.read_only:
        return StageVerdict("permission", "allow", "a read-only call", "read_only", tuple(heard))
    fallback, because = state.fallback_for(step.fallback or engine.mode)
    detail = f"no rule or hook decides: the fallback is {fallback!r}" + (
        f" ({because})" if because else ""
    )
    return StageVerdict("permission", fallback, detail, f"mode:{fallback}", tuple(heard))


async def _gates(state: SessionState, step: Step) -> StageVerdict:
    """The host gates for the paths the call would change, checked without a lease."""
    tool = step.tool
    assert tool is not None
    if not tool.mutates_paths:
        return StageVerdict("host gates", "skipped", "the tool changes no path the host gates")
    executor = getattr(state.view, "executor", None)
    if tool.runs_at != "host" and getattr(executor, "name", "local") != "local":
        return StageVerdict(
            "host gates", "skipped", "the session's worker checks them where the files are"
        )
    arguments = step.call.arguments

    def check() -> dict[str, Any]:
        return check_paths(state.files.scope, tool, arguments, lease=None, dry_run=True)

    try:
        gated = await anyio.to_thread.run_sync(check)
    except ToolError as exc:
        return StageVerdict("host gates", "stopped", exc.to_result().text, exc.signature)
    return StageVerdict("host gates", "passed", ", ".join(sorted({g.path for g in gated.values()})))


__all__ = ["STAGES", "Explanation", "StageVerdict", "explain"]
