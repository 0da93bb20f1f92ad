"""The pipeline: what happens to one tool call, in the contract's order (host.md §3).

The order is data: `STAGES`, run by one loop (`run_call`) on a `SessionState`, never on
the session. resolve → validate → target → profile → turn → pre-tool-use → permission →
approval → dispatch → post-tool-use; then, once every call of the batch has its result (the
barrier in `run_batch`), `shape`, in call order. A stage that answers the call itself (an unknown
name, invalid arguments, a refusal) raises `Answered`; the stages after it never run. The
order is the host's: plugins add hooks to stages, never stages to the order.

The loop is the one place a stage's news is recorded (`_pipeline.record`: the call's span,
its store entries, the writer's execution fact); a stage only says what it found. Every
hook is called through pluggy (`PipelineHooks`). The batch scheduler (`_pipeline.batch`)
decides only *when* each call may run.

Every hook of one call sees the same effective call and tool: the decoded arguments and,
for a call that runs another tool (a proxy's `Target`, an alias's primary), that tool, its
name and its arguments, with the call as the model sent it in ``call.via``. The result
keeps the model's call id and name.
"""

from __future__ import annotations

import functools
import inspect
import json
import logging
import re
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

import anyio
import attrs

from .._files.changes import after_tool
from .._files.gate import check_paths
from .._fs.lease import WriterLease
from .._fs.observations import version_of
from .._model.deferred import resolved
from .._model.errors import ToolError
from .._model.spec import Target, ToolSpec
from .._model.values import (
    Decision,
    Refuse,
    Replace,
    ToolCall,
    ToolResult,
    Violation,
    default_signature,
)
from .._results.results import truncate
from .._text.textio import display
from .._validation.arguments import NotAnObject, check_call, decode_arguments, shape_problem
from . import profiles as _profiles
from . import record
from .batch import ALONE, FIRST, LATER, BatchOrder, Tail, cancelled_result
from .context import ToolContext
from .plan import planned_stages
from .record import started_one
from .step import Answered, Event, Step, judged
from .suggest import did_you_mean, meanings_of
from .worker import Abandoned, begin, begin_guarded, run_async, run_sync

if TYPE_CHECKING:
    from .batch import Slot
    from .state import SessionState

log = logging.getLogger("callgate")

RULES = "permissions"  # the source of a [permissions] rule decision (and of the fallback)
VALIDATE = "callgate_validate_arguments"
POST_TOOL_USE = "callgate_post_tool_use"

#: A stage: it reads and fills in the call's `Step`, returns its news for the span (or
#: ``None``), may be a coroutine, and ends the call by raising `Answered` (or by setting
#: ``step.result``: dispatch).
Stage = Callable[["SessionState", Step], "Event | Awaitable[Event | None] | None"]


# --- the batch -------------------------------------------------------------------------------


async def run_batch(state: SessionState, calls: Sequence[ToolCall]) -> list[ToolResult]:
    """One model turn: one result per call, in call order (the caller holds the turn)."""
    if not calls:
        state.storm.observe([])  # an empty turn is no failure: it ends a failing streak
        return []
    if len(calls) == 1:  # the usual turn: no task, no waiting, nothing to order
        call = calls[0]
        step = Step(call, decoded(call))
        journal = state.journal
        if journal.calls:  # `record.batch_started` for one call, written out: one tuple
            journal.call_started(
                (started_one, journal, step, step.call, state.turn_origin, time.time())
            )
        await run_call(state, step, ALONE, stages_of(state, call.name))
        assert step.result is not None
        hint = state.storm.observe([step.result], [step.sent.arguments])
        if hint:
            state.counters.count("storm_hints")
        return [shape(state, step, FIRST if hint is None else Tail(True, hint))]
    steps = [Step(call, decoded(call)) for call in calls]
    record.batch_started(state, steps)
    order = BatchOrder(len(steps))
    async with anyio.create_task_group() as tg:
        for index, step in enumerate(steps):
            stages = stages_of(state, step.sent.name)
            tg.start_soon(run_call, state, step, order.slot(index), stages)
    # the barrier: every call has its result; the storm breaker looks at all of them,
    # then each is shaped, in call order (the first carries the hint and the notices)
    done = [(s.result, s.sent.arguments) for s in steps if s.result is not None]
    hint = state.storm.observe([r for r, _a in done], [a for _r, a in done])
    if hint:
        state.counters.count("storm_hints")
    first = FIRST if hint is None else Tail(True, hint)
    return [shape(state, step, first if index == 0 else LATER) for index, step in enumerate(steps)]


def decoded(call: ToolCall) -> ToolCall:
    """The call with its arguments decoded (JSON text as OpenAI sends it), when they decode
    to an object; else as sent (validation then says what they are)."""
    if isinstance(call.arguments, dict):
        return call
    try:
        return ToolCall(call.id, call.name, decode_arguments(call.arguments))
    except NotAnObject:
        return call


# --- one call: the stages, in order ----------------------------------------------------------


def stages_of(state: SessionState, name: Any) -> tuple[Stage, ...]:
    """The stages a call of ``name`` runs: its tool's plan (`_pipeline.plan`: the session's
    stages, each bound to the tool or left out where it has nothing to do for it), or the
    session's own stages for a name it runs no tool of (`resolve` answers it)."""
    if type(name) is str:
        planned = planned_stages(state, name, SPECIALISE)
        if planned is not None:
            return planned
    return state.stages


