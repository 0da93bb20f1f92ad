"""The pipeline: what happens to one tool call, in the contract's order (host.md §3).

`run_call` reads top to bottom: resolve → validate → pre-tool-use →
permission (ask) → host gates → dispatch → shape. A step that answers the
call itself (an unknown name, invalid arguments, a refusal) raises `Answered`
and the call goes straight to shaping; nothing below it runs. Every hook is
called through pluggy (`_hooks.PipelineHooks`). The batch scheduler
(`_batch`) decides only *when* each call runs and is shaped.

Every hook of one call sees the same effective call and tool: the decoded
arguments and, for a call that runs another tool (a proxy's `Target`, an
alias's primary), that tool, its name and its arguments, with the call as the
model sent it in ``call.via``. The result keeps the model's call id and name.
"""

from __future__ import annotations

import functools
import inspect
import json
import logging
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import anyio
import attrs

from . import _profiles, _telemetry
from ._batch import Alone, Batch, Slot, Tail, cancelled_result
from ._context import ToolContext
from ._errors import ToolError
from ._facts import ExecutionFact
from ._file_changes import after_tool
from ._gate import check_paths
from ._lease import WriterLease
from ._model import Decision, Refuse, Replace, ToolCall, ToolResult, Violation
from ._observations import version_of
from ._results import truncate
from ._spec import Target, ToolSpec
from ._suggest import did_you_mean
from ._textio import display
from ._validation import NotAnObject, check_call, decode_arguments, shape_problem
from ._worker import Abandoned, run_async, run_sync

if TYPE_CHECKING:
    from ._session import Session
    from ._store_model import CallEnded, CallStarted

log = logging.getLogger("callgate")

RULES = "permissions"  # the source of a [permissions] rule decision (and of the fallback)
VALIDATE = "callgate_validate_arguments"
POST_TOOL_USE = "callgate_post_tool_use"


class Answered(Exception):
    """A step answered the call itself; the steps below it never run."""

    def __init__(self, result: ToolResult) -> None:
        super().__init__(result.text)
        self.result = result


@attrs.define(slots=True)
class Step:
    """One call on its way: as the model sent it, and what its hooks see (each step of the
    pipeline fills in what it learned: the tool, the effective call, how it may run)."""

    sent: ToolCall
    call: ToolCall
    tool: ToolSpec | None = None
    read_only: bool = False
    destructive: bool = False
    exclusive: bool = False
    fallback: str | None = None
    inside: bool = False  # the arguments sit inside a proxy's call (feedback wording)
    record: CallStarted | None = None  # the call's record in the session store
    permission: str | None = None  # allow, deny, ask:allow, ask:deny (when it was judged)
    decided_by: str | None = None  # the rule, plugin, mode or approver that decided
    ended: float = 0.0
    span: Any = None  # the call's OpenTelemetry span (`_telemetry`), when the session traces


def event(step: Step, name: str, attributes: dict[str, Any]) -> None:
    """A pipeline stage on the call's span (nothing without one)."""
    if step.span is not None:
        step.span.add_event(name, attributes)


# --- the batch ----------------------------------------------------------------------------


async def run_batch(session: Session, calls: Sequence[ToolCall]) -> list[ToolResult]:
    """One model turn: one result per call, in call order (the caller holds the batch lock)."""
    if not calls:
        session.storm.observe([])  # an empty turn is no failure: it ends a failing streak
        return []

    def observe(results: list[ToolResult], arguments: list[Any]) -> str | None:
        hint = session.storm.observe(results, arguments)
        if hint:
            session.count("storm_hints")
        return hint

    def shaping(step: Step, result: ToolResult, tail: Tail) -> ToolResult:
        return shape(session, step, result, tail)

    journal = session.journal
    steps = [Step(call, decoded(call)) for call in calls]
    if journal.calls:  # recorded in call order, before any of them runs
        turn = journal.batch()
        for position, step in enumerate(steps):
            step.record = journal.call_started(turn, position, step.call, session.turn_origin)
        journal.batch_ended()
    try:
        if len(calls) == 1:
            return [await run_call(session, calls[0], Alone(observe, shaping), steps[0])]
        batch = Batch(len(calls), observe, shaping)
        results: list[ToolResult | None] = [None] * len(calls)

        async def one(index: int, call: ToolCall) -> None:
            results[index] = await run_call(session, call, batch.slot(index), steps[index])

        async with anyio.create_task_group() as tg:
            for index, call in enumerate(calls):
                tg.start_soon(one, index, call)
        return [r for r in results if r is not None]
    finally:
        if journal.calls:
            journal.batch_ended()


