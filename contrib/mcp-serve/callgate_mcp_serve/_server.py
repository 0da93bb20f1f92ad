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
- ``pair=True`` (``serve --pair``) makes the connection a planner/executor pair
  (`callgate.host.SessionPair`): calls run in the planner until the user approves the plan
  the model hands over with ``exit_plan_mode``, then in the executor (see `_pair`).
- ``workspace_from_roots`` (``serve --workspace-from-roots``): the workspace is the one root
  the client lists (``roots/list``), asked when a request first needs the session and again
  before the next batch after ``notifications/roots/list_changed``; a new root closes the
  session and opens one there, on a host booted for it (its ``callgate.toml`` read). No root
  or several are refused with an error that says so.
- What a proxied MCP server asks while a call runs (elicitation, sampling) and its log
  messages reach this call's client (`_relay`); ``logging/setLevel`` sets the least severe
  ``notifications/message`` level sent; ``completion/complete`` completes a prompt's
  argument as workspace paths and the result template's refs (`_complete`); callgate issues
  no cursors, so a list request that brings one is refused (-32602).
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import itertools
import logging
import os
import secrets
import warnings
from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager, nullcontext
from typing import Any
from urllib.parse import unquote, urlparse

import anyio
import anyio.abc
import anyio.lowlevel
import attrs
import callgate_providers as providers
import mcp_types as types
from callgate import Host, ToolCall, ToolResult, __version__
from callgate.host import Session, SessionPair
from callgate.results import ImageBlock
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from . import _complete, _pair, _plan, _progress, _prompts, _relay, _resources, _structured
from ._approval import (
    APPROVAL_KEY,
    REQUEST_CANCELLED,
    TIMED_OUT,
    ApprovalChannel,
    current_channel,
)
from ._turn import Turn
from .config import DEFAULT_APPROVAL_TIMEOUT_S

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
    rendered, _own = _rendered(host, result, max_chars, output_schema)
    try:
        return types.CallToolResult.model_validate(rendered, by_name=False)
    except ValueError:  # a block the SDK's model refuses: the host's own rendering
        rendered["content"] = providers.render_result(result, "mcp")["content"]
        return types.CallToolResult.model_validate(rendered, by_name=False)


def wire_result(host: Host, result: ToolResult, *, max_chars: int | None = None,
                output_schema: Any = None) -> dict[str, Any] | types.CallToolResult:
    """`to_mcp_result` for a ``tools/call`` answer: when the blocks are callgate's own
    (text and images, always valid), the result's wire fields as a plain dict, which the SDK
    validates once on its way out (its per-version sieve) and sends as it would the model;
    building the model here first cost a validation and a dump per call that the sieve then
    repeated. A proxied server's original blocks still go through the model, whose refusal
    falls back to the host's rendering. The bytes sent are the same either way."""
    rendered, own = _rendered(host, result, max_chars, output_schema)
    if own:
        # the model's default, which 2026-07-28 requires on the wire (older versions drop it)
        rendered["resultType"] = "complete"
        return rendered
    try:
        return types.CallToolResult.model_validate(rendered, by_name=False)
    except ValueError:  # a block the SDK's model refuses: the host's own rendering
        rendered["content"] = providers.render_result(result, "mcp")["content"]
        return types.CallToolResult.model_validate(rendered, by_name=False)


def _rendered(host: Host, result: ToolResult, max_chars: int | None, output_schema: Any
              ) -> tuple[dict[str, Any], bool]:
    """The ``CallToolResult`` fields (by alias) of ``result``, and whether its blocks are the
    ones callgate builds (not a proxied server's originals)."""
    meta = result.meta or {}
    original = meta.get("mcp_content")
    own = not (isinstance(original, list) and original and meta.get("mcp_text_sha256")
               == hashlib.sha256(result.text.encode()).hexdigest())
    rendered: dict[str, Any] = {"content": _ordered_blocks(result) if own else original,
                                "isError": result.is_error}
    budget = max_chars if max_chars is not None else int(host.config("results")["max_chars"])
    data, notes = _structured.structured_content(result, budget, output_schema)
    if data is not None:
        rendered["structuredContent"] = data
    if notes:
        rendered["_meta"] = dict(notes)
    if result.error is not None:
        rendered.setdefault("_meta", {})["callgate/error"] = {
            "kind": result.error.kind, "signature": result.error.signature}
    return rendered, own


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