async def run_call(
    state: SessionState, step: Step, slot: Slot, stages: tuple[Stage, ...] | None = None
) -> None:
    """One call through every stage (``slot``: its place in the batch; ``stages``: its
    tool's plan, by default the session's stages) until one answers; ``step.result`` is
    then its unshaped result."""
    step.slot = slot
    if state.tracer is not None:
        record.call_started(state, step)
    try:
        # dispatch leaves the result in ``step.result`` (post-tool-use may replace it)
        for stage in state.stages if stages is None else stages:
            try:
                news = stage(state, step)
                if news is not None:
                    if not isinstance(news, tuple):  # a stage that waits
                        news = await news
                    if news is not None and step.span is not None:
                        record.event(step, news)
            except Answered as answer:
                record.answered(step, answer.result, answer.event)
                step.result = answer.result
                break
            except ToolError as exc:
                step.result = exc.to_result()
                break
            except Exception as exc:  # a plugin's bug must not take the batch down
                log.exception("call %s (%s) failed", step.sent.id, step.sent.name)
                step.result = ToolResult.failure("tool_error", f"{step.sent.name} failed: {exc}")
                break
    except BaseException:
        slot.finish()
        record.cancelled(state, step)
        raise
    if slot is not ALONE:
        slot.finish()
    step.ended = time.time()
    result = step.result
    assert result is not None
    result.call_id, result.name = step.sent.id, step.sent.name


# --- resolve ---------------------------------------------------------------------------------


def resolve(state: SessionState, step: Step) -> None:
    """The tool the name names in this session (aliases included), which must be on the
    session's surface unless it is an alias."""
    name = step.sent.name
    tool = state.tool(name) if isinstance(name, str) else None
    if tool is None:
        absent = why_absent(state, name) if isinstance(name, str) else None
        if absent is not None:  # registered, but a profile or a missing hook left it out
            if absent.error is not None and absent.error.kind == "blocked":
                raise Answered(absent, judged(step, "deny", _sig(absent, "profile")))
            raise Answered(absent)
        raise Answered(unknown_tool(state, name))
    step.tool = tool
    if tool.visibility != "alias" and not state.is_visible(name):
        message = f'tool "{name}" is not on this session\'s tool list'
        route = state.route
        if route is not None:
            message += "; call it through " + route.hidden_tool.format(name=name)
        raise Answered(
            ToolResult.failure("unavailable", message, f"unavailable:{name}", {"executed": False})
        )


def why_absent(state: SessionState, name: str) -> ToolResult | None:
    """Why a tool the host registers is not in this session, as the answer a call of it
    gets (directly or through a proxy: one verdict both ways): a child profile's
    ``blocked`` refusal, or ``unavailable`` saying why (hooks no plugin implements, or the
    tool's own ``available``). ``None`` when the host registers no such tool."""
    host = state.host
    if name in state.tools or host.registry.get(name) is None:
        return None
    if state.profiles:
        refused = _profiles.left_out(state, name)
        if refused is not None:
            return refused
    why = f'tool "{name}" is not available in this session'
    missing = host.unhooked().get(name)
    if missing:
        why += (
            f": it needs the {', '.join(missing)} hook"
            f"{'s' if len(missing) > 1 else ''}, which no loaded plugin implements"
        )
    return ToolResult.failure("unavailable", why, f"unavailable:{name}", {"executed": False})


def unknown_tool(state: SessionState, name: Any) -> ToolResult:
    """``unknown tool "<name>"`` with the close names this session can really use: on its
    surface (and aliases), then hidden ones in the words of its proxy."""
    label = name if isinstance(name, str) else repr(name)
    tools = state.tools
    direct = [n for n, s in tools.items() if s.visibility == "alias" or state.is_visible(n)]
    hidden = [n for n in tools if n not in direct]
    route = state.route
    message = f'unknown tool "{label}"' + did_you_mean(
        label,
        direct,
        hidden,
        route.hidden_tool if route is not None else None,
        meanings_of(state.host.registry.tools()),
    )
    return ToolResult.failure("unknown_tool", message, f"unknown_tool:{label}", {"executed": False})


def _sig(result: ToolResult, default: str) -> str:
    return result.error.signature if result.error is not None else default


# --- validate --------------------------------------------------------------------------------


def validate(state: SessionState, step: Step) -> None:
    """The call's arguments must be valid for its tool (`check_arguments`); then the
    effective call is the call with its decoded arguments."""
    tool = step.tool
    assert tool is not None
    state.counters.validated()
    arguments, error = check_arguments(state, tool, step.call.arguments, step.sent.id)
    if error is not None:
        raise Answered(error)
    assert arguments is not None
    if arguments is not step.call.arguments:
        step.call = ToolCall(step.sent.id, step.sent.name, arguments)
    step.read_only, step.exclusive = tool.is_read_only(step.call.arguments), tool.exclusive
    step.destructive = tool.is_destructive if tool.destructive is not None else False


def valid_arguments(
    state: SessionState,
    tool: ToolSpec,
    raw: Any,
    call_id: str,
    *,
    inside: bool = False,
    via: ToolCall | None = None,
) -> dict[str, Any]:
    """`check_arguments`, raising `Answered` with the error result."""
    arguments, error = check_arguments(state, tool, raw, call_id, inside=inside, via=via)
    if error is not None:
        raise Answered(error)
    assert arguments is not None
    return arguments