# --- one call -------------------------------------------------------------------------------


async def run_call(session: Session, call: ToolCall, slot: Slot,
                   step: Step | None = None) -> ToolResult:
    """One call through the whole pipeline; ``slot`` is its place in the batch."""
    if step is None:
        step = Step(call, decoded(call))
    if session.tracer is not None:
        step.span = _telemetry.start(session.tracer, session.id, call.id, call.name)
    try:
        try:
            tool = resolve(session, step)                                       # 1
            validate(session, step, tool)                                       # 2
            if tool.resolve_target is not None:
                await proxied(session, step)           # a proxy's target, validated too
            elif tool.alias_of:
                unaliased(session, step)               # an alias's primary
            event(step, "validation", {"valid": True, "tool": step.call.name})
            if session.profiles:
                profiled(session, step)                # the child's profile (`_profiles`)
            waiting = slot.start(step.read_only, step.exclusive)  # the batch's order
            if waiting is not None:
                await waiting
            if session.cancel_event.is_set():
                raise Answered(cancelled_result())
            await pre_tool_use(session, step)                                   # 3
            decision = permission(session, step)                                # 4
            expected = await ask(session, step, decision) if decision else None
            result = await dispatch(session, step, expected)                    # 5-6
            result = await post_tool_use(session, step, result)                 # 6b
        except Answered as answered:
            result = answered.result
            if result.error is not None and result.error.kind == "invalid_arguments":
                event(step, "validation", {"valid": False})
        except ToolError as exc:
            result = exc.to_result()
        except Exception as exc:  # a plugin's bug must not take the batch down
            log.exception("call %s (%s) failed", call.id, call.name)
            result = ToolResult.failure("tool_error", f"{call.name} failed: {exc}")
    except BaseException:
        slot.abandon()
        cancelled = ToolResult.failure("cancelled", "cancelled", "cancelled")
        if step.record is not None:
            _record(session, step, cancelled, "cancelled", None, None)
        if step.span is not None:
            _telemetry.end(step.span, cancelled, tool=None, permission=step.permission,
                           decided_by=step.decided_by)
        raise
    step.ended = time.time()
    result.call_id, result.name = call.id, call.name
    return await slot.shaped(step, result)    # 7: `shape`, in call order once all have results


# --- explain: every stage's verdict, nothing run ------------------------------------------


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


STAGES = ("resolve", "validation", "pre-tool-use", "permission", "host gates", "tool")


async def explain(session: Session, call: ToolCall) -> Explanation:
    """Every stage's verdict for ``call`` as the pipeline would decide it in ``session``,
    without running the tool (`callgate.rules.explain`). The pre-tool-use hooks and the
    permission hooks are asked as in a real call (a hook that runs a program runs it); the
    approver is never asked, and the host gates are checked without holding anything."""
    step = Step(call, decoded(call))
    stages: list[StageVerdict] = []

    def refused(stage: str, result: ToolResult, decision: str = "deny") -> Explanation:
        error = result.error
        stages.append(StageVerdict(stage, "stopped", result.text,
                                   error.signature if error is not None else None))
        index = STAGES.index(stage) + 1
        stages.extend(StageVerdict(name, "not reached") for name in STAGES[index:])
        return Explanation(step.tool.name if step.tool else None, decision,
                           error.signature if error is not None else None, result.text,
                           step.call.arguments, tuple(stages))

    try:
        tool = resolve(session, step)
    except Answered as answered:
        return refused("resolve", answered.result)
    stages.append(StageVerdict("resolve", "passed", f"tool {tool.name}"))
    try:
        validate(session, step, tool)
        if tool.resolve_target is not None:
            await proxied(session, step)
        elif tool.alias_of:
            unaliased(session, step)
        if session.profiles:
            profiled(session, step)
    except Answered as answered:
        return refused("validation", answered.result)
    except ToolError as exc:
        return refused("validation", exc.to_result())
    effective = step.tool or tool
    detail = f"valid for {effective.name}" + (
        f" (reached through {step.sent.name})" if effective.name != step.sent.name else "")
    stages.append(StageVerdict("validation", "passed", detail))
    heard: list[tuple[str, str]] = []
    try:
        for answer in session.host.hooks.pre_tool_use(step.call, effective, session):
            if inspect.isawaitable(answer):
                answer = await answer
            if isinstance(answer, Refuse):
                heard.append((f"hook:{answer.source}", f"refuse: {answer.reason}"))
                stages.append(StageVerdict("pre-tool-use", "stopped",
                                           f"blocked: {answer.reason}", f"hook:{answer.source}",
                                           tuple(heard)))
                stages.extend(StageVerdict(n, "not reached") for n in STAGES[3:])
                return Explanation(effective.name, "deny", f"hook:{answer.source}",
                                   f"blocked: {answer.reason}", step.call.arguments,
                                   tuple(stages))
            if isinstance(answer, Replace):
                heard.append((f"hook:{answer.source}",
                               "replace: " + json.dumps(answer.arguments, default=str)))
                step.call = attrs.evolve(step.call, arguments=valid_arguments(
                    session, effective, answer.arguments, step.call.id, inside=step.inside,
                    via=step.call.via))
    except Answered as answered:
        stages.append(StageVerdict("pre-tool-use", "stopped", answered.result.text,
                                   None, tuple(heard)))
        stages.extend(StageVerdict(n, "not reached") for n in STAGES[3:])
        return Explanation(effective.name, "deny", None, answered.result.text,
                           step.call.arguments, tuple(stages))
    stages.append(StageVerdict("pre-tool-use", "passed",
                               "arguments replaced" if any(w.startswith("replace")
                                                           for _s, w in heard) else "",
                               answers=tuple(heard)))
    verdict = _explain_permission(session, step)
    stages.append(verdict)
    message = None
    if verdict.verdict == "deny":
        try:
            permission(session, step)
        except Answered as answered:
            message = answered.result.text
        stages.extend(StageVerdict(n, "not reached") for n in STAGES[4:])
        return Explanation(effective.name, "deny", verdict.by, message, step.call.arguments,
                           tuple(stages))
    stages.append(await _explain_gates(session, step))
    stages.append(StageVerdict("tool", "not run", "explain runs nothing"))
    return Explanation(effective.name, verdict.verdict, verdict.by, None,
                       step.call.arguments, tuple(stages))


