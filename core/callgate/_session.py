"""A session: one conversation's state, and the batch pipeline that runs its calls.

The pipeline order is part of the contract (host.md §3): resolve, validate,
pre-tool-use hooks, permission, host gates, dispatch, result shaping, and the
storm breaker over the whole batch. Each call gets exactly one result, in call
order; one failing call never skips its siblings.
"""

from __future__ import annotations

import inspect
import json
import logging
import os
import shutil
import tempfile
import threading
import uuid
from collections import Counter, deque
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import anyio
import attrs

from ._context import ToolContext
from ._errors import ToolError
from ._files_api import FileAccess
from ._gate import check_paths
from ._lease import WriterLease
from ._model import Decision, Refuse, Replace, TextBlock, ToolCall, ToolResult, Violation
from ._notices import NoticeQueue
from ._observations import ObservationLedger, version_of
from ._results import ResultStore, truncate
from ._spec import Target, ToolSpec
from ._storm import StormBreaker
from ._suggest import did_you_mean
from ._textio import display
from ._validation import check_call
from ._worker import DEFAULT_GRACE_S, Abandoned, CancelEvent, run_async, run_sync
from ._workspace import Workspace

if TYPE_CHECKING:
    from ._host import Host

log = logging.getLogger("callgate")

ORIGINS = ("none", "human", "automatic")
MODES = ("default", "plan")
COUNTERS = ("argument_validations", "argument_failures", "skipped", "remote_dispatches",
            "storm_hints")


@attrs.define
class _Prepared:
    """A call after resolution and validation (steps 1-2), ready to schedule."""

    call: ToolCall
    spec: ToolSpec | None = None
    args: dict[str, Any] | None = None
    target: Target | None = None
    result: ToolResult | None = None
    read_only: bool = False
    exclusive: bool = False


class _FifoLock:
    """An event-loop lock that serves waiters in arrival order and costs nothing uncontended.

    Only touched from the session's event loop, so plain attributes suffice.
    """

    def __init__(self) -> None:
        self._held = False
        self._waiters: deque[anyio.Event] = deque()

    async def __aenter__(self) -> None:
        if not self._held and not self._waiters:
            self._held = True
            return
        event = anyio.Event()
        self._waiters.append(event)
        try:
            await event.wait()
        except BaseException:
            if event in self._waiters:
                self._waiters.remove(event)
            elif event.is_set():  # handed over to us while we were being cancelled
                self._release()
            raise

    async def __aexit__(self, *exc: object) -> None:
        self._release()

    def _release(self) -> None:
        if self._waiters:
            self._waiters.popleft().set()  # ownership passes directly to the next waiter
        else:
            self._held = False


def _blocked(message: str, signature: str) -> ToolResult:
    return ToolResult.failure("blocked", message, signature, {"executed": False})