class RootsError(Exception):
    """The client's roots do not name one workspace (``--workspace-from-roots``)."""


#: the default least severe log level sent before the client sets one
DEFAULT_LOG_LEVEL = "info"
#: every app serving a session, so a log line between calls finds its client
_APPS: dict[int, CallgateMCP] = {}


def app_of(session: Any) -> CallgateMCP | None:
    """The app serving ``session`` or the session its family started from."""
    while session is not None:
        app = _APPS.get(id(session))
        if app is not None and app.session is session:
            return app
        session = getattr(session, "parent", None)
    return None


def _no_cursor(params: types.PaginatedRequestParams | None) -> None:
    """callgate answers every list in one page and issues no cursor: any cursor is invalid."""
    if params is not None and params.cursor is not None:
        raise MCPError(code=types.INVALID_PARAMS,
                       message="invalid cursor: callgate answers every list in one page and "
                               "issues no cursors; ask again without one")


def root_workspace(listed: types.ListRootsResult) -> str:
    """The one local directory the client's roots name (`RootsError` otherwise)."""
    roots = list(listed.roots)
    if not roots:
        raise RootsError("the MCP client lists no root: open one project folder in it, or "
                         "run callgate serve with --workspace DIR")
    if len(roots) > 1:
        shown = ", ".join(str(r.uri) for r in roots[:5])
        raise RootsError(f"the MCP client lists {len(roots)} roots ({shown}): callgate works "
                         "in one workspace; open one project folder, or run callgate serve "
                         "with --workspace DIR")
    uri = urlparse(str(roots[0].uri))
    path = unquote(uri.path)
    if uri.scheme != "file" or uri.netloc not in ("", "localhost") or not path or \
            not os.path.isdir(path):
        raise RootsError(f"the MCP client's root {roots[0].uri} is not a local directory; "
                         "run callgate serve with --workspace DIR")
    return os.path.realpath(path)


def _text_error(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)],
                                is_error=True)


@asynccontextmanager
async def _nothing() -> AsyncIterator[None]:
    yield


class _Inbox:
    """Items for one waiting task, in the order they came: what a memory object stream did
    here, without its shared state, its two stream objects and its checkpoint per receive
    (a call used two of them per ``tools/call``, most never carrying more than one item)."""

    __slots__ = ("_items", "_ready")

    def __init__(self) -> None:
        self._items: deque[Any] = deque()
        self._ready: anyio.Event | None = None

    def put(self, item: Any) -> None:
        """Hand ``item`` over (any task of the loop, never blocks)."""
        self._items.append(item)
        if self._ready is not None:
            self._ready.set()

    async def get(self) -> Any:
        """The next item, waiting for it if there is none yet."""
        while not self._items:
            self._ready = anyio.Event()
            await self._ready.wait()
        return self._items.popleft()


@attrs.define(eq=False)
class _Running:
    """One ``tools/call`` in flight: its events (an approval question, then the result)."""

    call: ToolCall
    events: _Inbox = attrs.field(factory=_Inbox)
    #: the client's answer to what the call asked (2026-07-28: the retry's input response);
    #: made when the call first asks
    answers: _Inbox | None = None
    #: the ``requestState`` a 2026-07-28 retry echoes; made when the call first asks
    token: str | None = None
    scope: anyio.CancelScope = attrs.field(factory=anyio.CancelScope)
    started: bool = False
    #: the client cancelled the request: a pending approval ends refused, a late one is ignored
    cancelled: bool = False
    #: the scope of the approval the call is waiting for, if any
    asking: anyio.CancelScope | None = None
    #: the session it runs in (the one current when it arrived)
    session: Session | None = None

    def asks(self) -> _Inbox:
        """The answers' inbox and the retry's token, made on the call's first question."""
        if self.answers is None:
            self.answers = _Inbox()
            self.token = secrets.token_urlsafe(24)
        return self.answers