def _explain_permission(session: Session, step: Step) -> StageVerdict:
    """The permission step's verdict and every answer it would hear (`permission`)."""
    call, tool = step.call, step.tool
    assert tool is not None
    if session.mode == "plan" and not step.read_only and not \
            _profiles.plan_allows(session.profiles, step, session.host.registry):
        return StageVerdict("permission", "deny", "the session is in plan mode", "mode:plan")
    heard: list[tuple[str, str]] = []
    decisions = session.host.hooks.check_permission(call, tool, session)
    for d in decisions:
        heard.append((f"hook:{d.source}", d.action + (f" {d.rule}" if d.rule else "")
                      + (f" ({d.reason})" if d.reason else "")))
    engine = session.host.permissions
    if engine.rules:
        ruled = engine.decide(call.name, tool, call.arguments, session)
        if ruled is not None:
            heard.append((RULES, f"{ruled.action} {ruled.rule}"
                          + (f" ({ruled.reason})" if ruled.reason else "")))
            decisions.append(attrs.evolve(ruled, source=RULES))
    if decisions:
        decision = next(d for action in ("deny", "ask", "allow") for d in decisions
                        if d.action == action)
        return StageVerdict("permission", decision.action, decision.reason or "",
                            _signature(decision), tuple(heard))
    if step.read_only:
        return StageVerdict("permission", "allow", "a read-only call", "read_only", tuple(heard))
    fallback, because = session.fallback_for(step.fallback or engine.mode)
    detail = f"no rule or hook decides: the fallback is {fallback!r}" + (
        f" ({because})" if because else "")
    return StageVerdict("permission", fallback, detail, f"mode:{fallback}", tuple(heard))


async def _explain_gates(session: Session, step: Step) -> StageVerdict:
    """The host gates for the paths the call would change, checked without a lease."""
    tool = step.tool
    assert tool is not None
    if not tool.mutates_paths:
        return StageVerdict("host gates", "skipped", "the tool changes no path the host gates")

    def check() -> dict[str, Any]:
        return check_paths(session, tool, step.call.arguments, lease=None, dry_run=True)

    try:
        gated = await anyio.to_thread.run_sync(check)
    except ToolError as exc:
        return StageVerdict("host gates", "stopped", exc.to_result().text, exc.signature)
    return StageVerdict("host gates", "passed",
                        ", ".join(sorted({g.path for g in gated.values()})))