def check_arguments(
    state: SessionState,
    tool: ToolSpec,
    raw: Any,
    call_id: str,
    *,
    inside: bool = False,
    via: ToolCall | None = None,
    count: bool = True,
) -> tuple[dict[str, Any] | None, ToolResult | None]:
    """``(arguments, None)`` when ``raw`` is valid for ``tool`` (the JSON Schema, then the
    tool's own ``validate``, then ``callgate_validate_arguments``), else ``(None, result)``:
    ``invalid_arguments`` (counted), or ``config_error`` when the schema does not compile
    (counted as skipped; ``count=False``: not counted). Never coerces
    (`_validation.arguments.check_call`). ``inside``: the arguments sit inside a proxy's
    call (``via``, which the validators see as ``call.via``)."""
    host = state.host
    compiled = host.compiled(tool)
    certain = host.certainly_valid(tool)
    if (
        certain is not None
        and type(raw) is dict
        and certain(raw)
        and tool.validate is None
        and not host.hooks.implemented(VALIDATE)
        and shape_problem(raw) is None
    ):
        return raw, None  # the usual call: certainly valid, and nobody else to ask
    route = state.route
    misplaced = tool.misplaced
    return check_call(
        tool,
        compiled,
        raw,
        count=state.count if count else _not_counted,
        inside=route.arguments if inside and route is not None else None,
        plugin_violations=lambda args: semantic_violations(state, tool, args, call_id, via),
        misplaced=None
        if misplaced is None
        else (
            lambda args: misplaced(
                ToolContext(state.view, ToolCall(call_id, tool.name, args, via=via), tool), args
            )
        ),
    )


def _not_counted(name: str, n: int = 1) -> None:
    """Arguments the model did not write (a hook's replacement) count as no failure."""


def semantic_violations(
    state: SessionState,
    tool: ToolSpec,
    arguments: dict[str, Any],
    call_id: str,
    via: ToolCall | None = None,
) -> list[Violation]:
    """What the schema cannot say: the tool's ``validate``, then the plugins' hooks."""
    hooks = state.host.hooks
    if tool.validate is None and not hooks.implemented(VALIDATE):
        return []
    call = ToolCall(call_id, tool.name, arguments, via=via)
    out: list[Violation] = []
    if tool.validate is not None:
        out.extend(tool.validate(ToolContext(state.view, call, tool), arguments))
    out.extend(hooks.validate_arguments(call, tool, state.view))
    return out


# --- target: a proxy's target, an alias's primary --------------------------------------------


def target(state: SessionState, step: Step) -> Event | Awaitable[Event]:
    """What the call runs: a proxy's `Target` (validated against its own schema), or an
    alias's primary; the validation verdict then holds for the effective call."""
    tool = step.tool
    assert tool is not None
    if tool.resolve_target is not None:
        return _proxied(state, step)
    if tool.alias_of:
        _unaliased(state, step)
    return ("validation", {"valid": True, "tool": step.call.name})


async def _proxied(state: SessionState, step: Step) -> Event:
    """What a proxy's call runs: the `Target` its ``resolve_target`` answers, or the proxy
    itself (``None``); a `ToolResult` answer is the call's result."""
    tool, call = step.tool, step.call
    assert tool is not None and tool.resolve_target is not None
    ctx = ToolContext(state.view, call, tool, state.cancel_event)
    resolved = tool.resolve_target(ctx, call.arguments)
    if inspect.isawaitable(resolved):
        resolved = await resolved
    if isinstance(resolved, ToolResult):
        raise Answered(resolved)
    if not isinstance(resolved, Target):  # the proxy's own action (list, search, ...)
        _unaliased(state, step)
        return ("validation", {"valid": True, "tool": step.call.name})
    step.tool, step.inside, step.fallback = resolved.tool, True, resolved.fallback
    step.call = ToolCall(call.id, resolved.name, resolved.arguments, via=call)
    step.read_only = resolved.is_read_only()
    step.destructive = bool(
        resolved.destructive if resolved.destructive is not None else resolved.tool.destructive
    )
    step.exclusive = resolved.tool.exclusive
    if resolved.validate:
        step.call = attrs.evolve(
            step.call,
            arguments=valid_arguments(
                state, resolved.tool, resolved.arguments, call.id, inside=True, via=call
            ),
        )
    return ("validation", {"valid": True, "tool": step.call.name})


def _unaliased(state: SessionState, step: Step) -> None:
    """An alias runs its primary with mapped arguments (or its own ``execute``); either way
    it is judged under the primary's name (``permission_name``)."""
    tool, call = step.tool, step.call
    assert tool is not None
    if not tool.alias_of:
        return
    if tool.execute is None and tool.alias_args is not None:
        primary = state.host.registry.get(tool.alias_of)
        assert primary is not None
        step.tool = primary
        step.call = ToolCall(call.id, primary.name, tool.alias_args(call.arguments), via=call)
    else:
        step.call = ToolCall(call.id, tool.permission_name, call.arguments, via=call)


# --- profile: what a child may run -----------------------------------------------------------


def profile(state: SessionState, step: Step) -> None:
    """A child's profiles (`_pipeline.profiles.refusal`) must allow the effective call: its tool,
    the tool a proxy or alias runs, and for a strict read-only child the call's own
    read-only verdict (a shell command classified by its parsed line)."""
    if not state.profiles:
        return
    refused = _profiles.refusal(state, step)
    if refused is not None:
        raise Answered(refused, judged(step, "deny", _sig(refused, "profile")))


# --- turn: the batch's order -----------------------------------------------------------------


def turn(state: SessionState, step: Step) -> Awaitable[None] | None:
    """Wait for the call's turn in its batch (a mutation after every earlier call, a read
    after the last mutation before it); a cancel meanwhile means it never starts."""
    assert step.slot is not None
    waiting = step.slot.start(step.read_only, step.exclusive)
    if waiting is not None:
        return _turn_comes(state, waiting)
    if state.cancel_event.is_set():
        raise Answered(cancelled_result())
    return None


