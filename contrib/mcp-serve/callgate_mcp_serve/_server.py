"""The MCP server: one callgate session behind the SDK's low-level ``Server``.

- ``tools/list`` is the session's surface in its ``mcp`` rendering (host.md §2):
  names, descriptions, input schemas and ``readOnlyHint``/``destructiveHint``.
- ``tools/call`` runs the call as a batch of one through the whole pipeline, in
  the one session this connection owns, so observations, jobs and goals carry
  from call to call. The low-level server does not validate arguments; the
  host does, and every failure (invalid arguments, refusals, tool errors) is a
  ``CallToolResult`` with ``isError`` and the host's feedback text, never a
  protocol error.
- ``ask`` permissions become an elicitation (see `_approval`). On a handshake-era
  connection the server sends ``elicitation/create`` while the call waits; on a
  2026-07-28 connection, which forbids server-initiated requests, the call
  answers ``InputRequiredResult`` and resumes when the client retries with the
  user's answer and the echoed ``requestState``.
- The connection's lifespan owns the session: when the client goes away the
  session is closed (its jobs killed, the MCP servers it started stopped) and its
  record committed to the session store. With ``session_name`` the connection
  joins the stored session of that name (created on first use), so a client that
  reconnects for every call still edits what it read in an earlier connection.
- ``prompts/list`` / ``prompts/get`` are the slash commands and skills, through the
  session's ``slash_command`` call (see `_prompts`); offered only when the commands plugin
  is loaded.
- ``plan_mode=True`` starts the session in plan mode and lists ``exit_plan_mode``,
  through which the model asks the user to approve its plan (see `_plan`).
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import logging
import math
import os
import secrets
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.abc
import attrs
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from callgate import Host, ImageBlock, Session, ToolCall, ToolResult, __version__
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server

from . import _plan, _progress, _prompts, _resources, _structured
from ._approval import (
    APPROVAL_KEY,
    DEFAULT_APPROVAL_TIMEOUT_S,
    REQUEST_CANCELLED,
    TIMED_OUT,
    ApprovalChannel,
    current_channel,
)
from ._turn import Turn

log = logging.getLogger("callgate.mcp_serve")

INSTRUCTIONS = (
    "These tools act on one workspace through callgate: every call is validated and "
    "permission-checked, and a file must be read (any window) before it is edited. Errors "
    "come back as results that say what to change."
)

PLAN_INSTRUCTIONS = (
    " The session is in plan mode: only read-only tools run. Explore, then present your plan "
    "with exit_plan_mode; the user's approval ends plan mode.")

#: How long the user may take to answer an approval before the call is refused as not
#: approved (``[serve] approval_timeout_s`` sets it; the constructor's argument wins).
APPROVAL_TIMEOUT_S = DEFAULT_APPROVAL_TIMEOUT_S


def client_can_elicit(ctx: ServerRequestContext[Any, Any]) -> bool:
    """Whether the client declared form elicitation (an empty ``elicitation`` means form)."""
    caps = ctx.session.client_capabilities
    if caps is None or caps.elicitation is None:
        return False
    return caps.elicitation.form is not None or caps.elicitation.url is None


def to_mcp_result(host: Host, result: ToolResult, *, max_chars: int | None = None,
                  output_schema: Any = None) -> types.CallToolResult:
    """The result as the SDK's model, blocks in their order, with the error's kind in
    ``_meta``. A proxied MCP answer whose text the host left as it was goes out as its
    original blocks (embedded resources, resource links, audio). Its data (a proxied
    server's, or a tool's with an ``output_schema``) is ``structuredContent``, never more than
    the text the model may read: clipped to ``max_chars`` (default ``[results] max_chars``)
    or dropped when the host changed the text (`_structured`)."""
    rendered: dict[str, Any] = {"content": _ordered_blocks(result), "isError": result.is_error}
    meta = result.meta or {}
    original = meta.get("mcp_content")
    if isinstance(original, list) and original and \
            meta.get("mcp_text_sha256") == hashlib.sha256(result.text.encode()).hexdigest():
        rendered["content"] = original
    budget = max_chars if max_chars is not None else int(host.config("results")["max_chars"])
    data, notes = _structured.structured_content(result, budget, output_schema)
    if data is not None:
        rendered["structuredContent"] = data
    if notes:
        rendered["_meta"] = dict(notes)
    if result.error is not None:
        rendered.setdefault("_meta", {})["callgate/error"] = {
            "kind": result.error.kind, "signature": result.error.signature}
    try:
        return types.CallToolResult.model_validate(rendered, by_name=False)
    except ValueError:  # a block the SDK's model refuses: the host's own rendering
        rendered["content"] = host.render_result(result, "mcp")["content"]
        return types.CallToolResult.model_validate(rendered, by_name=False)


def _ordered_blocks(result: ToolResult) -> list[dict[str, Any]]:
    """Text and image blocks in the order the tool returned them (empty text dropped)."""
    blocks: list[dict[str, Any]] = []
    for block in result.content:
        if isinstance(block, ImageBlock):
            blocks.append({"type": "image", "mimeType": block.media_type,
                           "data": base64.b64encode(block.data).decode("ascii")})
        elif block.text:
            blocks.append({"type": "text", "text": block.text})
    return blocks or [{"type": "text", "text": ""}]


def _text_error(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)],
                                is_error=True)


@attrs.define(eq=False)
class _Running:
    """One ``tools/call`` in flight: its events (an approval question, then the result)."""

    call: ToolCall
    events_in: MemoryObjectSendStream[tuple[str, Any]]
    events: MemoryObjectReceiveStream[tuple[str, Any]]
    answers_in: MemoryObjectSendStream[tuple[str, Mapping[str, Any] | None]]
    answers: MemoryObjectReceiveStream[tuple[str, Mapping[str, Any] | None]]
    token: str = attrs.field(factory=lambda: secrets.token_urlsafe(24))
    scope: anyio.CancelScope = attrs.field(factory=anyio.CancelScope)
    started: bool = False
    #: the client cancelled the request: a pending approval ends refused, a late one is ignored
    cancelled: bool = False
    #: the scope of the approval the call is waiting for, if any
    asking: anyio.CancelScope | None = None

    @classmethod
    def new(cls, call: ToolCall) -> _Running:
        ev_in, ev = anyio.create_memory_object_stream[tuple[str, Any]](math.inf)
        ans_in, ans = anyio.create_memory_object_stream[tuple[str, Mapping[str, Any] | None]](1)
        return cls(call, ev_in, ev, ans_in, ans)


class CallgateMCP:
    """Serve a booted host's tools to one MCP client connection.

    ``server`` is the SDK's low-level ``Server``; run it on any transport
    (``serve_stdio`` does stdio). The session opens when the connection starts
    (``server.lifespan``) and closes when it ends. Boot the host with
    `ElicitationApprover` among its plugins for ``ask`` to reach the client.
    """

    def __init__(self, host: Host, workspace: str | os.PathLike[str], *,
                 session_dir: str | os.PathLike[str] | None = None,
                 session_name: str | None = None,
                 approval_timeout: float | None = None, name: str = "callgate",
                 plan_mode: bool = False, principal: str | None = None) -> None:
        if not os.path.isdir(workspace):
            raise FileNotFoundError(f"workspace {os.fspath(workspace)} is not a directory")
        self.host = host
        self.plan_mode = plan_mode
        self.workspace = os.fspath(workspace)
        self.session_dir = session_dir
        #: the stored session every connection naming it joins (``serve --session NAME``)
        self.session_name = session_name
        #: who the session belongs to (``None``: the operating-system user): its session
        #: tools see only this principal's recorded sessions
        self.principal = principal
        # call ids stay unique within a joined session, whichever connection made them
        self._id_prefix = f"mcp-{secrets.token_hex(3)}-" if session_name else "mcp-"
        #: seconds an approval may stay unanswered before the call is refused
        self.approval_timeout: float = approval_timeout if approval_timeout is not None else \
            float(host.config("serve").get("approval_timeout_s", APPROVAL_TIMEOUT_S))
        self.session: Session | None = None
        self._tasks: anyio.abc.TaskGroup | None = None
        self._turn = Turn()  # one batch at a time, in arrival order; lent while asking
        self._waiting: dict[str, _Running] = {}
        self._ids = itertools.count(1)
        prompts: dict[str, Any] = {}
        if _prompts.available(host.registry.names()):
            prompts = {"on_list_prompts": self._list_prompts, "on_get_prompt": self._get_prompt}
        self.server: Server[CallgateMCP] = Server(
            name, version=__version__,
            instructions=INSTRUCTIONS + (PLAN_INSTRUCTIONS if plan_mode else ""),
            lifespan=self._lifespan, get_tool_input_schema=self._input_schema,
            on_list_tools=self._list_tools, on_call_tool=self._call_tool,
            on_list_resources=self._list_resources,
            on_list_resource_templates=self._list_resource_templates,
            on_read_resource=self._read_resource, **prompts)

    # --- lifespan -----------------------------------------------------------------

    @asynccontextmanager
    async def _lifespan(self, _server: Server[Any]) -> AsyncIterator[CallgateMCP]:
        session = self.host.open_session(self.workspace, session_dir=self.session_dir,
                                         origin="human", name=self.session_name,
                                         principal=self.principal)
        if self.plan_mode:
            session.set_mode("plan")
        self.session = session
        try:
            async with anyio.create_task_group() as tasks:
                self._tasks = tasks
                try:
                    yield self
                finally:
                    session.cancel()
                    tasks.cancel_scope.cancel()
        finally:
            self._tasks = None
            self._waiting.clear()
            with anyio.CancelScope(shield=True):
                await session.close()

    async def aclose(self) -> None:
        """Close the session now (idempotent): cancel its batch, kill its jobs, stop its servers."""
        if self.session is not None and not self.session.closed:
            self.session.cancel()
            await self.session.close()

    def _live_session(self) -> Session:
        if self.session is None or self._tasks is None or self.session.closed:
            raise RuntimeError("the callgate session is not open (the server is not running)")
        return self.session

    # --- tools/list -----------------------------------------------------------------

    def _input_schema(self, name: str) -> Mapping[str, Any] | None:
        """A listed tool's input schema (the SDK checks 2026-07-28 ``Mcp-Param`` headers
        against it without rendering the whole ``tools/list``)."""
        session = self.session
        if session is None or session.closed or not session.is_visible(name):
            return None
        spec = session.tool(name)
        if spec is None:
            return None
        schema: Mapping[str, Any] = self.host.render_tools([spec], "mcp")[0]["inputSchema"]
        return schema

    async def _list_tools(self, ctx: ServerRequestContext[Any, Any],
                          params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        listed = self._live_session().surface("mcp")
        if self.plan_mode:
            listed = [*listed, _plan.tool_definition()]
        tools = [types.Tool.model_validate(t, by_name=False) for t in listed]
        return types.ListToolsResult(tools=tools)

    # --- resources: the session's stored results, read-only ----------------------------

    async def _list_resources(self, ctx: ServerRequestContext[Any, Any],
                              params: types.PaginatedRequestParams | None
                              ) -> types.ListResourcesResult:
        return _resources.list_results(self._live_session())

    async def _list_resource_templates(self, ctx: ServerRequestContext[Any, Any],
                                       params: types.PaginatedRequestParams | None
                                       ) -> types.ListResourceTemplatesResult:
        return _resources.templates()

    async def _read_resource(self, ctx: ServerRequestContext[Any, Any],
                             params: types.ReadResourceRequestParams
                             ) -> types.ReadResourceResult:
        session = self._live_session()
        return await anyio.to_thread.run_sync(_resources.read_result, session, str(params.uri))

    # --- prompts: the slash commands and skills, through slash_command ------------------

    async def _list_prompts(self, ctx: ServerRequestContext[Any, Any],
                            params: types.PaginatedRequestParams | None
                            ) -> types.ListPromptsResult:
        return _prompts.listed(await self._slash_command(ctx, {}))

    async def _get_prompt(self, ctx: ServerRequestContext[Any, Any],
                          params: types.GetPromptRequestParams) -> types.GetPromptResult:
        arguments = _prompts.get_arguments(params)
        return _prompts.expanded(params.name, await self._slash_command(ctx, arguments))

    async def _slash_command(self, ctx: ServerRequestContext[Any, Any],
                             arguments: dict[str, Any]) -> types.CallToolResult:
        """``slash_command`` run like a ``tools/call``: in its turn, through the pipeline, an
        ``ask`` answered by elicitation while the request waits (a client that cannot be
        asked now gets the no-approver rule)."""
        session = self._live_session()
        running = _Running.new(_prompts.call(session, f"{self._id_prefix}{next(self._ids)}",
                                             arguments))
        elicit = self._elicit_for(ctx, running) if ctx.session.can_send_request else None
        assert self._tasks is not None
        self._tasks.start_soon(self._run, running, ApprovalChannel(session, elicit), None,
                               name=f"callgate {_prompts.TOOL}")
        outcome = await self._outcome(running)
        assert isinstance(outcome, types.CallToolResult)  # no InputRequired without ask_later
        return outcome

    # --- tools/call -----------------------------------------------------------------

    async def _call_tool(self, ctx: ServerRequestContext[Any, Any],
                         params: types.CallToolRequestParams
                         ) -> types.CallToolResult | types.InputRequiredResult:
        if params.request_state is not None:
            running = self._waiting.pop(params.request_state, None)
            if running is None or running.call.name != params.name:
                return _text_error(
                    f"the approval request for {params.name} expired or is unknown; nothing "
                    "was run. Call the tool again.")
            answer = (params.input_responses or {}).get(APPROVAL_KEY)
            if isinstance(answer, types.ElicitResult):
                running.answers_in.send_nowait((answer.action, answer.content))
            else:
                running.answers_in.send_nowait(("cancel", None))
        else:
            running = _Running.new(ToolCall(f"{self._id_prefix}{next(self._ids)}", params.name,
                                            params.arguments))
            channel = ApprovalChannel(self._live_session(), self._elicit_for(ctx, running))
            assert self._tasks is not None
            if self.plan_mode and params.name == _plan.EXIT_PLAN_TOOL:
                self._tasks.start_soon(self._run_plan_exit, running, channel,
                                       name=f"callgate {params.name}")
            else:
                self._tasks.start_soon(self._run, running, channel, _progress.reporter(ctx),
                                       name=f"callgate {params.name}")
        return await self._outcome(running)

    def _elicit_for(self, ctx: ServerRequestContext[Any, Any], running: _Running) -> Any:
        if not client_can_elicit(ctx):
            return None
        if ctx.session.can_send_request:  # handshake era: ask while the call waits
            async def ask_now(message: str, schema: dict[str, Any]) -> Any:
                result = await ctx.session.elicit_form(message, schema,
                                                       related_request_id=ctx.request_id)
                return result.action, result.content
            return self._bound(running, ask_now)

        async def ask_later(message: str, schema: dict[str, Any]) -> Any:
            # 2026-07-28: hand the question to the request handler, which answers
            # InputRequiredResult; the client's retry delivers the answer here.
            running.events_in.send_nowait(("ask", (message, schema)))
            try:
                return await running.answers.receive()
            finally:
                self._waiting.pop(running.token, None)  # a late retry finds nothing
        return self._bound(running, ask_later)

    def _bound(self, running: _Running, ask: Any) -> Any:
        """``ask`` bound to its request: it lends the turn while the user decides, ends
        refused at ``approval_timeout`` or when the client cancels the request (`_outcome`),
        and an answer arriving after either is ignored."""
        async def elicit(message: str, schema: dict[str, Any]) -> Any:
            if running.cancelled:
                return REQUEST_CANCELLED, None
            answer: Any = (TIMED_OUT, None)
            async with self._turn.lent():
                with anyio.move_on_after(self.approval_timeout) as scope:
                    running.asking = scope
                    try:
                        answer = await ask(message, schema)
                    finally:
                        running.asking = None
            if running.cancelled:
                return REQUEST_CANCELLED, None
            if scope.cancelled_caught:
                log.warning("no approval for %s within %ss", running.call.name,
                            self.approval_timeout)
            return answer
        return elicit

    async def _run(self, running: _Running, channel: ApprovalChannel,
                   progress: _progress.Reporter | None = None) -> None:
        current_channel.set(channel)
        session = self._live_session()
        with running.scope:  # cancelled while it waits for its turn: never runs
            try:
                async with self._turn, _progress.forwarding(progress, session):
                    running.started = True
                    [result] = await session.run_batch([running.call])
            except Exception as exc:  # the pipeline never raises for a tool: a host fault
                log.exception("running %s failed", running.call.name)
                result = ToolResult.failure("tool_error", f"{running.call.name} failed: {exc}")
            running.events_in.send_nowait(("done", result))

    async def _run_plan_exit(self, running: _Running, channel: ApprovalChannel) -> None:
        """``exit_plan_mode``: ask the user to approve the plan; only a yes ends plan mode."""
        session = self._live_session()
        with running.scope:
            async with self._turn:
                running.started = True
                result = await self._plan_exit(session, running.call, channel)
                result.call_id, result.name = running.call.id, running.call.name
            running.events_in.send_nowait(("done", result))

    async def _plan_exit(self, session: Session, call: ToolCall,
                         channel: ApprovalChannel) -> ToolResult:
        plan = _plan.plan_argument(call.arguments if call.arguments is not None else {})
        if plan is None:
            return _plan.invalid_plan_call()
        if session.mode != "plan":
            return _plan.not_in_plan_mode()
        if channel.elicit is None:
            if self.host.permissions.ask_without_approver != "allow":
                return _plan.no_approver()
            why = None
        else:
            try:
                answer = await channel.elicit(_plan.approval_message(plan), _plan.APPROVE_SCHEMA)
            except Exception as exc:  # the client failed to answer: the plan stays unapproved
                log.warning("plan approval failed: %s", exc)
                answer = None
            why = _plan.decide(answer)
        if why is not None:
            return _plan.refused(why)
        session.set_mode("default")
        return _plan.approved()

    async def _outcome(self, running: _Running
                       ) -> types.CallToolResult | types.InputRequiredResult:
        try:
            kind, payload = await running.events.receive()
        except anyio.get_cancelled_exc_class():
            # The client cancelled the request: a call still waiting for its turn never
            # runs; one waiting for its approval is refused (the question withdrawn, a late
            # answer ignored); a running one is cancelled cooperatively (ctx.cancelled).
            running.cancelled = True
            if running.asking is not None:
                running.asking.cancel()
            elif not running.started:
                running.scope.cancel()
            elif self.session is not None:
                self.session.cancel()
            raise
        if kind == "ask":
            message, schema = payload
            self._waiting[running.token] = running
            request = types.ElicitRequest(params=types.ElicitRequestFormParams(
                message=message, requested_schema=schema))
            return types.InputRequiredResult(input_requests={APPROVAL_KEY: request},
                                             request_state=running.token)
        session = self.session
        spec = session.tool(running.call.name) if session is not None and \
            isinstance(running.call.name, str) else None
        return to_mcp_result(self.host, payload,
                             max_chars=session.max_chars if session is not None else None,
                             output_schema=spec.output_schema if spec is not None else None)


__all__ = ["APPROVAL_TIMEOUT_S", "CallgateMCP", "client_can_elicit", "to_mcp_result"]