def decoded(call: ToolCall) -> ToolCall:
    """The call with its arguments decoded (JSON text as OpenAI sends it), when they decode
    to an object; else as sent (validation then says what they are)."""
    if isinstance(call.arguments, dict):
        return call
    try:
        return ToolCall(call.id, call.name, decode_arguments(call.arguments))
    except NotAnObject:
        return call


# --- 1. resolve -------------------------------------------------------------------------------


def resolve(session: Session, step: Step) -> ToolSpec:
    """The tool the name names in this session (aliases included), which must be on the
    session's surface unless it is an alias."""
    name = step.sent.name
    tool = session.tool(name) if isinstance(name, str) else None
    if tool is None:
        if session.profiles and isinstance(name, str):  # a tool the child's profile left out
            refused = _profiles.left_out(session, name)
            if refused is not None:
                judged(step, "deny", refused.error.signature if refused.error else "profile")
                raise Answered(refused)
        raise Answered(unknown_tool(session, name))
    step.tool = tool
    if tool.visibility != "alias" and not session.is_visible(name):
        message = f'tool "{name}" is not on this session\'s tool list'
        route = session.route
        if route is not None:
            message += "; call it through " + route.hidden_tool.format(name=name)
        raise Answered(ToolResult.failure("unavailable", message, f"unavailable:{name}",
                                          {"executed": False}))
    return tool


def unknown_tool(session: Session, name: Any) -> ToolResult:
    """``unknown tool "<name>"`` with the close names this session can really use: on its
    surface (and aliases), then hidden ones in the words of its proxy."""
    label = name if isinstance(name, str) else repr(name)
    tools = session.available_tools()
    direct = [n for n, s in tools.items() if s.visibility == "alias" or session.is_visible(n)]
    hidden = [n for n in tools if n not in direct]
    route = session.route
    message = f'unknown tool "{label}"' + did_you_mean(
        label, direct, hidden, route.hidden_tool if route is not None else None)
    return ToolResult.failure("unknown_tool", message, f"unknown_tool:{label}",
                              {"executed": False})


# --- 2. validate ------------------------------------------------------------------------------


def validate(session: Session, step: Step, tool: ToolSpec) -> None:
    """The call's arguments must be valid for its tool (`check_arguments`); then the
    effective call is the call with its decoded arguments."""
    session.count("argument_validations")
    arguments, error = check_arguments(session, tool, step.call.arguments, step.sent.id)
    if error is not None:
        raise Answered(error)
    assert arguments is not None
    if arguments is not step.call.arguments:
        step.call = ToolCall(step.sent.id, step.sent.name, arguments)
    step.read_only, step.exclusive = tool.is_read_only(step.call.arguments), tool.exclusive
    step.destructive = tool.is_destructive if tool.destructive is not None else False


def valid_arguments(session: Session, tool: ToolSpec, raw: Any, call_id: str, *,
                    inside: bool = False, via: ToolCall | None = None) -> dict[str, Any]:
    """`check_arguments`, raising `Answered` with the error result."""
    arguments, error = check_arguments(session, tool, raw, call_id, inside=inside, via=via)
    if error is not None:
        raise Answered(error)
    assert arguments is not None
    return arguments


def check_arguments(session: Session, tool: ToolSpec, raw: Any, call_id: str, *,
                    inside: bool = False, via: ToolCall | None = None
                    ) -> tuple[dict[str, Any] | None, ToolResult | None]:
    """``(arguments, None)`` when ``raw`` is valid for ``tool`` (the JSON Schema, then the
    tool's own ``validate``, then ``callgate_validate_arguments``), else ``(None, result)``:
    ``invalid_arguments`` (counted), or ``config_error`` when the schema does not compile
    (counted as skipped). Never coerces (`_validation.check_call`). ``inside``: the
    arguments sit inside a proxy's call (``via``, which the validators see as
    ``call.via``)."""
    compiled = session.host.compiled(tool)
    certain = session.host.certainly_valid(tool)
    if certain is not None and type(raw) is dict and certain(raw) and tool.validate is None \
            and not session.host.hooks.implemented(VALIDATE) and shape_problem(raw) is None:
        return raw, None  # the usual call: certainly valid, and nobody else to ask
    route = session.route
    misplaced = tool.misplaced
    return check_call(
        tool, compiled, raw, count=session.count,
        inside=route.arguments if inside and route is not None else None,
        plugin_violations=lambda args: semantic_violations(session, tool, args, call_id, via),
        misplaced=None if misplaced is None else (lambda args: misplaced(
            ToolContext(session, ToolCall(call_id, tool.name, args, via=via), tool), args)))