async def _turn_comes(state: SessionState, waiting: Awaitable[None]) -> None:
    await waiting
    if state.cancel_event.is_set():
        raise Answered(cancelled_result())


# --- pre-tool-use ----------------------------------------------------------------------------


def pre_tool_use(state: SessionState, step: Step) -> Awaitable[None] | None:
    """``callgate_pre_tool_use``: a `Refuse` blocks the call; a `Replace` runs it with other
    arguments, validated again first (every hook sees the call as it came). An answer may be
    an awaitable of one (a hook that runs a program): it is awaited in its turn; once a
    `Refuse` decides, the answers after it are closed unawaited. The hooks run here, on the
    host, wherever the session's executor runs the tool."""
    tool = step.tool
    assert tool is not None
    answers = state.host.hooks.pre_tool_use(step.call, tool, state.view)
    if not answers:
        return None
    if any(inspect.isawaitable(a) for a in answers):
        return _pre_tool_use_awaited(state, step, answers)
    for answer in answers:
        _pre_tool_answer(state, step, answer)
    return None


async def _pre_tool_use_awaited(state: SessionState, step: Step, answers: list[Any]) -> None:
    try:
        for index, answer in enumerate(answers):
            if inspect.isawaitable(answer):
                answers[index] = None  # awaited here (it is not closed below)
                answer = await answer
            _pre_tool_answer(state, step, answer)
    finally:
        for answer in answers:
            close = getattr(answer, "close", None)
            if inspect.isawaitable(answer) and close is not None:
                close()  # an answer never awaited (an earlier one decided)


def _pre_tool_answer(state: SessionState, step: Step, answer: Any) -> None:
    """One pre-tool-use answer applied: a `Refuse` ends the call, a `Replace` changes its
    arguments (validated again)."""
    tool = step.tool
    assert tool is not None
    if isinstance(answer, Refuse):
        raise Answered(blocked(f"blocked: {answer.reason}", f"hook:{answer.source}"))
    if isinstance(answer, Replace):
        arguments, error = check_arguments(
            state,
            tool,
            answer.arguments,
            step.call.id,
            inside=step.inside,
            via=step.call.via,
            count=False,
        )
        if error is not None:  # the hook's fault, not the model's
            raise Answered(bad_replacement(tool, answer, error))
        step.call = attrs.evolve(step.call, arguments=arguments)


def bad_replacement(tool: ToolSpec, answer: Replace, error: ToolResult) -> ToolResult:
    """A pre-tool-use hook replaced the arguments with invalid ones: a ``config_error``
    naming the hook (signature ``hook:<source>``), logged for the integrator, and never
    counted or worded as the model's mistake."""
    source = answer.source or "a pre-tool-use hook"
    problems = [line for line in error.text.splitlines() if line.startswith("- ")]
    log.warning(
        "the pre-tool-use hook %s replaced %s's arguments with invalid ones: %s",
        source,
        tool.name,
        "; ".join(problems) or error.text,
    )
    message = (
        f"{tool.name} was not run: the host's pre-tool-use hook {source} replaced its "
        "arguments with invalid ones. This is a fault of that hook, not of your call; "
        "tell the user (calling again will not help)."
    )
    if problems:
        message += "\n" + "\n".join(problems[:20])
    return ToolResult.failure("config_error", message, f"hook:{source}", {"executed": False})


def blocked(message: str, signature: str) -> ToolResult:
    return ToolResult.failure("blocked", message, signature, {"executed": False})


# --- permission ------------------------------------------------------------------------------


def permission(state: SessionState, step: Step) -> Event | None:
    """Plan mode, then the ``[permissions]`` rules and ``callgate_check_permission``
    (deny > ask > allow), then the fallback. An allowed call goes on; an ``ask`` is left
    for `approval` (``step.ask``); a denied one is answered ``blocked``."""
    call, tool = step.call, step.tool
    assert tool is not None
    if (
        state.mode == "plan"
        and not step.read_only
        and not _profiles.plan_allows(state.profiles, step, state.host.registry)
    ):
        raise Answered(
            blocked(
                f"blocked: the session is in plan mode; {call.name} is not read-only", "mode:plan"
            ),
            judged(step, "deny", "mode:plan"),
        )
    engine = state.host.permissions
    decision = decide(state, call, tool)
    if decision is None:  # the fallback: allow for a read-only call, else the target's or mode
        # (or the stricter one a plugin set: `SessionState.tighten_fallback`)
        fallback, because = "allow", None
        if not step.read_only:
            fallback, because = state.fallback_for(step.fallback or engine.mode)
        if fallback == "allow":
            return judged(step, "allow", "read_only" if step.read_only else "mode:allow")
        decision = Decision(fallback, None, because, source=RULES)  # type: ignore[arg-type]
    if decision.action == "ask":
        step.ask = decision
        return None
    news = judged(step, decision.action, _signature(decision))
    if decision.action == "deny":
        raise Answered(blocked(_denied(state, step, decision), _signature(decision)), news)
    return news


def decide(state: SessionState, call: ToolCall, tool: ToolSpec) -> Decision | None:
    """What ``callgate_check_permission`` and the ``[permissions]`` rules say about a call,
    deny over ask over allow (``Decision.source`` names who said it); ``None`` when nothing
    speaks. Plan mode and the fallback are the caller's."""
    decisions = state.host.hooks.check_permission(call, tool, state.view)
    engine = state.host.permissions
    if engine.rules:
        ruled = engine.decide(call.name, tool, call.arguments, state.view)
        if ruled is not None:
            decisions.append(attrs.evolve(ruled, source=RULES))
    if not decisions:
        return None
    return next(d for action in ("deny", "ask", "allow") for d in decisions if d.action == action)


