"""One session's hooks at work: each event's input built, the matching handlers run together,
their outcomes combined, and what they did kept for the call's record.

Combining (Claude Code's rules, stricter where they are loose): every matching handler runs
(in parallel); any block wins (exit 2, ``deny``, ``decision: block``, ``continue: false``,
and a failure of a ``fail_closed`` hook); ``updatedInput`` s apply in the order the hooks were
defined and the result is validated again by the pipeline; ``ask`` beats ``allow``; context
from every hook is delivered. A hook's ``allow`` joins callgate's permission contest like any
rule (deny > ask > allow): it never lifts a deny rule.
"""

from __future__ import annotations

import copy
import logging
import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import anyio
import attrs
from callgate import Decision, ToolCall, ToolResult
from callgate.hookspecs import Refuse, Replace
from callgate.rules import RuleError, RuleSet

from . import _names as names
from ._output import Outcome, interpret
from ._runner import Run, run_handler
from ._setup import SOURCE, HostHooks, ImportedRules, handlers_of, modes_for
from ._sources import Found, Handler, ImportedRule, Note
from ._translate import translate_claude

if TYPE_CHECKING:
    from callgate import SessionView, ToolSpec

log = logging.getLogger("callgate.hooks")
#: The session state namespace the runs are recorded under (read by ``callgate ui``).
NAMESPACE = "hooks"
#: How much of a hook's stdout/stderr the record keeps.
KEPT = 4000


@attrs.define
class CallHooks:
    """What the hooks did to one call so far: a permission answer for the permission step,
    context for the model, and every run for the record."""

    decision: Decision | None = None
    context: list[str] = attrs.field(factory=list)
    runs: list[dict[str, Any]] = attrs.field(factory=list)
    stop: str | None = None
    system_messages: list[str] = attrs.field(factory=list)
    errors: list[str] = attrs.field(factory=list)


@attrs.frozen
class PromptVerdict:
    """`SessionHooks.user_prompt_submit`'s answer: whether the prompt is ``blocked`` (and
    why: shown to the user, not the model), and ``context`` to add for the model."""

    blocked: bool
    reason: str | None
    context: tuple[str, ...]


