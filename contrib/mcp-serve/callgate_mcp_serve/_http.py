"""``callgate serve --http``: the MCP SDK's streamable-HTTP transport, one callgate session
per MCP session.

The SDK's own ``StreamableHTTPSessionManager`` runs every MCP session on ONE server
object (one lifespan for the whole process), which would share one callgate session
between all clients. `SessionManager` keeps the SDK's transport
(``StreamableHTTPServerTransport``: SSE, JSON responses, Origin/Host checks, idle
expiry) and its connection driver (``serve_connection``), but gives every MCP session
its own `CallgateMCP`, so each has its own ledger, jobs and results:

- every request is checked first (Host, Origin, Content-Type: DNS-rebinding protection);
  one that fails is answered and opens, reopens and records nothing;
- a POST without ``Mcp-Session-Id`` that is an ``initialize`` (and accepts JSON and SSE)
  opens a session: a new id (128 random bits), a `CallgateMCP` on the fixed workspace or
  on ``<workspace root>/<digest>``, and a callgate session recorded in the session store
  under the name ``mcp-http-<digest>`` (`stored_name`), owned by the principal that
  opened it (the bearer token's ``token-<digest>``; without tokens, the server's
  operating-system user). The store and the workspace root hold a digest of the id, never
  the id: what ``list_sessions`` shows cannot be presented as ``Mcp-Session-Id``;
  anything else without an id is refused (400) and opens nothing;
- a request naming a live session goes to its transport, if it carries the credential
  that opened it (otherwise 404, as if the session did not exist);
- a request naming a session this process does not hold is looked up in the store:
  a session recorded by this or another ``serve --http`` process on the same store
  (after a restart, or behind a load balancer) is reopened under the same id with the
  client capabilities it declared, and the request is served — the client notices
  nothing. Deleted sessions, other owners' sessions and unknown ids answer 404;
- a session ends on DELETE (for good: it is marked deleted in the store and never
  reopened), after ``idle_timeout`` seconds with no request in flight, or when the
  server stops; ending it closes the callgate session (jobs killed, child servers
  stopped, record committed).
- a process that reopens a stored session writes itself as its holder; the process that
  held it before reloads its stale copy on its next request for it. Which sessions were
  taken over is read from the store only after a takeover on that store (`_takeovers`:
  a count every process on a local store file shares), not on every request.

Requests of the 2026-07-28 protocol carry no session: each is one self-contained POST
(its ``_meta`` names the protocol version, the client and its capabilities), served by the
SDK's own single-exchange entry on the callgate session of *its client*: the principal
that sent it (the bearer token; without tokens, the server's operating-system user) and the
client's name (``clientInfo.name``). That session is opened by the first request that needs
one (``server/discover`` does not), recorded in the store under
``mcp-http-<digest of principal and name>`` (so it survives a restart and another process
on the same store continues it), belongs to that principal, and ends after
``idle_timeout`` seconds with no request in flight. Clients that share a token and a name
share a session: give each client its own token to keep their observations apart.

The server stays within bounds (`_bounded_http`, `_quiet_log`): a connection limit below
the descriptor limit (the oldest connection still waiting for its request head makes
room for a new one), a header timeout, a small accept batch, a log that is rate-limited
and never written from the event loop, and a shutdown that waits for nothing stuck: a
signal arms a deadline after which the process exits whatever is still running.
"""

from __future__ import annotations

import contextlib
import hashlib
import ipaddress
import json
import logging
import math
import os
import re
import sys
import threading
from collections.abc import AsyncIterator, Sequence
from typing import Any

import anyio
import anyio.abc
import attrs
import mcp_types as types
from callgate import Host
from callgate.store import local_principal
from mcp.server._streamable_http_modern import handle_modern_request
from mcp.server.auth.middleware.bearer_auth import (
    AuthenticatedUser,
    AuthorizationContext,
    BearerAuthBackend,
    RequireAuthMiddleware,
    authorization_context,
)
from mcp.server.connection import Connection
from mcp.server.runner import serve_connection
from mcp.server.streamable_http import (
    LAST_EVENT_ID_HEADER,
    MCP_SESSION_ID_HEADER,
    EventMessage,
    StreamableHTTPServerTransport,
    check_accept_headers,
)
from mcp.server.transport_security import (
    RequestBodyLimitMiddleware,
    TransportSecurityMiddleware,
    TransportSecuritySettings,
)
from mcp.shared.inbound import (
    MCP_PROTOCOL_VERSION_HEADER,
    InboundLadderRejection,
    classify_inbound_request,
)
from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher
from mcp_types import CLIENT_INFO_META_KEY
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from . import _quiet_log
from ._auth import StaticTokenVerifier
from ._bounded_http import (
    DEFAULT_HEADER_TIMEOUT_S,
    LISTEN_QUEUE,
    MAX_HEADER_BYTES,
    bounded,
    connection_limits,
    descriptor_limit,
)
from ._events import RETRY_MS, EventLog, SessionEvents
from ._server import CallgateMCP
from ._takeovers import Takeovers