def _signature(decision: Decision) -> str:
    """The deciding rule, else the deciding plugin, else the mode (host.md §7)."""
    if decision.rule:
        return f"{decision.action}:{decision.rule}"
    if decision.source != RULES:
        return f"hook:{decision.source}"
    return f"mode:{decision.action}"


def _denied(state: SessionState, step: Step, decision: Decision) -> str:
    name = step.call.name
    if decision.rule:
        why = f"blocked: {name} is denied by rule {decision.rule}"
        return why + (f" ({decision.reason})" if decision.reason else "")
    if decision.source != RULES:
        return f"blocked: {decision.reason or f'{name} is denied by {decision.source}'}"
    why = f" ({decision.reason})" if decision.reason else ""
    return (
        f"blocked: {name} is not allowed by any [permissions] rule and the fallback is "
        f'"deny"{why}; allow = [{_wanted(state, step)}] in [permissions] would allow it'
    )


def _wanted(state: SessionState, step: Step) -> str:
    rules = state.host.permissions.allow_rules_for(
        step.call.name, step.call.arguments, step.tool, state.view
    )
    return ", ".join(json.dumps(r) for r in rules)


# --- approval: an ``ask`` put to the approver ------------------------------------------------


def approval(state: SessionState, step: Step) -> Awaitable[Event] | None:
    """An ``ask``: the preview a mutating tool would make, then the approver's answer. An
    approved preview's file versions go to dispatch (the gate then insists on them); a
    refusal is answered ``blocked``."""
    return None if step.ask is None else _approval(state, step, step.ask)


async def _approval(state: SessionState, step: Step, decision: Decision) -> Event:
    call, tool = step.call, step.tool
    assert tool is not None
    signature = _signature(decision)
    preview, versions = None, None
    if tool.preview is not None:
        # a session bound to a worker previews where its files are (`_executor.remote`)
        remote = getattr(getattr(state.view, "executor", None), "preview", None)
        if remote is not None and tool.runs_at != "host":
            preview, versions = await remote(state, step)
        else:
            try:
                preview, versions = await anyio.to_thread.run_sync(_preview, state, step)
            except ToolError as exc:
                raise Answered(exc.to_result()) from None
    answer = state.host.hooks.ask_permission(call, tool, state.view, preview)
    if inspect.isawaitable(answer):
        answer = await answer
    if answer is None:
        if state.host.permissions.ask_without_approver == "allow":
            step.expected = versions
            return judged(step, "ask:allow", f"ask_without_approver ({signature})")
        news = judged(step, "ask:deny", f"no approver ({signature})")
        if decision.rule:  # an ask rule outranks every allow rule
            why = (
                f"blocked: {call.name} needs approval (rule {decision.rule} in "
                "[permissions] ask) and no approver is available; nothing was run"
            )
        elif decision.source != RULES:
            why = (
                f"blocked: {call.name} needs approval (asked by {decision.source}) and no "
                "approver is available; nothing was run"
            )
        else:
            fallback = f" ({decision.reason})" if decision.reason else ""
            why = (
                f"blocked: {call.name} needs approval (no [permissions] rule allows it and "
                f'the fallback is "ask"{fallback}) and no approver is available; '
                f"allow = [{_wanted(state, step)}] in [permissions] would allow it"
            )
        raise Answered(blocked(why, signature), news)
    allowed = answer.action == "allow" if isinstance(answer, Decision) else bool(answer)
    news = judged(step, "ask:allow" if allowed else "ask:deny", f"approver ({signature})")
    if allowed:
        step.expected = versions
        return news
    reason = (
        answer.reason
        if isinstance(answer, Decision) and answer.reason
        else "the approver refused it"
    )
    raise Answered(blocked(f"blocked: {call.name} was not approved: {reason}", signature), news)


def _preview(state: SessionState, step: Step) -> tuple[Any, dict[str, Any]]:
    tool = step.tool
    assert tool is not None and tool.preview is not None
    ctx = ToolContext(state.view, step.call, tool, state.cancel_event, previewing=True)
    ctx.gated = check_paths(state.files.scope, tool, step.call.arguments, lease=None, dry_run=True)
    versions = {k: version_of(g.stat) for k, g in ctx.gated.items() if g.stat is not None}
    return tool.preview(ctx, step.call.arguments), versions


# --- dispatch: the host gate, then the tool --------------------------------------------------


@functools.lru_cache(maxsize=512)
def _is_async(function: Callable[..., Any]) -> bool:
    return inspect.iscoroutinefunction(function)