def semantic_violations(session: Session, tool: ToolSpec, arguments: dict[str, Any],
                        call_id: str, via: ToolCall | None = None) -> list[Violation]:
    """What the schema cannot say: the tool's ``validate``, then the plugins' hooks."""
    hooks = session.host.hooks
    if tool.validate is None and not hooks.implemented(VALIDATE):
        return []
    call = ToolCall(call_id, tool.name, arguments, via=via)
    out: list[Violation] = []
    if tool.validate is not None:
        out.extend(tool.validate(ToolContext(session, call, tool), arguments))
    out.extend(hooks.validate_arguments(call, tool, session))
    return out


async def proxied(session: Session, step: Step) -> None:
    """What a proxy's call runs: the `Target` its ``resolve_target`` answers (validated here,
    against the target's own schema), or the proxy itself (``None``); a `ToolResult` answer
    is the call's result."""
    tool, call = step.tool, step.call
    assert tool is not None and tool.resolve_target is not None
    ctx = ToolContext(session, call, tool, session.cancel_event)
    resolved = tool.resolve_target(ctx, call.arguments)
    if inspect.isawaitable(resolved):
        resolved = await resolved
    if isinstance(resolved, ToolResult):
        raise Answered(resolved)
    if not isinstance(resolved, Target):  # the proxy's own action (list, search, ...)
        unaliased(session, step)
        return
    step.tool, step.inside, step.fallback = resolved.tool, True, resolved.fallback
    step.call = ToolCall(call.id, resolved.name, resolved.arguments, via=call)
    step.read_only = resolved.is_read_only()
    step.destructive = bool(resolved.destructive if resolved.destructive is not None
                            else resolved.tool.destructive)
    step.exclusive = resolved.tool.exclusive
    if resolved.validate:
        step.call = attrs.evolve(step.call, arguments=valid_arguments(
            session, resolved.tool, resolved.arguments, call.id, inside=True, via=call))


def unaliased(session: Session, step: Step) -> None:
    """An alias runs its primary with mapped arguments (or its own ``execute``); either way
    it is judged under the primary's name (``permission_name``)."""
    tool, call = step.tool, step.call
    assert tool is not None
    if not tool.alias_of:
        return
    if tool.execute is None and tool.alias_args is not None:
        primary = session.host.registry.get(tool.alias_of)
        assert primary is not None
        step.tool = primary
        step.call = ToolCall(call.id, primary.name, tool.alias_args(call.arguments), via=call)
    else:
        step.call = ToolCall(call.id, tool.permission_name, call.arguments, via=call)


def profiled(session: Session, step: Step) -> None:
    """A child's profiles (`_profiles.refusal`) must allow the effective call: its tool,
    the tool a proxy or alias runs, and for a strict read-only child the call's own
    read-only verdict (a shell command classified by its parsed line)."""
    refused = _profiles.refusal(session, step)
    if refused is not None:
        judged(step, "deny", refused.error.signature if refused.error else "profile")
        raise Answered(refused)


# --- 3. pre-tool-use --------------------------------------------------------------------------


async def pre_tool_use(session: Session, step: Step) -> None:
    """``callgate_pre_tool_use``: a `Refuse` blocks the call; a `Replace` runs it with other
    arguments, validated again first (every hook sees the call as it came). An answer may be
    an awaitable of one (a hook that runs a program): it is awaited in its turn; once a
    `Refuse` decides, the answers after it are closed unawaited."""
    tool = step.tool
    assert tool is not None
    answers = session.host.hooks.pre_tool_use(step.call, tool, session)
    if not answers:
        return
    try:
        for index, answer in enumerate(answers):
            if inspect.isawaitable(answer):
                answers[index] = None  # awaited here (it is not closed below)
                answer = await answer
            if isinstance(answer, Refuse):
                raise Answered(blocked(f"blocked: {answer.reason}", f"hook:{answer.source}"))
            if isinstance(answer, Replace):
                step.call = attrs.evolve(step.call, arguments=valid_arguments(
                    session, tool, answer.arguments, step.call.id, inside=step.inside,
                    via=step.call.via))
    finally:
        for answer in answers:
            close = getattr(answer, "close", None)
            if inspect.isawaitable(answer) and close is not None:
                close()  # an answer never awaited (an earlier one decided)


def blocked(message: str, signature: str) -> ToolResult:
    return ToolResult.failure("blocked", message, signature, {"executed": False})


# --- 4. permission ----------------------------------------------------------------------------