class CallgateMCP:
    """Serve a booted host's tools to one MCP client connection.

    ``server`` is the SDK's low-level ``Server``; run it on any transport
    (``serve_stdio`` does stdio). The session opens when the connection starts
    (``server.lifespan``) and closes when it ends. Boot the host with
    `ElicitationApprover` among its plugins for ``ask`` to reach the client.
    """

    def __init__(self, host: Host, workspace: str | os.PathLike[str] | None, *,
                 session_dir: str | os.PathLike[str] | None = None,
                 session_name: str | None = None,
                 approval_timeout: float | None = None, name: str = "callgate",
                 plan_mode: bool = False, principal: str | None = None,
                 workspace_from_roots: Callable[[str], Host] | None = None,
                 pair: bool = False) -> None:
        if workspace_from_roots is None and (workspace is None or not os.path.isdir(workspace)):
            raise FileNotFoundError(f"workspace {os.fspath(workspace or '')} is not a directory")
        if pair and (plan_mode or session_name is not None or workspace_from_roots is not None):
            raise ValueError("a planner/executor pair starts in plan mode by itself, is never "
                             "joined by name and works in one fixed workspace")
        self.host = host
        self.plan_mode = plan_mode
        #: each connection is a planner/executor pair (``serve --pair``)
        self.pair_mode = pair
        #: the connection's pair, once open; ``self.session`` is its planner until the
        #: user approves the plan, then its executor
        self.pair: SessionPair | None = None
        #: the workspace (with ``workspace_from_roots``: the client's root, once known)
        self.workspace = os.fspath(workspace) if workspace is not None else None
        #: boots the host of a root the client names (``serve --workspace-from-roots``)
        self.workspace_from_roots = workspace_from_roots
        self._roots_changed = True
        self._opening = anyio.Lock()
        #: the least severe ``notifications/message`` level the client wants
        self.log_level = DEFAULT_LOG_LEVEL
        #: the client's connection-level peer, for messages outside any request
        self._peer: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        #: the loop the calls run on and anyio's token for it (`loop_token`)
        self._loop_token: tuple[asyncio.AbstractEventLoop, Any] | None = None
        self._log_tasks: set[asyncio.Task[None]] = set()
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
        if workspace_from_roots is not None:
            prompts["on_roots_list_changed"] = self._roots_list_changed
        with warnings.catch_warnings():  # logging and roots are deprecated in 2026-07-28
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            self.server: Server[CallgateMCP] = Server(
                name, version=__version__,
                instructions=INSTRUCTIONS + (PLAN_INSTRUCTIONS if plan_mode else "")
                + (_pair.INSTRUCTIONS if pair else ""),
                lifespan=self._lifespan, get_tool_input_schema=self._input_schema,
                on_list_tools=self._list_tools, on_call_tool=self._call_tool,
                on_list_resources=self._list_resources,
                on_list_resource_templates=self._list_resource_templates,
                on_read_resource=self._read_resource, on_completion=self._complete,
                on_set_logging_level=self._set_logging_level, **prompts)
        _relay.install_log_relay()

    # --- lifespan -----------------------------------------------------------------

    def _open(self, host: Host, workspace: str) -> Session:
        if self.pair_mode:
            pair = SessionPair(host, workspace, self.session_dir, "human",
                               principal=self.principal)
            self.pair = pair
            self.session = pair.planner
            _APPS[id(pair.planner)] = self
            _APPS[id(pair.executor)] = self
            return pair.planner
        session = host.open_session(workspace, session_dir=self.session_dir, origin="human",
                                    name=self.session_name, principal=self.principal)
        if self.plan_mode:
            session.set_mode("plan")
        self.session = session
        _APPS[id(session)] = self
        return session

    @asynccontextmanager
    async def _lifespan(self, _server: Server[Any]) -> AsyncIterator[CallgateMCP]:
        self._loop = asyncio.get_running_loop()
        if self.workspace_from_roots is None:
            assert self.workspace is not None
            self._open(self.host, self.workspace)
        try:
            async with anyio.create_task_group() as tasks:
                self._tasks = tasks
                try:
                    yield self
                finally:
                    if self.session is not None:
                        self.session.cancel()
                    tasks.cancel_scope.cancel()
        finally:
            self._tasks = None
            self._waiting.clear()
            session = self.session
            if session is not None:
                _APPS.pop(id(session), None)
                with anyio.CancelScope(shield=True):
                    await self._close_sessions(session)

    async def _close_sessions(self, session: Session) -> None:
        """Close the connection's session; of a pair, both (the shared connections stop
        with the second)."""
        pair = self.pair
        if pair is None:
            await session.close()
            return
        for member in (pair.planner, pair.executor):
            _APPS.pop(id(member), None)
        await pair.close()

    async def aclose(self) -> None:
        """Close the session now (idempotent): cancel its batch, kill its jobs, stop its servers."""
        if self.session is not None and not self.session.closed:
            self.session.cancel()
            await self._close_sessions(self.session)

    def _live_session(self) -> Session:
        if self.session is None or self._tasks is None or self.session.closed:
            raise RuntimeError("the callgate session is not open (the server is not running)")
        return self.session

    async def _session_for(self, ctx: ServerRequestContext[Any, Any], *,
                           between_batches: bool = False) -> Session:
        """The session a request works in. With ``workspace_from_roots`` it is opened in the
        client's root when first needed, and, once the roots changed, moved to the new root
        before the next batch (``between_batches``: waiting for the running one to end)."""
        self._peer = ctx.session
        if self.workspace_from_roots is None or \
                (self.session is not None and not self._roots_changed):
            return self._live_session()
        if self.session is not None and not between_batches:
            return self._live_session()  # a listing: the next batch moves it
        async with self._opening:
            if self.session is not None and not self._roots_changed:
                return self._live_session()
            root = root_workspace(await self._roots(ctx))
            self._roots_changed = False
            if self.session is not None and root == self.workspace:
                return self._live_session()
            async with self._turn:  # between batches
                old = self.session
                if old is not None:
                    log.info("the client's root changed to %s: closing session %s", root,
                             old.id)
                    _APPS.pop(id(old), None)
                    self.session = None
                    old.cancel()
                    await old.close()
                try:
                    host = await anyio.to_thread.run_sync(self.workspace_from_roots, root)
                except Exception as exc:  # its callgate.toml is broken, say
                    self._roots_changed = True
                    raise RootsError(f"cannot work in the client's root {root}: {exc}") from None
                for warning in host.warnings:
                    log.warning("%s: %s", root, warning)
                self.host = host
                self.workspace = root
                try:
                    self._open(host, root)
                except Exception as exc:
                    self._roots_changed = True
                    raise RootsError(f"cannot open a session in the client's root {root}: "
                                     f"{exc}") from None
            return self._live_session()

    async def _roots(self, ctx: ServerRequestContext[Any, Any]) -> types.ListRootsResult:
        caps = ctx.session.client_capabilities
        if caps is None or caps.roots is None or not ctx.session.can_send_request:
            raise RootsError("--workspace-from-roots: the MCP client declares no roots (or "
                             "cannot be asked for them on this connection); run callgate "
                             "serve with --workspace DIR")
        with anyio.fail_after(30):
            return await ctx.session.send_request(types.ListRootsRequest(),
                                                  types.ListRootsResult)

    async def _roots_list_changed(self, ctx: ServerRequestContext[Any, Any],
                                  params: Any) -> None:
        self._roots_changed = True  # read again before the next batch

    # --- logging: notifications/message --------------------------------------------------

    async def _set_logging_level(self, ctx: ServerRequestContext[Any, Any],
                                 params: types.SetLevelRequestParams) -> types.EmptyResult:
        self._peer = ctx.session
        self.log_level = params.level
        return types.EmptyResult()

    def log_soon(self, loop: asyncio.AbstractEventLoop, peer: Any, level: str,
                 logger: str | None, data: Any, related: Any = None) -> None:
        """Send a ``notifications/message`` from any thread, without waiting (dropped when
        below the client's level, or when the connection is gone)."""
        peer = peer if peer is not None else self._peer
        if peer is None:
            return

        def start() -> None:
            task = loop.create_task(self._send_log(peer, level, logger, data, related))
            self._log_tasks.add(task)
            task.add_done_callback(self._log_tasks.discard)

        try:
            if asyncio.get_running_loop() is loop:
                start()
                return
        except RuntimeError:
            pass
        try:
            loop.call_soon_threadsafe(start)
        except RuntimeError:  # the loop is closed: the connection ended
            pass

    async def _send_log(self, peer: Any, level: str, logger: str | None, data: Any,
                        related: Any) -> None:
        modern = peer.protocol_version in MODERN_PROTOCOL_VERSIONS
        if not modern and not _relay.at_least(level, self.log_level):
            return  # a 2026-07-28 request opts in per request; the SDK filters those
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                sending = peer.send_log_message(level, data, logger,
                                                related_request_id=related)
            await sending
        except Exception as exc:
            log.debug("log message not sent: %s", exc)

    def log_outside_calls(self, level: str, logger: str | None, data: Any) -> None:
        """A log line that belongs to no request (a proxied server between calls)."""
        if self._loop is not None and self._tasks is not None:
            self.log_soon(self._loop, None, level, logger, data)

    # --- completion/complete --------------------------------------------------------------

    async def _complete(self, ctx: ServerRequestContext[Any, Any],
                        params: types.CompleteRequestParams) -> types.CompleteResult:
        try:
            session = await self._session_for(ctx)
        except RootsError:
            return _complete.empty()
        return await anyio.to_thread.run_sync(_complete.complete, session, params)

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
        schema: Mapping[str, Any] = providers.render_tools([spec], "mcp")[0]["inputSchema"]
        return schema

    async def _list_tools(self, ctx: ServerRequestContext[Any, Any],
                          params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        _no_cursor(params)
        listed = providers.surface(await self._session_or_error(ctx), "mcp")
        if self.plan_mode:
            listed = [*listed, _plan.tool_definition()]
        elif self.pair_mode:  # listed after the handover too: the list never changes
            listed = [*listed, _pair.tool_definition()]
        tools = [types.Tool.model_validate(t, by_name=False) for t in listed]
        return types.ListToolsResult(tools=tools)

    # --- resources: the session's stored results, read-only ----------------------------

    async def _list_resources(self, ctx: ServerRequestContext[Any, Any],
                              params: types.PaginatedRequestParams | None
                              ) -> types.ListResourcesResult:
        _no_cursor(params)
        return _resources.list_results(await self._session_or_error(ctx))

    async def _list_resource_templates(self, ctx: ServerRequestContext[Any, Any],
                                       params: types.PaginatedRequestParams | None
                                       ) -> types.ListResourceTemplatesResult:
        _no_cursor(params)
        return _resources.templates()

    async def _read_resource(self, ctx: ServerRequestContext[Any, Any],
                             params: types.ReadResourceRequestParams
                             ) -> types.ReadResourceResult:
        session = await self._session_or_error(ctx)
        return await anyio.to_thread.run_sync(_resources.read_result, session, str(params.uri))

    # --- prompts: the slash commands and skills, through slash_command ------------------

    async def _list_prompts(self, ctx: ServerRequestContext[Any, Any],
                            params: types.PaginatedRequestParams | None
                            ) -> types.ListPromptsResult:
        _no_cursor(params)
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
        session = await self._session_or_error(ctx)
        running = _Running(_prompts.call(session, f"{self._id_prefix}{next(self._ids)}",
                                             arguments))
        elicit = self._elicit_for(ctx, running) if ctx.session.can_send_request else None
        assert self._tasks is not None
        self._tasks.start_soon(self._run, running, self._channel(ctx, running, session, elicit),
                               None, name=f"callgate {_prompts.TOOL}")
        outcome = await self._outcome(running)
        assert isinstance(outcome, types.CallToolResult)  # no InputRequired without ask_later
        return outcome

    async def _session_or_error(self, ctx: ServerRequestContext[Any, Any]) -> Session:
        """`_session_for`, a roots problem as the request's error."""
        try:
            return await self._session_for(ctx)
        except RootsError as exc:
            raise MCPError(code=types.INVALID_REQUEST, message=str(exc)) from None

    def _channel(self, ctx: ServerRequestContext[Any, Any], running: _Running,
                 session: Session, elicit: Any) -> ApprovalChannel:
        """How the call reaches its client: approvals (``elicit``, lending the turn) and what
        a proxied server asks while the call runs (a relay that never lends it: the call
        holds the session's batch)."""
        relay_elicit = self._elicit_for(ctx, running, lend=False) if elicit is not None \
            else None
        return ApprovalChannel(session, elicit,
                               _relay.ClientRelay(self, ctx, relay_elicit, running))

    def loop_token(self) -> tuple[asyncio.AbstractEventLoop, Any]:
        """The running loop and anyio's token for it, which a call's relay uses to reach
        the loop from a worker thread: taken once per loop, not for every call (most calls
        never relay anything, and taking the token cost more than the rest of the relay)."""
        loop = asyncio.get_running_loop()
        held = self._loop_token
        if held is None or held[0] is not loop:
            held = self._loop_token = (loop, anyio.lowlevel.current_token())
        return held

    # --- tools/call -----------------------------------------------------------------

    async def _call_tool(self, ctx: ServerRequestContext[Any, Any],
                         params: types.CallToolRequestParams
                         ) -> types.CallToolResult | types.InputRequiredResult | dict[str, Any]:
        if params.request_state is not None:
            running = self._waiting.pop(params.request_state, None)
            if running is None or running.call.name != params.name:
                return _text_error(
                    f"the approval request for {params.name} expired or is unknown; nothing "
                    "was run. Call the tool again.")
            running.asks().put((params.input_responses or {}).get(APPROVAL_KEY))
        else:
            try:
                session = await self._session_for(ctx, between_batches=True)
            except RootsError as exc:
                return _text_error(f"nothing was run: {exc}")
            running = _Running(ToolCall(f"{self._id_prefix}{next(self._ids)}", params.name,
                                            params.arguments))
            running.session = session
            channel = self._channel(ctx, running, session, self._elicit_for(ctx, running))
            assert self._tasks is not None
            if (self.plan_mode or self.pair_mode) and params.name == _plan.EXIT_PLAN_TOOL:
                self._tasks.start_soon(self._run_plan_exit, running, channel,
                                       name=f"callgate {params.name}")
            else:
                self._tasks.start_soon(self._run, running, channel, _progress.reporter(ctx),
                                       name=f"callgate {params.name}")
        return await self._outcome(running, wire=True)

    def _elicit_for(self, ctx: ServerRequestContext[Any, Any], running: _Running,
                    lend: bool = True) -> Any:
        if not client_can_elicit(ctx):
            return None
        if ctx.session.can_send_request:  # handshake era: ask while the call waits
            async def ask_now(message: str, schema: dict[str, Any]) -> Any:
                result = await ctx.session.elicit_form(message, schema,
                                                       related_request_id=ctx.request_id)
                return result.action, result.content
            return self._bound(running, ask_now, lend)

        async def ask_later(message: str, schema: dict[str, Any]) -> Any:
            answer = await self.ask_later(running, types.ElicitRequest(
                params=types.ElicitRequestFormParams(message=message, requested_schema=schema)))
            if isinstance(answer, types.ElicitResult):
                return answer.action, answer.content
            return "cancel", None
        return self._bound(running, ask_later, lend)

    async def ask_later(self, running: _Running, request: Any) -> Any:
        """2026-07-28 (no server-initiated requests): hand ``request`` (an elicitation or a
        sampling request) to the call's request handler, which answers
        ``InputRequiredResult``; the client's retry brings the answer (its input response,
        or None) back here."""
        answers = running.asks()
        running.events.put(("ask", request))
        try:
            return await answers.get()
        finally:
            self._waiting.pop(running.token, None)  # a late retry finds nothing

    def _bound(self, running: _Running, ask: Any, lend: bool = True) -> Any:
        """``ask`` bound to its request: it lends the turn while the user decides (unless
        ``lend`` is false: a running call's relay, which holds the session's batch), ends
        refused at ``approval_timeout`` or when the client cancels the request (`_outcome`),
        and an answer arriving after either is ignored."""
        async def elicit(message: str, schema: dict[str, Any]) -> Any:
            if running.cancelled:
                return REQUEST_CANCELLED, None
            answer: Any = (TIMED_OUT, None)
            async with self._turn.lent() if lend else _nothing():
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
        session = channel.session
        with running.scope:  # cancelled while it waits for its turn: never runs
            try:
                async with self._turn, _progress.forwarding(progress, session) \
                        if progress is not None else nullcontext():
                    running.started = True
                    if session.closed:  # the workspace moved (roots) while it waited
                        result = ToolResult.failure(
                            "cancelled", f"{running.call.name} was not run: the client's root "
                            "changed while it waited, and the session moved there; call "
                            "again", "cancelled", {"executed": False})
                    else:
                        [result] = await session.run_batch([running.call])
            except Exception as exc:  # the pipeline never raises for a tool: a host fault
                log.exception("running %s failed", running.call.name)
                result = ToolResult.failure("tool_error", f"{running.call.name} failed: {exc}")
            running.events.put(("done", result))

    async def _run_plan_exit(self, running: _Running, channel: ApprovalChannel) -> None:
        """``exit_plan_mode``: ask the user to approve the plan; only a yes ends plan mode."""
        session = channel.session
        with running.scope:
            async with self._turn:
                running.started = True
                if self.pair_mode:
                    result = await self._hand_over(running.call, channel)
                else:
                    result = await self._plan_exit(session, running.call, channel)
                result.call_id, result.name = running.call.id, running.call.name
            running.events.put(("done", result))

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

    async def _hand_over(self, call: ToolCall, channel: ApprovalChannel) -> ToolResult:
        """The pair's ``exit_plan_mode``: the user approves the plan (an elicitation form,
        never the model, never a configured fallback), then the connection's calls go to the
        executor."""
        pair = self.pair
        assert pair is not None
        plan = _plan.plan_argument(call.arguments if call.arguments is not None else {})
        if plan is None:
            return _plan.invalid_plan_call()
        if pair.approved:
            return _pair.already_handed_over()
        if channel.elicit is None:
            return _pair.no_elicitation()
        try:
            answer = await channel.elicit(_pair.approval_message(plan), _plan.APPROVE_SCHEMA)
        except Exception as exc:  # the client failed to answer: the plan stays unapproved
            log.warning("plan approval failed: %s", exc)
            answer = None
        why = _plan.decide(answer)
        if why is not None:
            return _pair.refused(why)
        if pair.approved:  # another call handed over while the user was asked
            return _pair.already_handed_over()
        pair.approve()
        pair.executor.record_message("user", _pair.executor_message(plan))
        self.session = pair.executor
        log.info("the plan was approved: session %s hands over to executor %s",
                 pair.planner.id, pair.executor.id)
        return _pair.approved()

    async def _outcome(self, running: _Running, *, wire: bool = False
                       ) -> types.CallToolResult | types.InputRequiredResult | dict[str, Any]:
        """What the call's request answers: its approval question (2026-07-28), or its
        result; with ``wire``, a result of callgate's own blocks as the dict the SDK sends
        (`wire_result`), else the SDK's model."""
        try:
            kind, payload = await running.events.get()
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
            assert running.token is not None  # made by the question (`_Running.asks`)
            self._waiting[running.token] = running
            return types.InputRequiredResult(input_requests={APPROVAL_KEY: payload},
                                             request_state=running.token)
        session = self.session
        spec = session.tool(running.call.name) if session is not None and \
            isinstance(running.call.name, str) else None
        shape = wire_result if wire else to_mcp_result
        return shape(self.host, payload,
                     max_chars=session.max_chars if session is not None else None,
                     output_schema=spec.output_schema if spec is not None else None)


__all__ = ["APPROVAL_TIMEOUT_S", "CallgateMCP", "client_can_elicit", "to_mcp_result"]