async def dispatch(state: SessionState, step: Step) -> None:
    """The host gate (confinement, writer lease, stat, observation) for the paths the tool
    mutates, then the tool itself: awaited, inline (``blocking=False``) or in a worker thread
    (one hop for the gate and the tool)."""
    call, tool = step.call, step.tool
    assert tool is not None and tool.execute is not None
    run = resolved(tool.execute, tool.name, tool.plugin)  # declared code: imported now
    arguments = call.arguments
    expected = step.expected
    ctx = ToolContext(state.view, call, tool, state.cancel_event, expected_versions=expected)
    lease = WriterLease(()) if tool.mutates else None
    scope = state.files.scope

    def gate() -> None:
        if lease is not None:
            try:
                ctx.gated = check_paths(
                    scope, tool, arguments, lease=lease, expected_versions=expected
                )
            except ToolError as exc:
                step.gate = ("gate", {"passed": False, "signature": exc.signature or ""})
                raise
            step.gate = ("gate", {"passed": True, "paths": len(ctx.gated)})

    held: dict[str, float] = {}  # when the gate held the paths (for the execution fact)

    def gate_then_run() -> Any:
        try:
            gate()
            held["from"] = time.monotonic()
            return run(ctx, arguments)
        finally:  # in the worker: an abandoned call keeps its paths until it ends
            held["to"] = time.monotonic()
            if lease is not None:
                lease.release()

    async def gate_then_await() -> Any:
        try:
            if lease is not None:
                await anyio.to_thread.run_sync(gate)
            held["from"] = time.monotonic()
            return await run(ctx, arguments)
        finally:
            held["to"] = time.monotonic()
            if lease is not None:
                lease.release()

    started = time.monotonic()
    result = await _dispatched(
        state, tool, ctx, run, arguments, lease, gate_then_run, gate_then_await
    )
    ran = lease is None or "from" in held  # a call the gate refused never ran: no fact
    if ran and (not step.read_only or step.destructive):  # a writer: its execution fact
        record.dispatched(
            state,
            step,
            result,
            tuple(sorted({g.path for g in ctx.gated.values()})),
            held.get("from", started),
            held.get("to", time.monotonic()),
        )
    elif step.gate is not None and step.span is not None:
        record.event(step, step.gate)
    changes = state.file_changes
    if ctx.gated and not result.is_error and changes.listened:  # before shaping: a plugin's
        changes.publish(after_tool(ctx.gated.values()))  # shaper sees them known
    step.result = result


async def _dispatched(
    state: SessionState,
    tool: ToolSpec,
    ctx: ToolContext,
    run: Callable[..., Any],
    arguments: Any,
    lease: WriterLease | None,
    gate_then_run: Callable[[], Any],
    gate_then_await: Callable[[], Any],
) -> ToolResult:
    try:
        if not tool.blocking and lease is None:  # it never blocks: inline, nothing to walk away
            out = run(ctx, arguments)
            if inspect.isawaitable(out):
                out = await out
        elif _is_async(run):
            out = await run_async(
                functools.partial(run, ctx, arguments) if lease is None else gate_then_await,
                ctx.cancelled,
                state.cancel_grace_s,
            )
        else:  # one worker-thread hop for gate and tool: a hop costs 0.1-0.2 ms on a busy machine
            out = await run_sync(gate_then_run, ctx.cancelled, state.cancel_grace_s)
    except Exception as exc:
        out = failed(tool, exc)
    return answer_of(state, tool, out)


def answer_of(state: SessionState, tool: ToolSpec, out: Any) -> ToolResult:
    """What a tool returned, as its result: a string is its text; a tool's own
    ``invalid_arguments`` answer gets the contract's form (`argument_problem`)."""
    if isinstance(out, str):
        return ToolResult.ok(out)
    if not isinstance(out, ToolResult):
        return ToolResult.failure(
            "tool_error", f"{tool.name} failed: it returned {type(out).__name__}, not a result"
        )
    error = out.error
    if (
        error is not None
        and error.kind == "invalid_arguments"
        and not error.signature.startswith(ARGUMENT_SIGNATURE)
    ):
        return argument_problem(state, tool, out, error)
    return out


def failed(tool: ToolSpec, exc: Exception) -> ToolResult:
    """What a tool that raised answers (every dispatch path's one ladder): `abandoned`
    once a cancel's grace ran out, a `ToolError`'s own result, else ``tool_error`` (a
    plugin's bug, logged). Called in the ``except`` clause, for the log's traceback."""
    if isinstance(exc, ToolError):
        return exc.to_result()
    if isinstance(exc, Abandoned):
        return abandoned(tool, exc)
    log.debug("tool %s raised", tool.name, exc_info=True)
    return ToolResult.failure("tool_error", f"{tool.name} failed: {exc}")


def abandoned(tool: ToolSpec, exc: Abandoned) -> ToolResult:
    """A cancelled call that did not stop within the grace period: the session stopped
    waiting for it."""
    return ToolResult.failure(
        "cancelled",
        f"{tool.name} was cancelled and {exc}, so the session stopped "
        "waiting for it; it may still be running, and what it has changed is unknown",
        "cancelled",
        {"abandoned": True},
    )


ARGUMENT_SIGNATURE = "argument_validation:"


def argument_problem(
    state: SessionState, tool: ToolSpec, result: ToolResult, error: Any
) -> ToolResult:
    """A tool's own ``invalid_arguments`` answer in the contract's form, whoever wrote the
    tool: signature ``argument_validation:<tool>:<schema fingerprint>:<category>`` (the
    category is the tool's own code, lowercased, e.g. ``memory_credential``), the signature
    line the model reads last, and counted as an argument failure like the schema's."""
    own = (
        error.signature if error.signature != default_signature(error.kind, error.message) else ""
    )  # a failure the tool gave no code of its own
    code = re.sub(r"[^a-z0-9_]+", "_", own.lower()).strip("_")
    category = code if code and code != "invalid_arguments" else "tool"
    fingerprint = state.host.compiled(tool).short_fingerprint
    signature = f"{ARGUMENT_SIGNATURE}{tool.name}:{fingerprint}:{category}"
    state.count("argument_failures")
    text = f"{result.text}\nsignature: {signature}"
    return attrs.evolve(
        result.with_text(text), error=attrs.evolve(error, signature=signature, message=text)
    )