class SessionHooks:
    """``session.extension(callgate_hooks.HOOK_RUNNER)``: this session's hooks and
    imported rules."""

    def __init__(self, host_hooks: HostHooks, session: SessionView) -> None:
        self.host_hooks = host_hooks
        self.session = session
        workspace = host_hooks.for_workspace(session.workspace.root)
        self.notes: list[Note] = []
        rules_found = Found()
        rules_found.extend(host_hooks.user)
        rules_found.extend(workspace)
        fallback, because, plan, extra = modes_for(rules_found, self.notes)
        self.fallback = fallback
        self.rules = ImportedRules(session.host, [*rules_found.rules, *extra], self.notes)
        self.handlers: list[Handler] = handlers_of(host_hooks.user, workspace)
        self._conditions: dict[Handler, RuleSet | None] = {}
        self._calls: dict[str, CallHooks] = {}
        self._ran_once: set[Handler] = set()
        self._start: Any = None
        if fallback is not None:
            session.tighten_fallback(fallback, because or "an imported mode")
        if plan:
            session.set_mode("plan")
        self.permission_mode = "plan" if plan else {"ask": "default", "deny": "dontAsk"}.get(
            fallback or "", "default")

    # --- selection -----------------------------------------------------------------------

    def matching(self, event: str, subject: str | None, call: ToolCall | None = None,
                 tool: ToolSpec | None = None) -> list[Handler]:
        out = []
        for handler in self.handlers:
            if handler.event != event or not handler.matches(subject):
                continue
            if handler.once and handler in self._ran_once:
                continue
            if handler.condition is not None and call is not None and tool is not None and \
                    not self._condition_holds(handler, call, tool):
                continue
            out.append(handler)
        return out

    def _condition_holds(self, handler: Handler, call: ToolCall, tool: ToolSpec) -> bool:
        """Claude Code's ``if``: a permission rule the call must match for the hook to run
        (translated as a deny rule is: it matches at least what Claude Code's does)."""
        if handler not in self._conditions:
            rules = RuleSet(self.session.host)
            try:
                for text in translate_claude(ImportedRule(
                        "deny", handler.condition or "", handler.origin, handler.level,
                        "claude")).rules:
                    rules.add("deny", text)
            except RuleError:
                rules = None  # type: ignore[assignment]
            self._conditions[handler] = rules
        rules = self._conditions[handler]
        return rules is None or rules.decide(call, tool, self.session) is not None

    # --- input -----------------------------------------------------------------------------

    def base(self, event: str) -> dict[str, Any]:
        """The fields every event's input has."""
        return {"session_id": self.session.id, "transcript_path": "",
                "cwd": self.session.workspace.root, "permission_mode": self._mode(),
                "hook_event_name": event}

    def _mode(self) -> str:
        return "plan" if self.session.mode == "plan" else self.permission_mode

    def tool_input(self, event: str, call: ToolCall) -> dict[str, Any]:
        name, tool_input = names.to_claude(call.name, call.arguments,
                                           self.session.workspace.root)
        return {**self.base(event), "tool_name": name, "tool_input": tool_input,
                "tool_use_id": call.id}

    # --- running -----------------------------------------------------------------------------

    async def run(self, event: str, handlers: Sequence[Handler], payload: dict[str, Any],
                  state: CallHooks | None = None
                  ) -> list[tuple[Handler, Outcome, dict[str, Any]]]:
        """Run ``handlers`` together (a background one is started and not waited for) and
        read each outcome; every run is recorded (``state``, then the session)."""
        waited = [h for h in handlers if not h.background]
        for handler in handlers:
            if handler.once:
                self._ran_once.add(handler)
            if handler.background:
                self._background(event, handler, payload)
        runs: list[Run | None] = [None] * len(waited)

        async def one(index: int, handler: Handler) -> None:
            runs[index] = await anyio.to_thread.run_sync(
                run_handler, handler, copy.deepcopy(payload), self.session,
                abandon_on_cancel=True)

        if len(waited) == 1:
            await one(0, waited[0])
        elif waited:
            async with anyio.create_task_group() as tg:
                for index, handler in enumerate(waited):
                    tg.start_soon(one, index, handler)
        out = []
        for handler, done in zip(waited, runs, strict=True):
            assert done is not None
            outcome = interpret(event, done.exit_code, done.stdout, done.stderr,
                                failure=done.failure)
            out.append((handler, outcome, self._note_run(event, handler, done, outcome, state)))
        return out

    def run_sync(self, event: str, handlers: Sequence[Handler],
                 payload: dict[str, Any]) -> list[tuple[Handler, Outcome]]:
        """`run` for a worker thread (session end): one after another."""
        out = []
        for handler in handlers:
            done = run_handler(handler, copy.deepcopy(payload), self.session)
            outcome = interpret(event, done.exit_code, done.stdout, done.stderr,
                                failure=done.failure)
            out.append((handler, outcome))
            self._note_run(event, handler, done, outcome, None)
        return out

    def _background(self, event: str, handler: Handler, payload: dict[str, Any]) -> None:
        def go() -> None:
            try:
                done = run_handler(handler, copy.deepcopy(payload), self.session)
                outcome = interpret(event, done.exit_code, done.stdout, done.stderr,
                                    failure=done.failure)
                self._note_run(event, handler, done, outcome, None)
            except Exception:
                log.exception("a background hook failed: %s", handler.label)

        threading.Thread(target=go, name="callgate-hook", daemon=True).start()

    def _note_run(self, event: str, handler: Handler, done: Run, outcome: Outcome,
                  state: CallHooks | None) -> dict[str, Any]:
        record = {"event": event, "hook": handler.label, "source": handler.source,
                  "level": handler.level, "exit_code": done.exit_code,
                  "duration_ms": done.duration_ms, "at": time.time(),
                  "fail_closed": handler.fail_closed, **outcome.summary()}
        if done.stdout:
            record["stdout"] = done.stdout[:KEPT]
        if done.stderr:
            record["stderr"] = done.stderr[:KEPT]
        if outcome.error is not None:
            log.warning("%s failed: %s", handler.label, outcome.error)
        if state is not None:
            state.runs.append(record)
        else:
            self.record([record], key=f"{event}:{time.time():.6f}")
        return record

    def record(self, runs: list[dict[str, Any]], key: str) -> None:
        """Keep ``runs`` in the session's record (``callgate ui`` shows them)."""
        if not runs:
            return
        try:
            storage = self.session.storage
            previous = storage.get(NAMESPACE, key) or []
            storage.put(NAMESPACE, key, [*previous, *runs])
        except Exception:  # the record is best effort; the call goes on
            log.warning("could not record the hook runs of %s", key, exc_info=True)

    # --- per call ------------------------------------------------------------------------------

    def state(self, call_id: str) -> CallHooks:
        found = self._calls.get(call_id)
        if found is None:
            found = self._calls[call_id] = CallHooks()
        return found

    def peek(self, call_id: str) -> CallHooks | None:
        return self._calls.get(call_id)

    def pop(self, call_id: str) -> CallHooks | None:
        return self._calls.pop(call_id, None)

    async def pre_tool_use(self, call: ToolCall, tool: ToolSpec) -> Refuse | Replace | None:
        """PreToolUse (and PreCompact for ``compress``): a block is a `Refuse`, an
        ``updatedInput`` a `Replace`, an allow or ask kept for the permission step."""
        state = self.state(call.id)
        name = names.claude_name(call.name)
        answer: Refuse | Replace | None = None
        if call.name == "compress":
            answer = await self._pre_compact(call, state)
            if isinstance(answer, Refuse):
                return answer
        handlers = self.matching("PreToolUse", name, call, tool)
        if not handlers:
            return answer
        outcomes = await self.run("PreToolUse", handlers, self.tool_input("PreToolUse", call),
                                  state)
        blocks, arguments = [], call.arguments
        decision: Decision | None = None
        for handler, outcome, _record in outcomes:
            self._common(state, outcome)
            if outcome.error is not None:
                state.errors.append(f"{handler.label}: {outcome.error}")
                if handler.fail_closed:
                    blocks.append((handler, f"a PreToolUse hook failed ({outcome.error}) and is "
                                            "fail_closed"))
                continue
            if outcome.context:
                state.context.append(f"[PreToolUse hook context] {outcome.context}")
            if outcome.blocked is not None or outcome.stop is not None:
                blocks.append((handler, outcome.blocked or outcome.stop))
                continue
            if outcome.updated_input is not None:
                arguments = names.from_claude(call.name, outcome.updated_input, arguments,
                                              self.session.workspace.root)
            if outcome.decision in ("allow", "ask"):
                candidate = Decision(outcome.decision, None,  # type: ignore[arg-type]
                                     outcome.reason or f"{handler.label} says {outcome.decision}",
                                     source=handler.source)
                if decision is None or (decision.action == "allow" and candidate.action == "ask"):
                    decision = candidate
        if blocks:
            handler, reason = blocks[0]
            more = "; ".join(r for _h, r in blocks[1:])
            return Refuse(reason + (f" (and: {more})" if more else ""), source=handler.source)
        state.decision = decision
        if arguments is not call.arguments and arguments != call.arguments:
            return Replace(arguments, source=SOURCE)
        return answer

    async def _pre_compact(self, call: ToolCall, state: CallHooks) -> Refuse | None:
        handlers = self.matching("PreCompact", "manual")
        if not handlers:
            return None
        focus = call.arguments.get("focus") if isinstance(call.arguments, dict) else None
        payload = {**self.base("PreCompact"), "trigger": "manual",
                   "custom_instructions": focus or ""}
        for handler, outcome, _record in await self.run("PreCompact", handlers, payload, state):
            if outcome.blocked is not None:
                return Refuse(outcome.blocked, source=handler.source)
            if outcome.error is not None and handler.fail_closed:
                return Refuse(f"a PreCompact hook failed ({outcome.error}) and is fail_closed",
                              source=handler.source)
        return None

    def _common(self, state: CallHooks, outcome: Outcome) -> None:
        if outcome.system_message:
            state.system_messages.append(outcome.system_message)
        if outcome.stop is not None and state.stop is None:
            state.stop = outcome.stop

    def permission(self, call: ToolCall, tool: ToolSpec) -> list[Decision]:
        """What the hooks (their allow or ask) and the imported rules say about the call."""
        out = list(self.rules.decide(call, tool, self.session))
        state = self.peek(call.id)
        if state is not None and state.decision is not None:
            out.append(state.decision)
        return out

    async def permission_request(self, call: ToolCall, tool: ToolSpec) -> Decision | None:
        """PermissionRequest: a hook's allow or deny answers the ask (the first that answers,
        deny over allow); ``None`` leaves it to the approver."""
        handlers = self.matching("PermissionRequest", names.claude_name(call.name), call, tool)
        if not handlers:
            return None
        state = self.state(call.id)
        payload = {**self.tool_input("PermissionRequest", call), "permission_suggestions": []}
        answers: list[Decision] = []
        for handler, outcome, _record in await self.run("PermissionRequest", handlers, payload,
                                                        state):
            self._common(state, outcome)
            if outcome.error is not None:
                state.errors.append(f"{handler.label}: {outcome.error}")
                if handler.fail_closed:
                    answers.append(Decision("deny", reason=f"a PermissionRequest hook failed "
                                            f"({outcome.error}) and is fail_closed",
                                            source=handler.source))
                continue
            if outcome.blocked is not None:
                answers.append(Decision("deny", reason=outcome.blocked, source=handler.source))
            elif outcome.decision == "deny":
                answers.append(Decision("deny", reason=outcome.reason or "denied by a "
                                        "PermissionRequest hook", source=handler.source))
            elif outcome.decision == "allow":
                if outcome.updated_input is not None and names.from_claude(
                        call.name, outcome.updated_input, call.arguments,
                        self.session.workspace.root) != call.arguments:
                    # the approval was for other arguments: callgate cannot swap them in at
                    # this step, so it is no approval of this call
                    state.errors.append(f"{handler.label}: an allow with updatedInput is not "
                                        "supported at the permission step; not applied")
                    if handler.fail_closed:
                        answers.append(Decision("deny", reason="a PermissionRequest hook "
                                                "approved other arguments", source=handler.source))
                    continue
                answers.append(Decision("allow", reason=outcome.reason or "allowed by a "
                                        "PermissionRequest hook", source=handler.source))
        for action in ("deny", "allow"):
            for answer in answers:
                if answer.action == action:
                    return answer
        return None

    async def post_tool_use(self, call: ToolCall, tool: ToolSpec,
                            result: ToolResult) -> ToolResult | None:
        """PostToolUse (a success) or PostToolUseFailure (an error): feedback and context
        added, ``updatedToolOutput`` checked and applied; a failing ``fail_closed`` hook
        withholds the output."""
        event = "PostToolUseFailure" if result.is_error else "PostToolUse"
        handlers = self.matching(event, names.claude_name(call.name), call, tool)
        if not handlers:
            return None
        state = self.state(call.id)
        root = self.session.workspace.root
        payload = self.tool_input(event, call)
        if result.is_error:
            payload["error"] = result.text
            payload["is_interrupt"] = bool(result.error and result.error.kind == "cancelled")
        else:
            payload["tool_response"] = names.tool_response(call.name, call.arguments,
                                                           result.text, False, result.meta, root)
        text = result.text
        replaced = False
        withheld: str | None = None
        feedback: list[str] = []
        for handler, outcome, record in await self.run(event, handlers, payload, state):
            self._common(state, outcome)
            error = outcome.error
            if error is None and outcome.has_updated_output:
                if event == "PostToolUseFailure":
                    error = "updatedToolOutput on PostToolUseFailure is not Claude Code's shape"
                else:
                    try:
                        text = names.updated_output_text(call.name, outcome.updated_output)
                        replaced = True
                    except ValueError as exc:
                        error = str(exc)
                        record["error"] = error
            if error is not None:
                state.errors.append(f"{handler.label}: {error}")
                log.warning("%s: %s", handler.label, error)
                if handler.fail_closed:
                    withheld = f"{handler.label} failed ({error}) and is fail_closed"
                continue
            if outcome.feedback:
                feedback.append(f"[{event} hook feedback] {outcome.feedback}")
            if outcome.context:
                state.context.append(f"[{event} hook context] {outcome.context}")
        if withheld is not None:
            return ToolResult.failure(
                "blocked", f"blocked: {call.name} ran, but its output is withheld: {withheld}",
                f"hook:{SOURCE}", {"executed": True})
        if not replaced and not feedback:
            return None
        new = result.with_text("\n\n".join([text, *feedback]) if feedback else text)
        return new

    def shaped(self, call: ToolCall, result: ToolResult) -> ToolResult | None:
        """The model's result with the hooks' context appended and every run in ``meta``;
        the runs go to the session record."""
        state = self.pop(call.id)
        if state is None or not (state.runs or state.context):
            return None
        out = result.with_text("\n\n".join([result.text, *state.context])) if state.context \
            else result.with_text(result.text)
        out = attrs.evolve(out, meta={**result.meta})
        out.meta["hooks"] = [{k: v for k, v in run.items() if k not in ("stdout", "stderr")}
                             for run in state.runs]
        if state.stop is not None:
            out.meta["continue"] = False
            out.meta["stop_reason"] = state.stop
        if state.system_messages:
            out.meta["system_messages"] = list(state.system_messages)
        if state.errors:
            out.meta["hook_errors"] = list(state.errors)
        self.record(state.runs, key=call.id)
        return out

    # --- the session ---------------------------------------------------------------------

    def session_start(self) -> None:
        """SessionStart (SubagentStart for a child): started in the background; their
        context reaches the model with the next result, as a notice."""
        session = self.session
        child = session.parent is not None
        event = "SubagentStart" if child else "SessionStart"
        subject = self._agent_type() if child else ("resume" if session.resumed else "startup")
        handlers = self.matching(event, subject)
        if not handlers:
            return
        payload = self.base(event)
        if child:
            payload.update({"agent_id": session.id, "agent_type": subject})
        else:
            payload["source"] = subject
        def go() -> None:
            texts = []
            for _handler, outcome in self.run_sync(event, handlers, payload):
                if outcome.context:
                    texts.append(f"[{event} hook context] {outcome.context}")
            if texts:
                session.notices.put(f"hooks:{event}", "\n".join(texts))

        self._start = threading.Thread(target=go, name="callgate-session-start-hooks",
                                       daemon=True)
        self._start.start()

    async def started(self) -> None:
        """Wait for the SessionStart hooks (bounded by their timeouts), so their context is
        delivered with the first result."""
        thread = self._start
        if thread is not None and thread.is_alive():
            await anyio.to_thread.run_sync(thread.join, abandon_on_cancel=True)
        self._start = None

    def session_end(self) -> None:
        session = self.session
        child = session.parent is not None
        event = "SubagentStop" if child else "SessionEnd"
        subject = self._agent_type() if child else "other"
        handlers = self.matching(event, subject)
        if not handlers:
            return
        payload = self.base(event)
        if child:
            payload.update({"agent_id": session.id, "agent_type": subject,
                            "stop_hook_active": False, "agent_transcript_path": ""})
        else:
            payload["reason"] = "other"
        self.run_sync(event, handlers, payload)

    def _agent_type(self) -> str:
        profile = self.session.profile
        return profile.name if profile is not None and profile.name else "general-purpose"

    async def user_prompt_submit(self, prompt: str) -> PromptVerdict:
        """UserPromptSubmit, for an integrator that has the user's prompt: ``blocked`` (the
        prompt must not be processed; ``reason`` is for the user) and ``context`` to add."""
        handlers = self.matching("UserPromptSubmit", None)
        if not handlers:
            return PromptVerdict(False, None, ())
        payload = {**self.base("UserPromptSubmit"), "prompt": prompt}
        blocked: str | None = None
        context: list[str] = []
        runs: list[dict[str, Any]] = []
        state = CallHooks(runs=runs)
        for handler, outcome, _record in await self.run("UserPromptSubmit", handlers, payload,
                                                        state):
            if outcome.error is not None and handler.fail_closed:
                blocked = blocked or f"a UserPromptSubmit hook failed ({outcome.error}) and is " \
                                     "fail_closed"
            elif outcome.blocked is not None or outcome.stop is not None:
                blocked = blocked or outcome.blocked or outcome.stop
            elif outcome.context:
                context.append(outcome.context)
        self.record(runs, key=f"UserPromptSubmit:{time.time():.6f}")
        return PromptVerdict(blocked is not None, blocked, tuple(context) if not blocked else ())


__all__ = ["NAMESPACE", "CallHooks", "PromptVerdict", "SessionHooks"]