def permission(session: Session, step: Step) -> Decision | None:
    """Plan mode, then the ``[permissions]`` rules and ``callgate_check_permission``
    (deny > ask > allow), then the fallback. Returns ``None`` when the call is allowed, the
    ``ask`` decision for the approver (`ask`), or raises with the ``blocked`` result."""
    call, tool = step.call, step.tool
    assert tool is not None
    if session.mode == "plan" and not step.read_only and not \
            _profiles.plan_allows(session.profiles, step, session.host.registry):
        judged(step, "deny", "mode:plan")
        raise Answered(blocked(f"blocked: the session is in plan mode; {call.name} is not "
                               "read-only", "mode:plan"))
    engine = session.host.permissions
    decision = decide(session, call, tool)
    if decision is None:  # the fallback: allow for a read-only call, else the target's or mode
        fallback, because = "allow", None
        if not step.read_only:
            fallback, because = session.fallback_for(step.fallback or engine.mode)
        if fallback == "allow":
            judged(step, "allow", "read_only" if step.read_only else "mode:allow")
            return None
        decision = Decision(fallback, None, because, source=RULES)  # type: ignore[arg-type]
    if decision.action != "ask":
        judged(step, decision.action, _signature(decision))
    if decision.action == "allow":
        return None
    if decision.action == "deny":
        raise Answered(blocked(_denied(session, step, decision), _signature(decision)))
    return decision


def decide(session: Session, call: ToolCall, tool: ToolSpec) -> Decision | None:
    """What ``callgate_check_permission`` and the ``[permissions]`` rules say about a call,
    deny over ask over allow (``Decision.source`` names who said it); ``None`` when nothing
    speaks. Plan mode and the fallback are the caller's."""
    decisions = session.host.hooks.check_permission(call, tool, session)
    engine = session.host.permissions
    if engine.rules:
        ruled = engine.decide(call.name, tool, call.arguments, session)
        if ruled is not None:
            decisions.append(attrs.evolve(ruled, source=RULES))
    if not decisions:
        return None
    return next(d for action in ("deny", "ask", "allow") for d in decisions
                if d.action == action)


def judged(step: Step, decision: str, decided_by: str) -> None:
    """The permission step's verdict, kept for the call's record and span."""
    step.permission, step.decided_by = decision, decided_by
    event(step, "permission", {"decision": decision, "decided_by": decided_by})


def _signature(decision: Decision) -> str:
    """The deciding rule, else the deciding plugin, else the mode (host.md §7)."""
    if decision.rule:
        return f"{decision.action}:{decision.rule}"
    if decision.source != RULES:
        return f"hook:{decision.source}"
    return f"mode:{decision.action}"


def _denied(session: Session, step: Step, decision: Decision) -> str:
    name = step.call.name
    if decision.rule:
        why = f"blocked: {name} is denied by rule {decision.rule}"
        return why + (f" ({decision.reason})" if decision.reason else "")
    if decision.source != RULES:
        return f"blocked: {decision.reason or f'{name} is denied by {decision.source}'}"
    why = f" ({decision.reason})" if decision.reason else ""
    return (f"blocked: {name} is not allowed by any [permissions] rule and the fallback is "
            f'"deny"{why}; allow = [{_wanted(session, step)}] in [permissions] would allow it')


def _wanted(session: Session, step: Step) -> str:
    rules = session.host.permissions.allow_rules_for(step.call.name, step.call.arguments,
                                                     step.tool, session)
    return ", ".join(json.dumps(r) for r in rules)


async def ask(session: Session, step: Step, decision: Decision) -> dict[str, Any] | None:
    """An ``ask``: the preview a mutating tool would make, then the approver's answer.
    Returns the file versions an approved preview was computed on (the gate then insists on
    them), or raises with the ``blocked`` result."""
    call, tool = step.call, step.tool
    assert tool is not None
    signature = _signature(decision)
    preview, versions = None, None
    if tool.preview is not None:
        try:
            preview, versions = await anyio.to_thread.run_sync(_preview, session, step)
        except ToolError as exc:
            raise Answered(exc.to_result()) from None
    answer = session.host.hooks.ask_permission(call, tool, session, preview)
    if inspect.isawaitable(answer):
        answer = await answer
    if answer is None:
        if session.host.permissions.ask_without_approver == "allow":
            judged(step, "ask:allow", f"ask_without_approver ({signature})")
            return versions
        judged(step, "ask:deny", f"no approver ({signature})")
        if decision.rule:  # an ask rule outranks every allow rule
            why = (f"blocked: {call.name} needs approval (rule {decision.rule} in "
                   "[permissions] ask) and no approver is available; nothing was run")
        elif decision.source != RULES:
            why = (f"blocked: {call.name} needs approval (asked by {decision.source}) and no "
                   "approver is available; nothing was run")
        else:
            fallback = f" ({decision.reason})" if decision.reason else ""
            why = (f"blocked: {call.name} needs approval (no [permissions] rule allows it and "
                   f'the fallback is "ask"{fallback}) and no approver is available; '
                   f"allow = [{_wanted(session, step)}] in [permissions] would allow it")
        raise Answered(blocked(why, signature))
    allowed = answer.action == "allow" if isinstance(answer, Decision) else bool(answer)
    judged(step, "ask:allow" if allowed else "ask:deny", f"approver ({signature})")
    if allowed:
        return versions
    reason = answer.reason if isinstance(answer, Decision) and answer.reason else \
        "the approver refused it"
    raise Answered(blocked(f"blocked: {call.name} was not approved: {reason}", signature))