# --- post-tool-use: after the tool, before the batch is shaped --------------------------------


def post_tool_use(state: SessionState, step: Step) -> Awaitable[None] | None:
    """``callgate_post_tool_use``, for a call that was dispatched (the tool ran, or a host
    gate refused it): each answer (a `ToolResult`, or an awaitable of one) replaces the
    result, in call order; every implementation sees the tool's own result. A hook that
    raises leaves the result as it was (logged); a `ToolError` it raises becomes the result.
    It runs here, on the host, whichever executor ran the tool."""
    hooks = state.host.hooks
    if not hooks.implemented(POST_TOOL_USE):
        return None
    return _post_tool_use(state, step)


async def _post_tool_use(state: SessionState, step: Step) -> None:
    tool, result = step.tool, step.result
    assert tool is not None and result is not None
    try:
        answers = state.host.hooks.post_tool_use(step.call, tool, result, state.view)
    except Exception:
        log.exception("a post_tool_use hook failed on call %s", step.sent.id)
        return
    replaced = result
    for answer in answers:
        try:
            if inspect.isawaitable(answer):
                answer = await answer
        except ToolError as exc:
            answer = exc.to_result()
        except Exception:
            log.exception("a post_tool_use hook failed on call %s", step.sent.id)
            continue
        if isinstance(answer, ToolResult):
            replaced = answer
    step.result = replaced


#: The enforcement order (host.md §3): fixed, and the host's alone.
STAGES: tuple[Stage, ...] = (
    resolve,
    validate,
    target,
    profile,
    turn,
    pre_tool_use,
    permission,
    approval,
    dispatch,
    post_tool_use,
)


def stages_for(profiled: bool, run: Stage = dispatch) -> tuple[Stage, ...]:
    """The stages a session runs, in `STAGES`' order: every one for a session with profiles,
    every one but `profile` for a session without (it would have nothing to check).

    ``run`` takes `dispatch`'s place: `dispatch` itself (the call runs here), or a remote
    executor's (`_pipeline.executor`: the call, judged here, runs next to its workspace).
    Every other stage (the hooks before and after the tool included) runs here, on the
    host. The executor is chosen once per session, so the loop pays nothing for the seam."""
    stages = STAGES if profiled else tuple(s for s in STAGES if s is not profile)
    return stages if run is dispatch else tuple(run if s is dispatch else s for s in stages)


# --- per-tool plans: each stage as one tool's calls run it (`_pipeline.plan`) ---------------


def _runs_another(tool: ToolSpec) -> bool:
    """A proxy or an alias: its call may run another tool (`target`), judged as that one."""
    return tool.resolve_target is not None or bool(tool.alias_of)


def _resolve_for(state: SessionState, tool: ToolSpec) -> Stage:
    """The plan found the tool and checked that the session may call it directly."""

    def resolve_planned(state: SessionState, step: Step) -> None:
        step.tool = tool

    return resolve_planned


def _validate_for(state: SessionState, tool: ToolSpec) -> Stage:
    """`validate` for a tool nobody but its schema judges and whose schema has a
    certainly-valid check: that check (and the shape scan), then the general path only
    for arguments it is unsure of; the tool's flags read once."""
    certain = state.host.certainly_valid(tool)
    if certain is None or tool.validate is not None or state.host.hooks.implemented(VALIDATE):
        return validate
    flag = tool.read_only
    read_only = None if callable(flag) else bool(flag)
    exclusive = tool.exclusive
    destructive = tool.is_destructive if tool.destructive is not None else False

    def validate_planned(state: SessionState, step: Step) -> None:
        state.counters.validated()
        raw = step.call.arguments
        if type(raw) is not dict or not certain(raw) or shape_problem(raw) is not None:
            arguments, error = check_arguments(state, tool, raw, step.sent.id)
            if error is not None:
                raise Answered(error)
            assert arguments is not None
            if arguments is not raw:
                step.call = ToolCall(step.sent.id, step.sent.name, arguments)
        step.read_only = tool.is_read_only(step.call.arguments) if read_only is None else read_only
        step.exclusive, step.destructive = exclusive, destructive

    return validate_planned


def _target_for(state: SessionState, tool: ToolSpec) -> Stage | None:
    """Nothing to do for a tool that is no proxy and no alias, unless a span hears the
    verdict."""
    if _runs_another(tool) or state.tracer is not None:
        return target
    return None


def _hook_stage_for(stage: Stage, hook: str) -> Any:
    """A hook stage is left out while no plugin implements its hook (a plugin registered
    later drops the plans: `_pipeline.plan`)."""

    def specialise(state: SessionState, tool: ToolSpec) -> Stage | None:
        return stage if state.host.hooks.implemented(hook) else None

    return specialise