class Session:
    """One conversation with the host: its workspace, ledger, results, notices and counters.

    Open with ``host.open_session(...)``; use as ``async with`` or call
    ``await session.close()`` (idempotent). Batches run one at a time, in
    arrival order.
    """

    def __init__(self, host: Host, workspace: str | os.PathLike[str],
                 session_dir: str | os.PathLike[str] | None = None,
                 origin: str | None = None, parent: Session | None = None) -> None:
        self._extensions: dict[str, Any] = {}
        self.host = host
        self.id = uuid.uuid4().hex
        self.parent = parent
        ws_cfg = host.config("workspace")
        self.workspace = Workspace(workspace, ws_cfg.get("extra_roots", ()),
                                   ws_cfg.get("extra_read_roots", ()))
        self.directory: str | None = None
        if session_dir is not None:
            self.directory = os.path.abspath(os.fspath(session_dir))
            os.makedirs(self.directory, exist_ok=True)
        self._scratch: str | None = None
        origin = origin or "none"
        if origin not in ORIGINS:
            raise ValueError(f"origin must be one of {', '.join(ORIGINS)}")
        self.turn_origin = origin
        self.mode = "default"
        self.ledger = ObservationLedger()
        self.files = FileAccess(self)
        results_cfg = host.config("results")
        self.max_chars: int = results_cfg["max_chars"]
        self.results = ResultStore(
            os.path.join(self.directory, "results") if self.directory else None,
            results_cfg["store_max_bytes"],
        )
        self.notices = NoticeQueue()
        self.storm = StormBreaker()
        self._counters: Counter[str] = Counter({name: 0 for name in COUNTERS})
        self._counter_lock = threading.Lock()
        self._batch_lock = _FifoLock()
        self._cancel = CancelEvent()
        #: seconds a cancelled tool has to stop on its own before the batch walks away
        self.cancel_grace_s = DEFAULT_GRACE_S
        self._children: list[Session] = []
        self._closed = False
        self._tools = {spec.name: spec for spec in host.registry.tools()
                       if self._is_available(spec)}
        self._visible = [name for name in host.visible_names() if name in self._tools]
        self._visible_set = set(self._visible)
        if parent is not None:
            parent._children.append(self)
        host.pm.hook.callgate_session_start(session=self)

    # --- plugin extensions (session.goals, session.todos, ...) ---------------------

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        extensions = self.__dict__.get("_extensions")
        factories = self.host.registry.session_extensions
        if extensions is None or name not in factories:
            raise AttributeError(f"session has no attribute {name!r}")
        if name not in extensions:
            extensions[name] = factories[name](self)
        return extensions[name]

    def _is_available(self, spec: ToolSpec) -> bool:
        if spec.available is None:
            return True
        try:
            return bool(spec.available(self))
        except Exception:
            log.exception("available() of tool %s raised; treating it as unavailable", spec.name)
            return False

    # --- state the integrator reads ---------------------------------------------------

    def counters(self) -> dict[str, int]:
        with self._counter_lock:
            return dict(self._counters)

    def count(self, name: str, n: int = 1) -> None:
        """Add ``n`` to a counter (plugins count e.g. ``remote_dispatches``)."""
        with self._counter_lock:
            self._counters[name] += n

    def observations(self) -> dict[str, Any]:
        return self.ledger.paths()

    def tool_names(self) -> list[str]:
        """The visible surface's tool names, in surface order (fixed at session open)."""
        return list(self._visible)

    def available_tools(self) -> dict[str, ToolSpec]:
        """Every tool callable in this session (visible, hidden and aliases), by name."""
        return dict(self._tools)

    def is_visible(self, name: str) -> bool:
        return name in self._visible_set

    def surface(self, provider: str | None = None) -> list[Any]:
        specs = [self._tools[n] for n in self._visible]
        return self.host.render_tools(specs, provider)

    def scratch_dir(self) -> str:
        """The session directory, or a private temp directory removed at close."""
        if self.directory:
            return self.directory
        if self._scratch is None:
            self._scratch = tempfile.mkdtemp(prefix="callgate-session-")
        return self._scratch

    # --- turns and modes ---------------------------------------------------

    def begin_turn(self, origin: str = "human") -> None:
        """Declare a new turn: ``"human"`` (a direct human message) or ``"automatic"``."""
        if origin not in ("human", "automatic"):
            raise ValueError('origin must be "human" or "automatic"')
        self.turn_origin = origin
        self.host.pm.hook.callgate_turn_start(session=self, origin=origin)

    def set_mode(self, mode: str) -> None:
        """``"plan"`` blocks every call that is not read-only; ``"default"`` ends it."""
        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}")
        self.mode = mode

    def cancel(self) -> None:
        """Cancel the running batch: running tools see ``ctx.cancelled``; the rest don't start."""
        self._cancel.set()

    # --- children and closing ---------------------------------------------------

    def open_child(self, workspace: str | os.PathLike[str] | None = None,
                   session_dir: str | os.PathLike[str] | None = None) -> Session:
        """A subagent's session: same host and workspace, an empty observation ledger."""
        return Session(self.host, workspace or self.workspace.root, session_dir, None, self)

    @property
    def closed(self) -> bool:
        return self._closed

    async def close(self) -> None:
        """End the session's jobs, servers and watchers; idempotent."""
        if self._closed:
            return
        self._closed = True
        self._cancel.set()
        for child in list(self._children):
            await child.close()
        await anyio.to_thread.run_sync(self._end)

    def _end(self) -> None:
        try:
            self.host.pm.hook.callgate_session_end(session=self)
        except Exception:
            log.exception("a session_end hook failed")
        self.results.close()
        self.workspace.close()  # the held roots go once no call is using them
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None

    async def __aenter__(self) -> Session:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # --- the batch pipeline ---------------------------------------------------

    async def run(self, call: ToolCall) -> ToolResult:
        """Run one call as a batch of one."""
        [result] = await self.run_batch([call])
        return result

    async def run_batch(self, calls: Sequence[ToolCall]) -> list[ToolResult]:
        """Run one model turn's calls; returns one result per call, in call order."""
        if self._closed:
            raise RuntimeError("the session is closed")
        async with self._batch_lock:
            self._cancel = CancelEvent()  # a fresh one: an abandoned call keeps seeing its cancel
            prepared = [await self._prepare_safely(c) for c in calls]
            results: list[ToolResult | None] = [p.result for p in prepared]
            await self._schedule(prepared, results)
            final = [r for r in results if r is not None]
            for p, r in zip(prepared, final, strict=True):
                r.call_id, r.name = p.call.id, p.call.name
            hint = self.storm.observe(final, [p.call.arguments for p in prepared])
            if hint:
                self.count("storm_hints")
            return [self._shape(p, r, i == 0, hint) for i, (p, r) in
                    enumerate(zip(prepared, final, strict=True))]

    async def _schedule(self, prepared: list[_Prepared],
                        results: list[ToolResult | None]) -> None:
        """Read-only calls run concurrently; a mutation or an exclusive call waits for every
        earlier call and holds back every later one."""
        group: list[int] = []
        for i, p in enumerate(prepared):
            if p.result is not None:
                continue
            if p.read_only and not p.exclusive:
                group.append(i)
                continue
            await self._run_group(group, prepared, results)
            group = []
            await self._run_one(i, prepared, results)
        await self._run_group(group, prepared, results)

    async def _run_group(self, group: list[int], prepared: list[_Prepared],
                         results: list[ToolResult | None]) -> None:
        if len(group) == 1:
            await self._run_one(group[0], prepared, results)
        elif group:
            async with anyio.create_task_group() as tg:
                for i in group:
                    tg.start_soon(self._run_one, i, prepared, results)

    async def _run_one(self, i: int, prepared: list[_Prepared],
                       results: list[ToolResult | None]) -> None:
        if self._cancel.is_set():
            results[i] = ToolResult.failure("cancelled", "cancelled before it started; nothing "
                                            "was run", "cancelled", {"executed": False})
            return
        results[i] = await self._execute_safely(prepared[i])

    async def _prepare_safely(self, call: ToolCall) -> _Prepared:
        try:
            return await self._prepare(call)
        except Exception as exc:  # a core bug must not take the batch down
            log.exception("preparing call %s failed", call.id)
            return _Prepared(call, result=ToolResult.failure(
                "tool_error", f"{call.name} failed: {exc}"))

    async def _execute_safely(self, p: _Prepared) -> ToolResult:
        try:
            return await self._execute(p)
        except ToolError as exc:
            return exc.to_result()
        except Exception as exc:
            log.exception("call %s (%s) failed", p.call.id, p.call.name)
            return ToolResult.failure("tool_error", f"{p.call.name} failed: {exc}")

    # steps 1-2 --------------------------------------------------------------------------

    async def _prepare(self, call: ToolCall) -> _Prepared:
        spec = self._tools.get(call.name) if isinstance(call.name, str) else None
        if spec is None:
            return _Prepared(call, result=self._unknown(call.name))
        if spec.visibility != "alias" and call.name not in self._visible_set:
            msg = (f'tool "{call.name}" is not on this session\'s tool list; call it through '
                   f'use_capability with capability_id "tool:{call.name}"')
            if "use_capability" not in self._tools:
                msg = f'tool "{call.name}" is not on this session\'s tool list'
            return _Prepared(call, spec, result=ToolResult.failure(
                "unavailable", msg, f"unavailable:{call.name}", {"executed": False}))
        self.count("argument_validations")
        args, error = self.check_arguments(spec, call.arguments, call_id=call.id)
        if error is not None:
            return _Prepared(call, spec, result=error)
        assert args is not None
        p = _Prepared(call, spec, args, read_only=spec.is_read_only(args),
                      exclusive=spec.exclusive)
        if spec.resolve_target is not None:
            ctx = ToolContext(self, ToolCall(call.id, call.name, args), spec, self._cancel)
            resolved = spec.resolve_target(ctx, args)
            if inspect.isawaitable(resolved):
                resolved = await resolved
            if isinstance(resolved, ToolResult):
                p.result = resolved
            elif isinstance(resolved, Target):
                p.target = resolved
                p.read_only = resolved.is_read_only()
                p.exclusive = resolved.tool.exclusive
        return p

    def _unknown(self, name: Any) -> ToolResult:
        label = name if isinstance(name, str) else repr(name)
        callable_names = [n for n, s in self._tools.items()
                          if n in self._visible_set or s.visibility == "alias"]
        hidden = [n for n, s in self._tools.items() if n not in callable_names
                  and s.visibility != "alias"] if "use_capability" in self._tools else []
        msg = f'unknown tool "{label}"' + did_you_mean(label, callable_names, hidden)
        return ToolResult.failure("unknown_tool", msg, f"unknown_tool:{label}",
                                  {"executed": False})

    def check_arguments(self, spec: ToolSpec, raw: Any, *, inside_capability: bool = False,
                        call_id: str = "") -> tuple[dict[str, Any] | None, ToolResult | None]:
        """Validate ``raw`` against ``spec`` (schema, then plugin validators).

        Returns ``(arguments, None)`` when valid, else ``(None, error_result)``;
        the error is ``invalid_arguments`` (counted) or ``config_error`` when the
        schema itself does not compile (counted as skipped). Never coerces.
        """
        return check_call(
            spec, self.host.compiled(spec), raw, count=self.count,
            inside_capability=inside_capability,
            plugin_violations=lambda args: self._plugin_violations(spec, args, call_id),
            misplaced=spec.misplaced and (lambda args: spec.misplaced(  # type: ignore[misc]
                args, ToolContext(self, ToolCall(call_id, spec.name, args), spec))))

    def _plugin_violations(self, spec: ToolSpec, args: dict[str, Any],
                           call_id: str) -> list[Violation]:
        out: list[Violation] = []
        for _plugin, found in self.host.each_hook("callgate_validate_arguments",
                                                  call=ToolCall(call_id, spec.name, args),
                                                  tool=spec, session=self):
            out.extend(found)
        return out

    # steps 3-6 ----------------------------------------------------------------------------

    async def _execute(self, p: _Prepared) -> ToolResult:
        assert p.spec is not None and p.args is not None
        spec, args = p.spec, p.args
        fallback: str | None = None
        inside = False
        if p.target is not None:
            target = p.target
            spec, args, fallback, inside = target.tool, target.arguments, target.fallback, True
            name, read_only = target.name, target.is_read_only()
            if target.validate:
                checked, error = self.check_arguments(spec, args, inside_capability=True,
                                                      call_id=p.call.id)
                if error is not None:
                    return error
                assert checked is not None
                args = checked
        else:
            name, read_only = spec.permission_name, p.read_only
            if spec.alias_of and spec.execute is None and spec.alias_args is not None:
                primary = self.host.registry.get(spec.alias_of)
                assert primary is not None
                spec, args = primary, spec.alias_args(args)
        call = ToolCall(p.call.id, name, args)

        for plugin, outcome in self.host.each_hook("callgate_pre_tool_use", call=call,
                                                   tool=spec, session=self):
            if isinstance(outcome, Refuse):
                return _blocked(f"blocked: {outcome.reason}", f"hook:{plugin}")
            if isinstance(outcome, Replace):
                checked, error = self.check_arguments(spec, outcome.arguments,
                                                      inside_capability=inside,
                                                      call_id=p.call.id)
                if error is not None:
                    return error
                assert checked is not None
                args = checked
                call = ToolCall(p.call.id, name, args)

        verdict = await self._permission(call, spec, args, read_only, fallback)
        if isinstance(verdict, ToolResult):
            return verdict
        return await self._dispatch(spec, args, call, verdict)

    async def _permission(self, call: ToolCall, spec: ToolSpec, args: dict[str, Any],
                          read_only: bool, fallback: str | None
                          ) -> ToolResult | dict[str, Any] | None:
        """Step 4. Returns a blocked result, or the versions an approved preview saw."""
        if self.mode == "plan" and not read_only:
            return _blocked(f"blocked: the session is in plan mode; {call.name} is not "
                            "read-only", "mode:plan")
        decisions: list[tuple[str, Decision]] = [
            (plugin, d) for plugin, d in self.host.each_hook(
                "callgate_check_permission", call=call, tool=spec, session=self)
            if isinstance(d, Decision)
        ]
        chosen: tuple[str, Decision] | None = None
        for action in ("deny", "ask", "allow"):
            chosen = next(((pl, d) for pl, d in decisions if d.action == action), None)
            if chosen:
                break
        engine = self.host.permissions
        if chosen is None:
            action = "allow" if read_only else (fallback or engine.mode)
            chosen = ("callgate.permissions", Decision(action, None))  # type: ignore[arg-type]
        plugin, decision = chosen
        sig_rule = (f"{decision.action}:{decision.rule}" if decision.rule
                    else f"hook:{plugin}" if plugin != "callgate.permissions"
                    else f"mode:{decision.action}")
        if decision.action == "allow":
            return None
        if decision.action == "deny":
            if decision.rule:
                why = f"blocked: {call.name} is denied by rule {decision.rule}"
                if decision.reason:
                    why += f" ({decision.reason})"
            elif plugin != "callgate.permissions":
                why = f"blocked: {decision.reason or f'{call.name} is denied by {plugin}'}"
            else:
                wanted = ", ".join(json.dumps(r) for r in
                                   engine.allow_rules_for(call.name, args, spec, self))
                why = (f"blocked: {call.name} is not allowed by any [permissions] rule and the "
                       f'fallback is "deny"; allow = [{wanted}] in [permissions] would allow it')
            return _blocked(why, sig_rule)
        return await self._ask(call, spec, args, decision, sig_rule, plugin)

    async def _ask(self, call: ToolCall, spec: ToolSpec, args: dict[str, Any],
                   decision: Decision, sig_rule: str, plugin: str = "callgate.permissions"
                   ) -> ToolResult | dict[str, Any] | None:
        preview, versions = None, None
        if spec.preview is not None:
            try:
                preview, versions = await anyio.to_thread.run_sync(
                    self._preview, spec, args, call)
            except ToolError as exc:
                return exc.to_result()
        answer = self.host.pm.hook.callgate_ask_permission(
            call=call, tool=spec, session=self, preview=preview)
        if inspect.isawaitable(answer):
            answer = await answer
        if answer is None:
            if self.host.permissions.ask_without_approver == "allow":
                return versions
            engine = self.host.permissions
            if decision.rule:  # an ask rule outranks every allow rule
                return _blocked(
                    f"blocked: {call.name} needs approval (rule {decision.rule} in [permissions] "
                    "ask) and no approver is available; nothing was run", sig_rule)
            if plugin != "callgate.permissions":
                return _blocked(
                    f"blocked: {call.name} needs approval (asked by {plugin}) and no approver "
                    "is available; nothing was run", sig_rule)
            wanted = ", ".join(json.dumps(r) for r in
                               engine.allow_rules_for(call.name, args, spec, self))
            return _blocked(
                f"blocked: {call.name} needs approval (no [permissions] rule allows it and the "
                'fallback is "ask") and no approver is available; '
                f"allow = [{wanted}] in [permissions] would allow it",
                sig_rule)
        allowed = answer.action == "allow" if isinstance(answer, Decision) else bool(answer)
        if allowed:
            return versions
        reason = answer.reason if isinstance(answer, Decision) and answer.reason else \
            "the approver refused it"
        return _blocked(f"blocked: {call.name} was not approved: {reason}", sig_rule)

    def _preview(self, spec: ToolSpec, args: dict[str, Any],
                 call: ToolCall) -> tuple[Any, dict[str, Any]]:
        ctx = ToolContext(self, call, spec, self._cancel, previewing=True)
        ctx.gated = check_paths(self, spec, args, lease=None, dry_run=True)
        versions = {k: version_of(g.stat) for k, g in ctx.gated.items() if g.stat is not None}
        assert spec.preview is not None
        return spec.preview(ctx, args), versions

    async def _dispatch(self, spec: ToolSpec, args: dict[str, Any], call: ToolCall,
                        expected: dict[str, Any] | None) -> ToolResult:
        """Steps 5-6: the host gate under a writer lease, then the tool itself."""
        ctx = ToolContext(self, call, spec, self._cancel, expected_versions=expected)
        fn = spec.execute
        assert fn is not None
        lease = WriterLease(()) if spec.mutates_paths else None

        def gate() -> None:
            if lease is not None:
                ctx.gated = check_paths(self, spec, args, lease=lease,
                                        expected_versions=expected)

        def gate_then_run() -> Any:
            try:
                gate()
                return fn(ctx, args)
            finally:  # in the worker: an abandoned call keeps its paths until it ends
                if lease is not None:
                    lease.release()

        async def gate_then_await() -> Any:
            try:
                if lease is not None:
                    await anyio.to_thread.run_sync(gate)
                return await fn(ctx, args)
            finally:
                if lease is not None:
                    lease.release()

        try:
            if inspect.iscoroutinefunction(fn):
                out = await run_async(gate_then_await, ctx.cancelled, self.cancel_grace_s)
            else:  # one worker-thread hop for both: a hop costs 0.1-0.2 ms on a busy machine
                out = await run_sync(gate_then_run, ctx.cancelled, self.cancel_grace_s)
        except Abandoned as exc:
            return ToolResult.failure(
                "cancelled", f"{spec.name} was cancelled and {exc}, so the session stopped "
                "waiting for it; it may still be running, and what it has changed is unknown",
                "cancelled", {"abandoned": True})
        except ToolError as exc:
            return exc.to_result()
        except Exception as exc:
            log.debug("tool %s raised", spec.name, exc_info=True)
            return ToolResult.failure("tool_error", f"{spec.name} failed: {exc}")
        if isinstance(out, str):
            return ToolResult.ok(out)
        if not isinstance(out, ToolResult):
            return ToolResult.failure("tool_error", f"{spec.name} failed: it returned "
                                      f"{type(out).__name__}, not a result")
        return out

    # step 7 ----------------------------------------------------------------------------------

    def _shape(self, p: _Prepared, result: ToolResult, first: bool,
               hint: str | None) -> ToolResult:
        tool = p.spec
        if tool is not None:
            try:
                for _plugin, outcome in self.host.each_hook(
                        "callgate_shape_result", call=p.call, tool=tool, result=result,
                        session=self):
                    if isinstance(outcome, ToolResult):
                        outcome.call_id, outcome.name = result.call_id, result.name
                        result = outcome
            except Exception:  # a broken shaper must not cost the batch its results
                log.exception("a shape_result hook failed on call %s", p.call.id)
        result = _valid_utf8(result)
        tail: list[str] = []
        if first:
            if hint:
                tail.append(hint)
            tail.extend(self.notices.drain())
        text = result.text
        item = self.results.add(p.call.id, p.call.name or "", text)
        reserve = sum(len(t) + 2 for t in tail)
        if len(text) + reserve > self.max_chars:
            shown, meta = truncate(text, max_chars=self.max_chars, reserve=reserve,
                                   tool=p.call.name or "", call_id=p.call.id, item=item,
                                   capability="use_capability" in self._tools)
            result = result.with_text(shown)
            result.meta.update(meta)
            text = shown
        if tail:
            result = result.with_text("\n\n".join([text, *tail]))
        return result


def _valid_utf8(result: ToolResult) -> ToolResult:
    """The result with any lone surrogate (a file's undecodable byte that a tool let
    through) shown as U+FFFD, as read_file shows it: what the model and the replay
    output get is always valid UTF-8 (issue 26)."""
    text = result.text
    safe = display(text)
    error = result.error
    if error is not None and display(error.message) is not error.message:
        result = attrs.evolve(result, error=attrs.evolve(error, message=display(error.message)))
    return result.with_text(safe) if safe is not text else result


def text_of(blocks: Iterable[Any]) -> str:
    return "\n".join(b.text for b in blocks if isinstance(b, TextBlock))