def _preview(session: Session, step: Step) -> tuple[Any, dict[str, Any]]:
    tool = step.tool
    assert tool is not None and tool.preview is not None
    ctx = ToolContext(session, step.call, tool, session.cancel_event, previewing=True)
    ctx.gated = check_paths(session, tool, step.call.arguments, lease=None, dry_run=True)
    versions = {k: version_of(g.stat) for k, g in ctx.gated.items() if g.stat is not None}
    return tool.preview(ctx, step.call.arguments), versions


# --- 5-6. host gates and dispatch ----------------------------------------------------------


@functools.lru_cache(maxsize=512)
def _is_async(function: Callable[..., Any]) -> bool:
    return inspect.iscoroutinefunction(function)


async def dispatch(session: Session, step: Step, expected: dict[str, Any] | None) -> ToolResult:
    """The host gate (confinement, writer lease, stat, observation) for the paths the tool
    mutates, then the tool itself: awaited, inline (``blocking=False``) or in a worker thread
    (one hop for the gate and the tool)."""
    call, tool = step.call, step.tool
    assert tool is not None and tool.execute is not None
    run = tool.execute
    arguments = call.arguments
    ctx = ToolContext(session, call, tool, session.cancel_event, expected_versions=expected)
    lease = WriterLease(()) if tool.mutates_paths else None

    def gate() -> None:
        if lease is not None:
            try:
                ctx.gated = check_paths(session, tool, arguments, lease=lease,
                                        expected_versions=expected)
            except ToolError as exc:
                event(step, "gate", {"passed": False, "signature": exc.signature or ""})
                raise
            event(step, "gate", {"passed": True, "paths": len(ctx.gated)})

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
    result = await _dispatched(session, step, tool, ctx, run, arguments, lease, gate_then_run,
                               gate_then_await)
    if not step.read_only or step.destructive:
        _fact(session, step, ctx, held.get("from", started), held.get("to", time.monotonic()),
              result)
    if ctx.gated and not result.is_error:  # before shaping: a plugin's shaper sees them known
        session.file_changes.publish(after_tool(ctx.gated.values()))
    return result


def _fact(session: Session, step: Step, ctx: ToolContext, started: float, ended: float,
          result: ToolResult) -> None:
    """The writer's execution fact on the host (`_facts`)."""
    profile = session.profile
    error = result.error
    session.host._facts.add(ExecutionFact(
        session=session.id, profile=profile.name if profile is not None else None,
        depth=session.depth, call_id=step.sent.id, tool=str(step.call.name),
        paths=tuple(sorted({g.path for g in ctx.gated.values()})),
        destructive=step.destructive,
        started=started, ended=ended, outcome=error.kind if error is not None else "ok"))


async def _dispatched(session: Session, step: Step, tool: ToolSpec, ctx: ToolContext,
                      run: Callable[..., Any], arguments: Any, lease: WriterLease | None,
                      gate_then_run: Callable[[], Any],
                      gate_then_await: Callable[[], Any]) -> ToolResult:
    try:
        if not tool.blocking and lease is None:  # it never blocks: inline, nothing to walk away
            out = run(ctx, arguments)
            if inspect.isawaitable(out):
                out = await out
        elif _is_async(run):
            out = await run_async(functools.partial(run, ctx, arguments) if lease is None
                                  else gate_then_await, ctx.cancelled, session.cancel_grace_s)
        else:  # one worker-thread hop for gate and tool: a hop costs 0.1-0.2 ms on a busy machine
            out = await run_sync(gate_then_run, ctx.cancelled, session.cancel_grace_s)
    except Abandoned as exc:
        return ToolResult.failure(
            "cancelled", f"{tool.name} was cancelled and {exc}, so the session stopped "
            "waiting for it; it may still be running, and what it has changed is unknown",
            "cancelled", {"abandoned": True})
    except ToolError as exc:
        return exc.to_result()
    except Exception as exc:
        log.debug("tool %s raised", tool.name, exc_info=True)
        return ToolResult.failure("tool_error", f"{tool.name} failed: {exc}")
    if isinstance(out, str):
        return ToolResult.ok(out)
    if not isinstance(out, ToolResult):
        return ToolResult.failure("tool_error", f"{tool.name} failed: it returned "
                                  f"{type(out).__name__}, not a result")
    return out