def _dispatch_for(state: SessionState, tool: ToolSpec) -> Stage:
    """`dispatch` for a tool that runs itself (no proxy, no alias) and that the host gate has
    nothing to check for (it mutates no paths):
    a tool that does not block, or an async one, runs right here, with no closure, no
    task and no thread hop; an async tool's cancel guard is set up only if it suspends
    (`worker.begin_guarded`). A plain tool that may block goes to a worker thread
    (`dispatch`)."""
    if tool.execute is None or tool.mutates or _runs_another(tool):
        return dispatch  # a proxy or an alias may run another tool (`target`): the general path
    execute, blocking = tool.execute, tool.blocking

    def dispatch_planned(state: SessionState, step: Step) -> Awaitable[None] | None:
        run = resolved(execute, tool.name, tool.plugin)  # declared code: imported now
        if blocking and not _is_async(run):
            return dispatch(state, step)  # a worker thread
        call = step.call
        ctx = ToolContext(
            state.view, call, tool, state.cancel_event, expected_versions=step.expected
        )
        started = time.monotonic()
        try:
            out = run(ctx, call.arguments)
            if blocking:  # async, and it may block: guarded from its first suspension on
                done, out = begin_guarded(out, ctx.cancelled, state.cancel_grace_s)
                if not done:
                    return _dispatch_awaited(state, step, ctx, out, started)
            elif inspect.isawaitable(out):  # declared non-blocking: no guard
                done, out = begin(out)
                if not done:
                    return _dispatch_awaited(state, step, ctx, out, started)
        except Exception as exc:
            out = failed(tool, exc)
        _dispatch_ended(state, step, ctx, out, started)
        return None

    return dispatch_planned


async def _dispatch_awaited(
    state: SessionState, step: Step, ctx: ToolContext, pending: Awaitable[Any], started: float
) -> None:
    tool = step.tool
    assert tool is not None
    try:
        out = await pending
    except Exception as exc:
        out = failed(tool, exc)
    _dispatch_ended(state, step, ctx, out, started)


def _dispatch_ended(
    state: SessionState, step: Step, ctx: ToolContext, out: Any, started: float
) -> None:
    """As `dispatch` ends a call the gate had no paths for: its result, a writer's
    execution fact, and the files the tool says it changed."""
    tool = step.tool
    assert tool is not None
    result = answer_of(state, tool, out)
    gated = ctx.gated
    if not step.read_only or step.destructive:
        paths = tuple(sorted({g.path for g in gated.values()})) if gated else ()
        record.dispatched(state, step, result, paths, started, time.monotonic())
    if gated and not result.is_error and state.file_changes.listened:
        state.file_changes.publish(after_tool(gated.values()))
    step.result = result


def _permission_for(state: SessionState, tool: ToolSpec) -> Stage:
    """`permission` for a read-only tool no plugin judges (no proxy, no alias: its calls are
    judged as themselves): with no ``[permissions]`` rule it is the fallback's allow for a
    read-only call, as `permission` finds it, without asking hooks nobody implements."""
    if (
        tool.read_only is not True
        or _runs_another(tool)
        or state.host.hooks.implemented("callgate_check_permission")
    ):
        return permission

    def permission_planned(state: SessionState, step: Step) -> Event | None:
        if state.host.permissions.rules:
            return permission(state, step)
        return judged(step, "allow", "read_only")

    return permission_planned


#: How each stage is bound to one tool in a plan (a stage not named here is run as is).
SPECIALISE: dict[Stage, Any] = {
    resolve: _resolve_for,
    validate: _validate_for,
    target: _target_for,
    pre_tool_use: _hook_stage_for(pre_tool_use, "callgate_pre_tool_use"),
    permission: _permission_for,
    dispatch: _dispatch_for,
    post_tool_use: _hook_stage_for(post_tool_use, POST_TOOL_USE),
}


# --- shape: after the batch's barrier, in call order -----------------------------------------


def shape(state: SessionState, step: Step, tail: Tail) -> ToolResult:
    """``callgate_shape_result`` (for a call that named a tool), then the host's own shaping:
    the whole text kept in the result store, truncation with a marker, and for the first
    result of a batch the storm hint and the session's notices."""
    result = step.result
    assert result is not None
    if step.tool is not None:
        try:
            shaped = state.host.hooks.shape_result(step.call, step.tool, result, state.view)
        except Exception:  # a broken shaper must not cost the batch its results
            log.exception("a shape_result hook failed on call %s", step.sent.id)
            shaped = result
        if shaped is not result:
            shaped.call_id, shaped.name = result.call_id, result.name
            result = shaped
    text = result.text
    result, text = valid_utf8(result, text)
    complete = text
    extra: list[str] = []
    if tail.first:
        if tail.hint:
            extra.append(tail.hint)
        extra.extend(state.notices.drain())
    name = step.sent.name or ""
    item = state.results.add(step.sent.id, name, text)
    reserve = sum(len(t) + 2 for t in extra) if extra else 0
    max_chars = state.max_chars
    if len(text) + reserve > max_chars:
        route = state.route
        shown, meta = truncate(
            text,
            max_chars=max_chars,
            reserve=reserve,
            tool=name,
            call_id=step.sent.id,
            item=item,
            pager=route.result_page if route is not None else None,
        )
        result = result.with_text(shown)
        result.meta.update(meta)
        text = shown
    if extra:
        result = result.with_text("\n\n".join([text, *extra]))
    recording = state.journal.calls
    if recording or step.span is not None:
        seen = result.text if recording and (text is not complete or extra) else None
        record.shaped(state, step, result, complete, seen, item, extra or None)
    return result


def valid_utf8(result: ToolResult, text: str) -> tuple[ToolResult, str]:
    """The result (and its ``text``) with any lone surrogate (a file's undecodable byte that
    a tool let through) shown as U+FFFD, as read_file shows it: what the model and the
    replay output get is always valid UTF-8 (issue 26)."""
    safe = display(text)
    error = result.error
    if error is not None and display(error.message) is not error.message:
        result = attrs.evolve(result, error=attrs.evolve(error, message=display(error.message)))
    return (result.with_text(safe), safe) if safe is not text else (result, text)


__all__ = [
    "STAGES",
    "Answered",
    "Stage",
    "Step",
    "check_arguments",
    "decide",
    "run_batch",
    "run_call",
    "shape",
    "stages_for",
]
