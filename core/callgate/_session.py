"""A session: one conversation's state (workspace, ledger, results, notices, counters,
children, plugin extensions), recorded in the session store (`_durable`) so that it can
be resumed, searched and read after its process ends.

What happens to a call is the pipeline's (`_pipeline`); a session holds what the
pipeline reads and writes, and runs its batches one at a time, in arrival order.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import threading
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Iterable, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

import anyio
import attrs

from . import _pipeline, _profiles, _telemetry
from ._batch import FifoLock
from ._context import PROGRESS_SINK, ProgressSink
from ._errors import ToolError
from ._file_changes import FileChanges
from ._files_api import FileAccess
from ._model import Decision, TextBlock, ToolCall, ToolResult
from ._notices import NoticeQueue
from ._observations import ObservationLedger, entry_to_json
from ._principal import check_principal, local_principal
from ._profiles import ChildProfile
from ._shared import SharedResources
from ._spec import ProxyRoute, ToolSpec
from ._storm import StormBreaker
from ._worker import DEFAULT_GRACE_S, CancelEvent
from ._workspace import Workspace

if TYPE_CHECKING:
    from ._host import Host


@attrs.define(eq=False)
class _BatchTurn:
    """The running batch's hold on its session's turn (`Session.yield_turn`)."""

    session: Session
    lent: bool = False
    back: anyio.Event | None = None


_BATCH_TURN: ContextVar[_BatchTurn | None] = ContextVar("callgate_batch_turn", default=None)

log = logging.getLogger("callgate")

ORIGINS = ("none", "human", "automatic")
MODES = ("default", "plan")
#: how strict each permission fallback is (`Session.tighten_fallback`)
_STRICTNESS = {"allow": 0, "ask": 1, "deny": 2}
MESSAGE_ROLES = ("user", "assistant")
COUNTERS = ("argument_validations", "argument_failures", "skipped", "remote_dispatches",
            "storm_hints")


class Session:
    """One conversation with the host: its workspace, ledger, results, notices and counters.

    Open with ``host.open_session(...)``; use as ``async with`` or call
    ``await session.close()`` (idempotent). Batches run one at a time, in
    arrival order.
    """

    def __init__(self, host: Host, workspace: str | os.PathLike[str],
                 session_dir: str | os.PathLike[str] | None = None,
                 origin: str | None = None, parent: Session | None = None, *,
                 resume: str | None = None, name: str | None = None,
                 profile: ChildProfile | None = None,
                 shared: SharedResources | None = None,
                 principal: str | None = None) -> None:
        self._extensions: dict[str, Any] = {}
        self.host = host
        #: the session's stable id (the same when it is resumed or joined)
        self.id = uuid.uuid4().hex
        #: who the session belongs to (`callgate.store.local_principal` unless the integrator
        #: names another; a child's is its parent's): the store answers it only with that
        #: principal's sessions
        if principal is not None:
            self.principal: str = check_principal(principal)
        elif parent is not None:
            self.principal = parent.principal
        else:
            self.principal = local_principal()
        #: the name a session was opened under (``callgate serve --session NAME``), if any
        self.name = name
        self.parent = parent
        #: the profile this session was opened with (``None``: a session with no profile)
        self.profile = profile
        #: this session's profiles and its ancestors' (every one is enforced on every call)
        self.profiles: tuple[ChildProfile, ...] = (
            (parent.profiles if parent is not None else ()) + ((profile,) if profile else ()))
        #: how many parents this session has (0: opened by the integrator)
        self.depth: int = parent.depth + 1 if parent is not None else 0
        #: the connections this session shares with its family (children, a pair's sibling)
        self.shared = shared or (parent.shared if parent is not None else SharedResources())
        origin = origin or "none"
        if origin not in ORIGINS:
            raise ValueError(f"origin must be one of {', '.join(ORIGINS)}")
        ws_cfg = host.config("workspace")
        self.workspace = Workspace(workspace, ws_cfg.get("extra_roots", ()),
                                   ws_cfg.get("extra_read_roots", ()))
        self.directory: str | None = None
        if session_dir is not None:
            self.directory = os.path.abspath(os.fspath(session_dir))
        self._scratch: str | None = None
        self.turn_origin = origin
        self.mode = "default"
        #: the stricter fallback a plugin set (`tighten_fallback`): (mode, because)
        self._fallback_floor: tuple[str, str] | None = None
        # the store first: a resumed session takes its id, ledger, results and state from it
        from . import _durable  # with the store's records: on first open, not at boot
        from ._journal import SessionStorage

        self.journal, restored = _durable.attach(self, resume=resume, name=name)
        #: whether this session continues one the store held (resumed, joined by name or
        #: by its session directory)
        self.resumed = restored is not None
        if self.directory is not None:
            os.makedirs(self.directory, exist_ok=True)
        self.ledger = ObservationLedger(self._ledger_changed if self.journal.durable else None)
        if restored is not None:
            self.ledger.restore(restored.ledger)
        self.files = FileAccess(self)
        results_cfg = host.config("results")
        self.max_chars: int = results_cfg["max_chars"]
        self.results = _durable.result_store(self, results_cfg["store_max_bytes"], restored)
        #: what the session's plugins keep in the store (`SessionStorage`)
        self.storage = SessionStorage(self.journal, restored.state if restored else None,
                                      restored.jobs if restored else ())
        self.notices = NoticeQueue()
        #: files that changed on disk, for plugins that keep derived state (`callgate.files`)
        self.file_changes = FileChanges()
        #: the OpenTelemetry tracer of this session's calls (``None``: not traced)
        self.tracer: Any = _telemetry.tracer()
        self.storm = StormBreaker()
        self._counters: Counter[str] = Counter({name: 0 for name in COUNTERS})
        self._counter_lock = threading.Lock()
        self._batch_lock = FifoLock()
        self._turn_lent = False  # a call of the running batch lent its turn (`yield_turn`)
        #: behind ``ctx.cancelled``: set by `cancel` (from any thread) and at close
        self.cancel_event = CancelEvent()
        #: seconds a cancelled tool has to stop on its own before the batch walks away
        self.cancel_grace_s = DEFAULT_GRACE_S
        self._children: list[Session] = []
        self._closed = False
        self._tools = {spec.name: spec for spec in host.session_tools()
                       if self._is_available(spec)}
        if self.profiles:
            self._tools = _profiles.tools_of(self.profiles,
                                             host.registry.read_only_child_denials,
                                             self._tools)
        self._visible = [name for name in host.visible_names() if name in self._tools]
        if _profiles.listed(self.profiles):  # a named tool set is on the child's surface
            self._visible += sorted(n for n, s in self._tools.items()
                                    if s.visibility == "hidden" and n not in self._visible)
        self._visible_set = set(self._visible)
        #: how this session's proxy reaches hidden tools (``None`` without a proxy)
        self.route: ProxyRoute | None = next(
            (s.route for s in host.routes() if s.name in self._tools), None)
        self.shared.join()
        if parent is not None:
            parent._children.append(self)
        host.hooks.session_start(self)

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

    def tool(self, name: str) -> ToolSpec | None:
        """The tool ``name`` names in this session (visible, hidden or alias), if any."""
        return self._tools.get(name)

    def is_visible(self, name: str) -> bool:
        return name in self._visible_set

    def surface(self, provider: str | None = None) -> list[Any]:
        specs = [self._tools[n] for n in self._visible]
        return self.host.render_tools(specs, provider)

    def _ledger_changed(self, path: str, entry: Any) -> None:
        from ._store_model import LedgerPut  # imported by then (the journal needs it)

        self.journal.submit(LedgerPut(self.id, path, None if entry is None
                                      else entry_to_json(entry)))

    # --- the session store ---------------------------------------------------------------

    @property
    def store(self) -> Any:
        """The session store this session records into (``None`` with ``[sessions] record =
        "off"``): its read API (`callgate.store.SessionStore`) serves the session tools."""
        return self.journal.store if self.journal.durable else None

    def record_message(self, role: str, text: str) -> None:
        """Record a conversation message (``role`` ``"user"`` or ``"assistant"``) in the
        session's timeline, for ``read_session`` and ``history``. System prompts are never
        recorded. Does nothing unless ``[sessions] record = "all"``."""
        if role not in MESSAGE_ROLES:
            raise ValueError('role must be "user" or "assistant" (system prompts are not '
                             "recorded)")
        if not isinstance(text, str):
            raise TypeError("text must be a string")
        self.journal.message(role, text)

    def flush(self) -> None:
        """Wait until everything this session recorded is committed to the store (a no-op
        without one); raises `callgate.store.StoreError` if the store failed."""
        self.journal.flush()

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
        self.host.hooks.turn_start(self, origin)

    def tighten_fallback(self, mode: str, because: str) -> None:
        """Make this session's permission fallback (what a call that is not read-only gets when
        no rule or hook decides) at least as strict as ``mode`` (``"ask"`` or ``"deny"``;
        ``"allow"`` changes nothing): a plugin importing another agent's default mode uses it.
        It never loosens ``[permissions] mode``. ``because`` is said in the refusals it causes
        (``defaultMode "default" in ~/.claude/settings.json``)."""
        if mode not in _STRICTNESS:
            raise ValueError('mode must be "allow", "ask" or "deny"')
        current = self._fallback_floor
        if current is None or _STRICTNESS[mode] > _STRICTNESS[current[0]]:
            self._fallback_floor = (mode, because)

    def fallback_for(self, mode: str) -> tuple[str, str | None]:
        """The fallback a call gets when nothing decides, given the host's (or the proxy
        target's) ``mode``: the stricter of it and `tighten_fallback`'s, with the reason when
        the session's own is stricter."""
        floor = self._fallback_floor
        if floor is None or _STRICTNESS.get(mode, 0) >= _STRICTNESS[floor[0]]:
            return mode, None
        return floor

    def set_mode(self, mode: str) -> None:
        """``"plan"`` blocks every call that is not read-only; ``"default"`` ends it."""
        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}")
        self.mode = mode

    def cancel(self) -> None:
        """Cancel the running batch: running tools see ``ctx.cancelled``; the rest don't start."""
        self.cancel_event.set()

    @property
    def cancelling(self) -> bool:
        return self.cancel_event.is_set()

    # --- children and closing ---------------------------------------------------

    @property
    def max_depth(self) -> int:
        """How deep children of this family may nest (the smallest ``max_depth`` of this
        session's profiles, else `callgate.ChildProfile`'s default, 3)."""
        return _profiles.max_depth(self.profiles)

    @property
    def can_open_child(self) -> bool:
        """Whether a child may be opened here: this session's depth is below `max_depth`."""
        return self.depth < self.max_depth

    def open_child(self, workspace: str | os.PathLike[str] | None = None,
                   session_dir: str | os.PathLike[str] | None = None, *,
                   profile: ChildProfile | None = None) -> Session:
        """A subagent's session: same host and workspace, an empty observation ledger, its
        own results and records, this session's MCP connections (`shared`). ``profile``
        limits what it may run on top of this session's own profiles; the pipeline enforces
        them on every call. Raises `ToolError` (``blocked``) when no depth remains."""
        if self._closed:
            raise RuntimeError("the session is closed")
        limit = min(self.max_depth, profile.max_depth) if profile is not None and \
            profile.max_depth is not None else self.max_depth
        if self.depth >= limit:
            raise ToolError("blocked", f"blocked: no subagent depth remains (this session is "
                            f"at depth {self.depth} of at most {limit}); do the work here",
                            "profile:max_depth", {"executed": False})
        return Session(self.host, workspace or self.workspace.root, session_dir, None, self,
                       profile=profile)

    @property
    def closed(self) -> bool:
        return self._closed

    async def close(self) -> None:
        """End the session's jobs, servers and watchers; idempotent."""
        if self._closed:
            return
        self._closed = True
        self.cancel_event.set()
        for child in list(self._children):
            await child.close()
        await anyio.to_thread.run_sync(self._end)

    def _end(self) -> None:
        try:
            self.host.hooks.session_end(self)
        except Exception:
            log.exception("a session_end hook failed")
        from . import _durable

        self.results.recorded()  # a trim still owed goes in before the session's last commit
        _durable.detach(self)
        self.results.close()
        self.workspace.close()  # the held roots go once no call is using them
        from . import _lifeline

        _lifeline.end_scope(self)  # what the session's programs left running (setsid, nohup)
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None
        self.shared.leave()  # the last member closes the shared connections

    async def __aenter__(self) -> Session:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # --- batches ---------------------------------------------------

    async def run(self, call: ToolCall) -> ToolResult:
        """Run one call as a batch of one."""
        [result] = await self.run_batch([call])
        return result

    async def run_batch(self, calls: Sequence[ToolCall]) -> list[ToolResult]:
        """Run one model turn's calls (`_pipeline.run_batch`); one result per call, in call
        order. Batches of this session run one at a time, in arrival order."""
        if self._closed:
            raise RuntimeError("the session is closed")
        async with self._batch_lock:
            if self.cancel_event.is_set():  # a fresh one: an abandoned call keeps its cancel
                self.cancel_event = CancelEvent()
            token = _BATCH_TURN.set(_BatchTurn(self))
            try:
                return await _pipeline.run_batch(self, calls)
            finally:
                _BATCH_TURN.reset(token)

    @contextmanager
    def progress_to(self, sink: ProgressSink | None) -> Iterator[None]:
        """Send the `ToolContext.progress` reports of the calls run inside the block (in this
        task and the tasks and threads it starts) to ``sink(done, total, message)``, which
        must be callable from any thread."""
        token = PROGRESS_SINK.set(sink)
        try:
            yield
        finally:
            PROGRESS_SINK.reset(token)

    @asynccontextmanager
    async def yield_turn(self) -> AsyncIterator[None]:
        """Let other batches of this session run while the running batch waits on something
        outside it (a person answering an approval request); on exit the batch waits for its
        turn back, in arrival order. For an approver that may wait minutes: without it, one
        pending question holds every later call of the session. Another batch may change
        files meanwhile; an approval is bound to the file versions it was shown (the gate
        refuses a stale one). Outside a batch of this session it only runs the body. The wait
        for the turn back is shielded: a call never continues without it."""
        turn = _BATCH_TURN.get(None)
        if turn is None or turn.session is not self:
            yield
            return
        if not turn.lent:
            turn.lent, turn.back = True, anyio.Event()
            await self._batch_lock.__aexit__(None, None, None)
        back = turn.back
        assert back is not None
        try:
            yield
        finally:
            with anyio.CancelScope(shield=True):
                if turn.lent and turn.back is back:  # the first call back reclaims it for all
                    turn.lent = False
                    await self._batch_lock.__aenter__()
                    back.set()
                else:
                    await back.wait()

    def check_arguments(self, spec: ToolSpec, raw: Any, *, inside_capability: bool = False,
                        call_id: str = "") -> tuple[dict[str, Any] | None, ToolResult | None]:
        """Validate ``raw`` against ``spec`` as the pipeline does (`_pipeline.check_arguments`):
        ``(arguments, None)`` when valid, else ``(None, error_result)``. For a proxy that
        validates a target itself (``inside_capability``: its feedback says the arguments sit
        inside the proxy's call)."""
        return _pipeline.check_arguments(self, spec, raw, call_id, inside=inside_capability)

    def permission_decision(self, call: ToolCall, spec: ToolSpec) -> Decision | None:
        """What the permission step would hear about ``call`` of ``spec`` (every
        ``callgate_check_permission`` hook and the ``[permissions]`` rules, deny over ask
        over allow; ``Decision.source`` names who spoke), or ``None``: nothing speaks and
        the fallback would apply. For a tool that must judge more than its arguments show
        (web_fetch re-judges every redirect hop)."""
        return _pipeline.decide(self, call, spec)


def text_of(blocks: Iterable[Any]) -> str:
    return "\n".join(b.text for b in blocks if isinstance(b, TextBlock))