# --- 6b. after the tool ------------------------------------------------------------------


async def post_tool_use(session: Session, step: Step, result: ToolResult) -> ToolResult:
    """``callgate_post_tool_use``, for a call that was dispatched (the tool ran, or a host
    gate refused it): each answer (a `ToolResult`, or an awaitable of one) replaces the
    result, in call order; every implementation sees the tool's own result. A hook that
    raises leaves the result as it was (logged); a `ToolError` it raises becomes the result."""
    hooks = session.host.hooks
    if not hooks.implemented(POST_TOOL_USE):
        return result
    tool = step.tool
    assert tool is not None
    try:
        answers = hooks.post_tool_use(step.call, tool, result, session)
    except Exception:
        log.exception("a post_tool_use hook failed on call %s", step.sent.id)
        return result
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
    return replaced


# --- 7. shape -------------------------------------------------------------------------------


def shape(session: Session, step: Step, result: ToolResult, tail: Tail) -> ToolResult:
    """``callgate_shape_result`` (for a call that named a tool), then the host's own shaping:
    the whole text kept in the result store, truncation with a marker, and for the first
    result of a batch the storm hint and the session's notices."""
    if step.tool is not None:
        try:
            shaped = session.host.hooks.shape_result(step.call, step.tool, result, session)
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
        extra.extend(session.notices.drain())
    name = step.sent.name or ""
    item = session.results.add(step.sent.id, name, text)
    reserve = sum(len(t) + 2 for t in extra) if extra else 0
    if len(text) + reserve > session.max_chars:
        route = session.route
        shown, meta = truncate(text, max_chars=session.max_chars, reserve=reserve, tool=name,
                               call_id=step.sent.id, item=item,
                               pager=route.result_page if route is not None else None)
        result = result.with_text(shown)
        result.meta.update(meta)
        text = shown
    if extra:
        result = result.with_text("\n\n".join([text, *extra]))
    if step.record is not None:
        seen = result.text if text is not complete or extra else None
        item.end = _record(session, step, result, complete, seen, item.seq)
        session.results.recorded()
        if extra:
            session.journal.notices(extra)
    if step.span is not None:
        effective = step.call.name if step.call.name != step.sent.name else None
        _telemetry.end(step.span, result, tool=effective, permission=step.permission,
                       decided_by=step.decided_by)
    return result


def _record(session: Session, step: Step, result: ToolResult, complete: str,
            shown: str | None, result_seq: int | None) -> CallEnded:
    """The call's record: how it was judged, and its result (after shaping, so what a
    redaction plugin removed is not stored); ``shown`` when the model saw other text."""
    assert step.record is not None
    error = result.error
    effective = step.call.name if isinstance(step.call.name, str) else None
    return session.journal.call_ended(
        step.record, tool=effective if effective != step.sent.name else None,
        outcome=error.kind if error is not None else "ok", is_error=result.is_error,
        signature=error.signature if error is not None else None,
        permission=step.permission, decided_by=step.decided_by, text=complete,
        shown=shown, ended=step.ended or time.time(), result_seq=result_seq or 0)


def valid_utf8(result: ToolResult, text: str) -> tuple[ToolResult, str]:
    """The result (and its ``text``) with any lone surrogate (a file's undecodable byte that
    a tool let through) shown as U+FFFD, as read_file shows it: what the model and the
    replay output get is always valid UTF-8 (issue 26)."""
    safe = display(text)
    error = result.error
    if error is not None and display(error.message) is not error.message:
        result = attrs.evolve(result, error=attrs.evolve(error, message=display(error.message)))
    return (result.with_text(safe), safe) if safe is not text else (result, text)


__all__ = ["Answered", "Explanation", "StageVerdict", "Step", "check_arguments", "explain",
           "run_batch", "run_call"]