log = logging.getLogger("callgate.mcp_serve.http")

#: The store state namespace of an HTTP session's own facts (owner, client, deleted).
STATE_NS = "mcp_http"
NAME_PREFIX = "mcp-http-"
DEFAULT_IDLE_TIMEOUT_S = 30 * 60.0
DEFAULT_MAX_BODY = 4 * 1024 * 1024
#: how long open sessions get to close at shutdown before the server stops waiting
SESSION_CLOSE_GRACE_S = 10.0
#: how long uvicorn lets requests in flight finish at shutdown
GRACEFUL_SHUTDOWN_S = 5
#: after a stop signal, the process exits by then whatever is still running
EXIT_DEADLINE_S = GRACEFUL_SHUTDOWN_S + SESSION_CLOSE_GRACE_S + 5.0
PATH = "/mcp"
_SESSION_ID = re.compile(r"^[0-9a-f]{32}$")


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` reaches this machine only (``localhost``, 127/8, ``::1``)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def parse_bind(value: str) -> tuple[str, int]:
    """``[HOST:]PORT`` (``[::1]:8080`` for IPv6) → ``(host, port)``; host defaults to 127.0.0.1."""
    host, sep, port = value.rpartition(":")
    if not sep:
        host, port = "127.0.0.1", value
    host = host.strip("[]") or "127.0.0.1"
    if not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"--http {value!r}: expected [HOST:]PORT with a port from 0 to 65535")
    return host, int(port)


@attrs.frozen
class HttpOptions:
    """How ``serve --http`` serves: where, in which workspace(s), for whom."""

    host: str = "127.0.0.1"
    port: int = 0
    #: every session works here ...
    workspace: str | None = None
    #: ... or each in its own ``<workspace_root>/<session id>``
    workspace_root: str | None = None
    #: bearer tokens; required unless ``host`` is loopback
    tokens: Sequence[str] = ()
    idle_timeout: float | None = DEFAULT_IDLE_TIMEOUT_S
    #: extra ``Host`` header values (``name:port``) and ``Origin`` values accepted
    allowed_hosts: Sequence[str] = ()
    allowed_origins: Sequence[str] = ()
    plan_mode: bool = False
    #: every MCP session is a planner/executor pair (``serve --pair``; never reopened
    #: after a restart: the client opens a new pair)
    pair: bool = False
    max_body: int = DEFAULT_MAX_BODY
    #: connections served at once (``None``: from the descriptor limit, `connection_limits`)
    max_connections: int | None = None
    #: seconds a connection has to send a whole request head
    header_timeout: float = DEFAULT_HEADER_TIMEOUT_S

    def __attrs_post_init__(self) -> None:
        if (self.workspace is None) == (self.workspace_root is None):
            raise ValueError("give a workspace or a workspace root, not both or neither")
        if not self.tokens and not is_loopback(self.host):
            raise ValueError(
                f"binding {self.host} reaches other machines: give bearer tokens "
                "(--token-file, or $CALLGATE_SERVE_TOKENS), or bind 127.0.0.1"
            )

    def security(self, port: int) -> TransportSecuritySettings:
        """DNS-rebinding protection: loopback names (and the bind address) and their origins."""
        names = ["127.0.0.1", "localhost", "[::1]"]
        if not is_loopback(self.host) and self.host not in ("0.0.0.0", "::"):
            names.append(f"[{self.host}]" if ":" in self.host else self.host)
        hosts = [f"{n}:{port}" for n in names] + list(self.allowed_hosts)
        origins = [f"{scheme}://{h}" for h in hosts for scheme in ("http", "https")]
        return TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=hosts,
            allowed_origins=origins + list(self.allowed_origins),
        )


@attrs.define(eq=False)
class _Live:
    """One MCP session this process serves."""

    id: str
    app: CallgateMCP
    transport: StreamableHTTPServerTransport
    owner: AuthorizationContext | None
    #: what the transport sent, kept for a client that reconnects (`_events`)
    events: SessionEvents
    deleted: bool = False
    #: the store's takeover count when this process last found the session its own
    #: (`_takeovers`); ``None``: read the holder from the store
    verified: int | None = None
    #: set when its server task has ended (its callgate session is closed)
    done: anyio.Event = attrs.field(factory=anyio.Event)


@attrs.define(eq=False)
class _Stateless:
    """The callgate session of one 2026-07-28 client (a principal and a client name)."""

    key: str
    app: CallgateMCP
    owner: AuthorizationContext | None
    state: Any = None
    in_flight: int = 0
    #: as `_Live.verified`
    verified: int | None = None
    #: cancelled when the session has been idle for ``idle_timeout`` (or at shutdown)
    idle: anyio.CancelScope = attrs.field(factory=anyio.CancelScope)
    done: anyio.Event = attrs.field(factory=anyio.Event)


#: the 2026-07-28 methods that need the client's callgate session (others never open one)
SESSION_METHODS = frozenset({
    "tools/list", "tools/call", "prompts/list", "prompts/get", "resources/list",
    "resources/templates/list", "resources/read", "completion/complete", "logging/setLevel",
})


def stateless_key(principal: str, client_name: str) -> str:
    """The id of a 2026-07-28 client's session: a digest of its principal and its name."""
    return hashlib.sha256(f"{principal}\0{client_name}".encode()).hexdigest()[:32]


def _stateless_client(body: bytes, headers: Any) -> str | None:
    """The client name of a 2026-07-28 request that needs a session (``""``: it gave none),
    or ``None`` when it needs none, or is malformed (the SDK's entry answers it)."""
    try:
        decoded = json.loads(body)
    except (ValueError, RecursionError):
        return None
    if not isinstance(decoded, dict) or "id" not in decoded or \
            decoded.get("method") not in SESSION_METHODS:
        return None
    if isinstance(classify_inbound_request(decoded, headers=headers), InboundLadderRejection):
        return None
    info = ((decoded.get("params") or {}).get("_meta") or {}).get(CLIENT_INFO_META_KEY)
    name = info.get("name") if isinstance(info, dict) else None
    return name if isinstance(name, str) else ""


def stored_name(sid: str) -> str:
    """The session store's name of MCP session ``sid``: a digest of it, so that a name the
    session tools list is no handle to drive the session with."""
    return NAME_PREFIX + workspace_name(sid)


def workspace_name(sid: str) -> str:
    """The directory MCP session ``sid`` works in under ``--workspace-root``: a digest of
    the id (the root's listing, and the paths recorded in the store, hand out no id)."""
    return hashlib.sha256(sid.encode("ascii")).hexdigest()[:32]


def principal_of_owner(owner: AuthorizationContext | None) -> str:
    """Whom a session belongs to: the bearer token's principal, else (no tokens) the
    operating-system user the server runs as."""
    return owner["client_id"] if owner else local_principal()


async def _read_body(receive: Receive) -> tuple[bytes, Receive]:
    """The request's body (already bounded by `RequestBodyLimitMiddleware`), and a
    ``receive`` that hands it to the next reader again."""
    chunks: list[bytes] = []
    replayed: list[Any] = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            replayed.append(message)
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    body = b"".join(chunks)
    replayed.insert(0, {"type": "http.request", "body": body, "more_body": False})

    async def again() -> Any:
        return replayed.pop(0) if replayed else await receive()

    return body, again


def _is_initialize(body: bytes) -> bool:
    """Whether ``body`` is a valid ``initialize`` request (as the SDK reads it), the only
    request that may open a session."""
    try:
        message = types.jsonrpc_message_adapter.validate_json(body, by_name=False)
        if not isinstance(message, types.JSONRPCRequest) or message.method != "initialize":
            return False
        types.InitializeRequestParams.model_validate(message.params or {}, by_name=False)
    except ValueError:  # pydantic's ValidationError is one
        return False
    return True


class _Transport(StreamableHTTPServerTransport):
    """The SDK's transport, sending each message as the JSON text its session's event log
    kept for a reconnecting client: serialized once, not once for the log and again for
    the stream (issue 38). An event the log no longer keeps is serialized as the SDK does."""

    def __init__(self, *, events: SessionEvents, **kwargs: Any) -> None:
        super().__init__(event_store=events, **kwargs)
        self._events = events

    def _create_event_data(self, event_message: EventMessage) -> Any:
        event_id = event_message.event_id
        kept = self._events.json_of(event_id) if event_id else None
        if kept is None:
            return super()._create_event_data(event_message)
        return {"event": "message", "data": kept, "id": event_id}


def _error(message: str, status: int, code: int = types.INVALID_REQUEST) -> Response:
    body = types.JSONRPCError(
        jsonrpc="2.0", id=None, error=types.ErrorData(code=code, message=message)
    )
    return Response(
        body.model_dump_json(by_alias=True, exclude_unset=True),
        status_code=status,
        media_type="application/json",
    )


class SessionManager:
    """Every MCP session of one ``serve --http`` process, each with its own callgate session."""

    def __init__(self, host: Host, options: HttpOptions, *, port: int | None = None) -> None:
        self.host = host
        self.options = options
        self.security = options.security(options.port if port is None else port)
        #: the SDK's Host/Origin/Content-Type checks, run before anything is opened
        self.guard = self._guard = TransportSecurityMiddleware(self.security)
        self._live: dict[str, _Live] = {}
        #: the recent events of every session, for clients that reconnect a dropped stream
        self.events = EventLog()
        #: names this process as a session's holder in the store
        self.instance = os.urandom(8).hex()
        #: the count of takeovers on this store, shared with the other processes on it
        self.takeovers = Takeovers()
        self._opening = anyio.Lock()
        self._tasks: anyio.abc.TaskGroup | None = None
        #: the sessions of 2026-07-28 clients, by `stateless_key`
        self._stateless: dict[str, _Stateless] = {}
        self._front: CallgateMCP | None = None

    @property
    def session_ids(self) -> list[str]:
        return list(self._live)

    @contextlib.asynccontextmanager
    async def run(self) -> AsyncIterator[None]:
        """Serve while inside; on exit every session is closed."""
        async with anyio.create_task_group() as tasks:
            self._tasks = tasks
            try:
                yield
            finally:
                # each session closes (jobs killed, record committed) within the grace;
                # one that hangs is cancelled, and the exit deadline covers the rest
                with anyio.move_on_after(SESSION_CLOSE_GRACE_S, shield=True) as grace:
                    for live in list(self._live.values()):
                        await live.transport.terminate()
                    for entry in list(self._stateless.values()):
                        entry.idle.cancel()
                    for live in list(self._live.values()):
                        await live.done.wait()
                    for entry in list(self._stateless.values()):
                        await entry.done.wait()
                if grace.cancelled_caught:
                    log.warning("sessions still closing after %ss at shutdown: stopped "
                                "waiting for them", SESSION_CLOSE_GRACE_S)
                tasks.cancel_scope.cancel()
                self._tasks = None
                self.takeovers.close()

    # --- requests ---------------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self._tasks is None:
            await _error("the server is stopping", 503)(scope, receive, send)
            return
        request = Request(scope, receive)
        # the transport checks these too, but only once a session is open: refused here,
        # a request from a rebinding page opens, reopens and records nothing
        refused = await self._guard.validate_request(request, is_post=request.method == "POST")
        if refused is not None:
            await refused(scope, receive, send)
            return
        user = scope.get("user")
        owner = authorization_context(user) if isinstance(user, AuthenticatedUser) else None
        version = request.headers.get(MCP_PROTOCOL_VERSION_HEADER)
        if version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS:
            await self._modern(request, owner, scope, receive, send)
            return
        sid = request.headers.get(MCP_SESSION_ID_HEADER)
        if sid is None:
            if request.method != "POST":
                await _error("Bad Request: Missing session ID", 400)(scope, receive, send)
                return
            has_json, has_sse = check_accept_headers(request)
            if not (has_json and has_sse):
                await _error("Not Acceptable: Client must accept both application/json and "
                             "text/event-stream", 406)(scope, receive, send)
                return
            body, receive = await _read_body(receive)
            if not _is_initialize(body):
                await _error("Bad Request: a request without Mcp-Session-Id must be an "
                             "initialize request (nothing was opened)", 400)(scope, receive, send)
                return
            await self._open(None, owner, scope, receive, send)
            return
        live = self._live.get(sid)
        if live is not None and live.owner == owner and await self._taken_over(live):
            # another process took the session over since: our copy is stale
            log.info("session %s was taken over by another process: reloading it", sid)
            with anyio.CancelScope(shield=True):
                await live.transport.terminate()
                await live.done.wait()
            live = None
        if live is None and _SESSION_ID.match(sid):
            live = await self._reopen(sid, owner, version)
        if live is None or live.owner != owner:
            if live is not None:
                log.warning(
                    "refused a request for session %s: not the credential that opened it", sid
                )
            await _error("Session not found", 404)(scope, receive, send)
            return
        if request.method == "DELETE":
            live.deleted = True
        resume = request.headers.get(LAST_EVENT_ID_HEADER)
        if request.method == "GET" and resume is not None and not live.events.knows(resume):
            # the SDK would answer nothing (a 500); its events are gone or never were ours
            await _error(
                "Conflict: Last-Event-ID names no event this session still keeps (it ended, "
                "the server restarted, or it is too old); send the request again",
                409,
            )(scope, receive, send)
            return
        await live.transport.handle_request(scope, receive, send)
        if live.transport.is_terminated:
            self._live.pop(sid, None)

    # --- the 2026-07-28 protocol: one exchange per request, on its client's session --------

    async def _modern(self, request: Request, owner: AuthorizationContext | None,
                      scope: Scope, receive: Receive, send: Send) -> None:
        """A request of a protocol without the handshake (2026-07-28): served by the SDK's
        single-exchange entry on its client's callgate session (`SESSION_METHODS`), or, when
        it needs none (``server/discover``, a notification, a malformed or refused one), on
        a server with no session, which opens nothing."""
        name = None
        if request.method == "POST":
            body, receive = await _read_body(receive)
            name = _stateless_client(body, dict(request.headers))
        if name is None:
            await handle_modern_request(self._frontdoor().server, self.security, False, None,
                                        scope, receive, send)
            return
        entry = await self._stateless_entry(owner, name)
        if entry is None:
            await _error("cannot open a callgate session (see the server log)", 500)(
                scope, receive, send)
            return
        entry.in_flight += 1
        entry.idle.deadline = math.inf
        try:
            await handle_modern_request(entry.app.server, self.security, False, entry.state,
                                        scope, receive, send)
        finally:
            entry.in_flight -= 1
            if not entry.in_flight and self.options.idle_timeout is not None:
                entry.idle.deadline = anyio.current_time() + self.options.idle_timeout

    def _frontdoor(self) -> CallgateMCP:
        """A server with no session, for the requests that need none (its handlers that
        would need one are never reached: `SESSION_METHODS` go to a client's session)."""
        if self._front is None:
            where = self.options.workspace or self.options.workspace_root
            assert where is not None
            self._front = CallgateMCP(self.host, where, plan_mode=self.options.plan_mode,
                                      pair=self.options.pair)
        return self._front

    async def _stateless_entry(self, owner: AuthorizationContext | None,
                               client_name: str) -> _Stateless | None:
        """The callgate session of this principal's client ``client_name``: the one served
        here, else opened (continuing the stored one of that name, if any)."""
        principal = principal_of_owner(owner)
        key = stateless_key(principal, client_name)
        async with self._opening:
            entry = self._stateless.get(key)
            if entry is not None and entry.idle.cancel_called:
                await entry.done.wait()  # idled out just now: open it again
                entry = None
            if entry is not None and await self._taken_over(entry):
                log.info("a 2026-07-28 session was taken over by another process: reloading")
                entry.idle.cancel()
                await entry.done.wait()
                entry = None
            if entry is not None:
                return entry
            try:
                app = CallgateMCP(self.host, self._workspace(key),
                                  session_name=None if self.options.pair else stored_name(key),
                                  plan_mode=self.options.plan_mode, principal=principal,
                                  pair=self.options.pair)
            except OSError as exc:
                log.warning("cannot open a 2026-07-28 session: %s", exc)
                return None
            entry = _Stateless(key, app, owner)
            assert self._tasks is not None
            try:
                await self._tasks.start(self._serve_stateless, entry)
            except Exception:
                log.exception("cannot open the callgate session of a 2026-07-28 client")
                return None
            self._stateless[key] = entry
            entry.verified = await anyio.to_thread.run_sync(self._hold_app, app)
            return entry

    async def _serve_stateless(self, entry: _Stateless, *,
                               task_status: anyio.abc.TaskStatus[None]) -> None:
        """Hold a 2026-07-28 client's callgate session open until it has been idle for
        ``idle_timeout`` seconds (or the server stops)."""
        server = entry.app.server
        try:
            async with server.lifespan(server) as state:
                entry.state = state
                if self.options.idle_timeout is not None:
                    entry.idle.deadline = anyio.current_time() + self.options.idle_timeout
                task_status.started()
                with entry.idle:
                    await anyio.sleep_forever()
        finally:
            if self._stateless.get(entry.key) is entry:
                del self._stateless[entry.key]
            entry.done.set()

    # --- opening and reopening ----------------------------------------------------------

    def _workspace(self, sid: str) -> str:
        if self.options.workspace is not None:
            return self.options.workspace
        assert self.options.workspace_root is not None
        # a digest, not the id: the workspace root's listing (or a path in a recorded
        # session) must not hand out session ids
        path = os.path.join(self.options.workspace_root, workspace_name(sid))
        os.makedirs(path, mode=0o700, exist_ok=True)
        return path

    def _transport(self, sid: str, events: SessionEvents) -> StreamableHTTPServerTransport:
        return _Transport(
            mcp_session_id=sid,
            security_settings=self.security,
            idle_timeout=self.options.idle_timeout,
            events=events,
            retry_interval=RETRY_MS,
        )

    def _new_live(self, sid: str, app: CallgateMCP, owner: AuthorizationContext | None) -> _Live:
        events = self.events.session(sid)
        return _Live(sid, app, self._transport(sid, events), owner, events)

    async def _open(
        self,
        sid: str | None,
        owner: AuthorizationContext | None,
        scope: Scope,
        receive: Receive,
        send: Send,
    ) -> None:
        """A new session for an ``initialize``; discarded again if that request fails."""
        sid = sid or os.urandom(16).hex()
        try:
            app = CallgateMCP(
                self.host,
                self._workspace(sid),
                session_name=None if self.options.pair else stored_name(sid),
                plan_mode=self.options.plan_mode,
                principal=principal_of_owner(owner),
                pair=self.options.pair,
            )
        except OSError as exc:
            await _error(f"cannot open a session: {exc}", 500)(scope, receive, send)
            return
        live = self._new_live(sid, app, owner)
        self._live[sid] = live
        connection = await self._start(live, None)
        if connection is None:
            await _error("cannot open a callgate session (see the server log)", 500)(
                scope, receive, send
            )
            return
        status: list[int] = []

        async def watch(message: Any) -> None:
            if message["type"] == "http.response.start":
                status.append(message["status"])
            await send(message)

        try:
            await live.transport.handle_request(scope, receive, watch)
        finally:
            if not status or status[0] >= 400 or connection.client_params is None:
                self._live.pop(sid, None)
                with anyio.CancelScope(shield=True):
                    await live.transport.terminate()
        if live.transport.is_terminated:
            return
        await anyio.to_thread.run_sync(self._remember, live, connection)

    def _remember(self, live: _Live, connection: Connection) -> None:
        """Store the session's owner and the client's declared capabilities (for reopening)."""
        session = live.app.session
        if session is None or session.closed or not session.storage.durable:
            return
        counter = self.takeovers.open_for(self.host.store)
        # read before the holder is written: a takeover from now on moves the count
        before = counter.read() if counter is not None else None
        session.storage.put(STATE_NS, "owner", dict(live.owner) if live.owner else None)
        session.storage.put(STATE_NS, "holder", self.instance)
        live.verified = before
        params = connection.client_params
        if params is not None:
            session.storage.put(STATE_NS, "client", params.model_dump(mode="json", by_alias=True))

    async def _reopen(
        self, sid: str, owner: AuthorizationContext | None, version: str | None
    ) -> _Live | None:
        """The stored session ``sid`` reopened here, if the store has it for this owner."""
        if self.options.pair:  # a pair is never reopened: the client opens a new one
            return None
        async with self._opening:
            live = self._live.get(sid)
            if live is not None:
                return live
            stored = await anyio.to_thread.run_sync(self._stored, sid)
            if stored is None:
                return None
            saved_owner, client = stored
            if saved_owner != (dict(owner) if owner else None):
                log.warning("refused to reopen session %s: not the credential that opened it", sid)
                return None
            try:
                app = CallgateMCP(
                    self.host,
                    self._workspace(sid),
                    session_name=stored_name(sid),
                    plan_mode=self.options.plan_mode,
                    principal=principal_of_owner(owner),
                )
            except OSError as exc:
                log.warning("cannot reopen session %s: %s", sid, exc)
                return None
            live = self._new_live(sid, app, owner)
            self._live[sid] = live
            params = None
            if client is not None:
                try:
                    params = types.InitializeRequestParams.model_validate(client)
                except ValueError:
                    params = None
            if params is None:
                params = types.InitializeRequestParams(
                    protocol_version=version or LATEST_HANDSHAKE_VERSION,
                    capabilities=types.ClientCapabilities(),
                    client_info=types.Implementation(name="reopened", version="0"),
                )
            if await self._start(live, params) is None:
                return None
            await anyio.to_thread.run_sync(self._hold, live)
            log.info("reopened stored session %s", sid)
            return live

    def _hold(self, live: _Live) -> None:
        live.verified = self._hold_app(live.app)

    def _hold_app(self, app: CallgateMCP) -> int | None:
        """Record this process as the session's holder (the one with the fresh copy), and
        count the takeover for the other processes on the store (`_takeovers`); the count
        from before it (the session's `verified`)."""
        session = app.session
        if session is None or session.closed or not session.storage.durable:
            return None
        counter = self.takeovers.open_for(self.host.store)
        before = counter.read() if counter is not None else None
        session.storage.put(STATE_NS, "holder", self.instance)
        if counter is not None:
            counter.bump()  # after the holder is committed: whoever sees it finds us
        return before

    async def _taken_over(self, held: _Live | _Stateless) -> bool:
        """Whether another process has reopened the session since this one did: read from
        the store only when a takeover happened on it since the session was last found
        ours (`_takeovers`), never on every request."""
        session = held.app.session
        if session is None or session.closed or not session.storage.durable:
            return False
        counter = self.takeovers.counter
        seen = counter.read() if counter is not None else None
        if seen is not None and seen == held.verified:
            return False  # no takeover of any session on this store since
        session_id = session.id

        def holder() -> Any:
            # one point read, never the whole state decoded (issue 34, item 7), and only
            # after a takeover on this store (issue 38)
            store = self.host.store
            try:
                point = getattr(store, "state_value", None)
                if point is not None:
                    return point(session_id, STATE_NS, "holder")
                return store.state(session_id).get((STATE_NS, "holder"))  # an older backend
            except Exception as exc:
                log.warning("cannot read the holder of session %s: %s", session_id, exc)
                return None

        found = await anyio.to_thread.run_sync(holder)
        taken = found is not None and found != self.instance
        if not taken and seen is not None:
            held.verified = seen
        return taken

    def _stored(self, sid: str) -> tuple[Any, Any] | None:
        """``(owner, client params)`` of a stored, not deleted session ``sid``, else None."""
        try:
            store, recorder = self.host.session_store()
            recorder.flush()
            info = store.session(stored_name(sid), prefix=False)
            if info is None:
                return None
            state = store.state(info.id)
        except Exception as exc:
            log.warning("cannot look up session %s in the session store: %s", sid, exc)
            return None
        if state.get((STATE_NS, "deleted")):
            return None
        return state.get((STATE_NS, "owner")), state.get((STATE_NS, "client"))

    async def _start(
        self, live: _Live, params: types.InitializeRequestParams | None
    ) -> Connection | None:
        """Start the session's server task; ``params`` makes its connection born ready."""
        assert self._tasks is not None
        try:
            return await self._tasks.start(self._serve, live, params)
        except Exception:
            log.exception("cannot open the callgate session of %s", live.id)
            self._live.pop(live.id, None)
            with anyio.CancelScope(shield=True):
                await live.transport.terminate()
            return None

    async def _serve(
        self,
        live: _Live,
        params: types.InitializeRequestParams | None,
        *,
        task_status: anyio.abc.TaskStatus[Connection],
    ) -> None:
        """Run one MCP session: its callgate session's lifespan around the SDK's driver."""
        server = live.app.server
        try:
            async with (
                live.transport.connect() as (read_stream, write_stream),
                server.lifespan(server) as state,
            ):
                dispatcher: JSONRPCDispatcher[Any] = JSONRPCDispatcher(
                    read_stream, write_stream, inline_methods=frozenset({"initialize"})
                )
                connection = Connection.for_loop(dispatcher, session_id=live.id)
                if params is not None:
                    connection.client_params = params
                    connection.protocol_version = params.protocol_version
                    connection.initialized.set()
                task_status.started(connection)
                idle = live.transport.idle_scope or anyio.CancelScope()
                try:
                    with idle:
                        await serve_connection(
                            server, dispatcher, connection=connection, lifespan_state=state
                        )
                    if idle.cancelled_caught:
                        log.info(
                            "session %s ended: idle for %ss", live.id, self.options.idle_timeout
                        )
                finally:
                    if live.deleted:
                        with anyio.CancelScope(shield=True):
                            await anyio.to_thread.run_sync(self._mark_deleted, live)
        finally:
            if self._live.get(live.id) is live:
                del self._live[live.id]
            self.events.drop(live.id)
            if not live.transport.is_terminated:
                with anyio.CancelScope(shield=True):
                    await live.transport.terminate()
            live.done.set()

    def _mark_deleted(self, live: _Live) -> None:
        session = live.app.session
        if session is None or session.closed or not session.storage.durable:
            return
        try:
            session.storage.put(STATE_NS, "deleted", True)
        except Exception as exc:
            log.warning("cannot mark session %s deleted: %s", live.id, exc)


#: RFC 9728: where a client that discovers auth finds this resource's metadata
METADATA_PATH = "/.well-known/oauth-protected-resource"


def _origin(request: Request) -> str:
    """``scheme://host`` as the client addressed this server (its Host was checked)."""
    return f"{request.url.scheme}://{request.headers.get('host', request.url.netloc)}"


class ProtectedResource:
    """OAuth 2.0 protected-resource metadata (RFC 9728) of ``serve --http`` with tokens:
    what this resource is and that it takes a bearer token in the ``Authorization`` header.
    The tokens are issued out of band (``--token-file``), so no authorization server is
    named. Answered at the well-known path and at its ``/mcp`` form, for a Host the
    DNS-rebinding check accepts."""

    def __init__(self, guard: TransportSecurityMiddleware) -> None:
        self._guard = guard

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        refused = await self._guard.validate_request(request, is_post=False)
        if refused is not None:
            await refused(scope, receive, send)
            return
        body = {"resource": _origin(request) + PATH, "bearer_methods_supported": ["header"],
                "resource_name": "callgate"}
        await Response(json.dumps(body), media_type="application/json",
                       headers={"cache-control": "no-store"})(scope, receive, send)


class _PointsToMetadata:
    """Adds RFC 9728's ``resource_metadata`` to the ``WWW-Authenticate`` of a 401, naming
    the metadata URL as the client addressed this server."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        origin = _origin(Request(scope))

        async def point(message: Any) -> None:
            if message["type"] == "http.response.start" and message["status"] == 401:
                headers = []
                for key, value in message.get("headers", []):
                    if key.lower() == b"www-authenticate" and b"resource_metadata" not in value:
                        url = f"{origin}{METADATA_PATH}{PATH}"
                        value = value + f', resource_metadata="{url}"'.encode("latin-1")
                    headers.append((key, value))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, point)


def build_app(
    host: Host, options: HttpOptions, *, port: int | None = None
) -> tuple[Starlette, SessionManager]:
    """The ASGI app serving MCP on ``/mcp`` (bearer auth in front when tokens are given, and
    the protected-resource metadata at ``/.well-known/oauth-protected-resource``)."""
    manager = SessionManager(host, options, port=port)
    endpoint: Any = RequestBodyLimitMiddleware(manager, options.max_body)
    middleware: list[Middleware] = []
    extra: list[Route] = []
    if options.tokens:
        endpoint = _PointsToMetadata(RequireAuthMiddleware(endpoint, required_scopes=[]))
        middleware.append(
            Middleware(
                AuthenticationMiddleware,
                backend=BearerAuthBackend(StaticTokenVerifier(options.tokens)),
            )
        )
        metadata = ProtectedResource(manager.guard)
        extra = [Route(METADATA_PATH, endpoint=metadata, methods=["GET"]),
                 Route(METADATA_PATH + PATH, endpoint=metadata, methods=["GET"])]

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        async with manager.run():
            yield

    app = Starlette(
        routes=[Route(PATH, endpoint=endpoint, methods=["GET", "POST", "DELETE"]), *extra],
        middleware=middleware,
        lifespan=lifespan,
    )
    return app, manager


def _exit_by(deadline: float, code: int) -> None:
    """Exit the process ``deadline`` seconds from now, whatever is still running then (a
    daemon timer: a process that ends sooner ends as usual)."""
    timer = threading.Timer(deadline, os._exit, (code,))
    timer.daemon = True
    timer.start()


def _server_class() -> type[Any]:
    import uvicorn

    class Server(uvicorn.Server):
        """uvicorn's server, whose first stop signal also arms the exit deadline."""

        _deadline_armed = False

        def handle_exit(self, sig: int, frame: Any) -> None:
            if not self._deadline_armed:
                self._deadline_armed = True
                _exit_by(EXIT_DEADLINE_S, 128 + int(sig))
            super().handle_exit(sig, frame)

    return Server


async def serve_http(host: Host, options: HttpOptions) -> None:
    """Serve until SIGTERM/SIGINT; prints ``callgate: serving MCP on URL`` once listening."""
    handler = _quiet_log.install()
    try:
        await _serve_http(host, options)
    finally:
        handler.drain(1.0)
        _quiet_log.uninstall(handler)


async def _serve_http(host: Host, options: HttpOptions) -> None:
    import socket

    import uvicorn

    connections, backlog = connection_limits(descriptor_limit())
    if options.max_connections is not None:
        connections = min(connections, options.max_connections)
    family = socket.AF_INET6 if ":" in options.host else socket.AF_INET
    # IPPROTO_TCP spelled out: asyncio sets TCP_NODELAY on accepted connections only when
    # the listening socket says so (proto 0 meant Nagle + delayed ACK: 40 ms per response)
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((options.host, options.port))
    port = sock.getsockname()[1]
    app, _manager = build_app(host, options, port=port)
    config = uvicorn.Config(
        app,
        log_level="warning",
        log_config=None,  # its records go to the bounded log (`_quiet_log`)
        lifespan="on",
        access_log=False,
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_S,
        ws="none",
        http=bounded(connections, options.header_timeout),
        backlog=backlog,
        h11_max_incomplete_event_size=MAX_HEADER_BYTES,
    )
    server = _server_class()(config)
    log.info("serving at most %d connections (accept batch %d, header timeout %ss)",
             connections, backlog, options.header_timeout)
    shown = f"[{options.host}]" if ":" in options.host else options.host
    async with anyio.create_task_group() as tasks:

        async def announce() -> None:
            while not server.started:
                await anyio.sleep(0.01)
            # asyncio listened with the accept batch as the queue; connections waiting to
            # be accepted hold no descriptor of ours, so the kernel may queue many more
            sock.listen(LISTEN_QUEUE)
            print(
                f"callgate: serving MCP on http://{shown}:{port}{PATH}", file=sys.stderr, flush=True
            )

        tasks.start_soon(announce)
        await server.serve(sockets=[sock])
        tasks.cancel_scope.cancel()


__all__ = [
    "DEFAULT_IDLE_TIMEOUT_S",
    "METADATA_PATH",
    "NAME_PREFIX",
    "PATH",
    "STATE_NS",
    "HttpOptions",
    "SessionManager",
    "build_app",
    "is_loopback",
    "parse_bind",
    "principal_of_owner",
    "serve_http",
    "stored_name",
    "workspace_name",
]
