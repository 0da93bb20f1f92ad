"""A session: one conversation's state (workspace, ledger, results, notices, counters,
children, plugin extensions), recorded in the session store (`durable`) so that it can
be resumed, searched and read after its process ends.

What happens to a call is the pipeline's (`_pipeline`); a session builds the
`SessionState` the pipeline runs on (and the `FileScope` the gate and the file API run
on), shows itself to tools and hooks as a `SessionView`, and runs its batches one at a
time, in arrival order.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import tempfile
import threading
import uuid
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
import attrs

from .._files.access import FileAccess
from .._files.changes import FileChanges
from .._files.protected import GIT_TIMEOUT_S
from .._files.scope import FileScope
from .._fs.observations import ObservationLedger, entry_to_json
from .._fs.workspace import Workspace
from .._model.errors import ToolError
from .._model.keys import SessionKey
from .._model.spec import ProxyRoute, ToolSpec
from .._model.values import Decision, ToolCall, ToolResult
from .._pipeline import pipeline as _pipeline
from .._pipeline import profiles as _profiles
from .._pipeline import telemetry as _telemetry
from .._pipeline.batch import FifoLock
from .._pipeline.childprofile import ChildProfile
from .._pipeline.executor import LOCAL, Executor
from .._pipeline.progress import PROGRESS_SINK, ProgressSink
from .._pipeline.shared import SharedResources
from .._pipeline.state import SessionState
from .._pipeline.worker import CancelEvent
from .._results.notices import NoticeQueue
from .._results.storm import StormBreaker
from .._store.principal import check_principal, local_principal

if TYPE_CHECKING:
    from .._pipeline.view import HostView

T = TypeVar("T")
_MISSING: Any = object()


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
MESSAGE_ROLES = ("user", "assistant")


class Session:
    """One conversation with the host: its workspace, ledger, results, notices and counters.

    Open with ``host.open_session(...)``; use as ``async with`` or call
    ``await session.close()`` (idempotent). Batches run one at a time, in
    arrival order.
    """

    def __init__(
        self,
        host: HostView,
        workspace: str | os.PathLike[str],
        session_dir: str | os.PathLike[str] | None = None,
        origin: str | None = None,
        parent: Session | None = None,
        *,
        resume: str | None = None,
        name: str | None = None,
        profile: ChildProfile | None = None,
        shared: SharedResources | None = None,
        principal: str | None = None,
        executor: Executor | None = None,
        show: Sequence[str] = (),
    ) -> None:
        self._extensions: dict[str, Any] = {}
        self._extension_lock = threading.RLock()
        self.host: HostView = host
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
            parent.profiles if parent is not None else ()
        ) + ((profile,) if profile else ())
        #: how many parents this session has (0: opened by the integrator)
        self.depth: int = parent.depth + 1 if parent is not None else 0
        #: the connections this session shares with its family (children, a pair's sibling)
        self.shared = shared or (parent.shared if parent is not None else SharedResources())
        origin = origin or "none"
        if origin not in ORIGINS:
            raise ValueError(f"origin must be one of {', '.join(ORIGINS)}")
        ws_cfg = host.config("workspace")
        self.workspace = Workspace(
            workspace, ws_cfg.get("extra_roots", ()), ws_cfg.get("extra_read_roots", ())
        )
        self.directory: str | None = None
        if session_dir is not None:
            self.directory = os.path.abspath(os.fspath(session_dir))
        self._scratch: str | None = None
        # the store first: a resumed session takes its id, ledger, results and state from it
        from .._store.journal import SessionStorage
        from . import durable  # with the store's records: on first open, not at boot

        self.journal, restored = durable.attach(self, resume=resume, name=name)
        #: whether this session continues one the store held (resumed, joined by name or
        #: by its session directory)
        self.resumed = restored is not None
        if self.directory is not None:
            os.makedirs(self.directory, exist_ok=True)
        self.ledger = ObservationLedger(self._ledger_changed if self.journal.durable else None)
        if restored is not None:
            self.ledger.restore(restored.ledger)
        self.files = FileAccess(
            FileScope(
                self.workspace,
                self.ledger,
                host.files_policy,
                lambda root: _git_hooks_path(self, root),
            )
        )
        results_cfg = host.config("results")
        self.max_chars: int = results_cfg["max_chars"]
        self.results = durable.result_store(self, results_cfg["store_max_bytes"], restored)
        #: what the session's plugins keep in the store (`SessionStorage`)
        self.storage = SessionStorage(
            self.journal, restored.state if restored else None, restored.jobs if restored else ()
        )
        self.notices = NoticeQueue()
        #: files that changed on disk, for plugins that keep derived state (`callgate.files`)
        self.file_changes = FileChanges()
        #: the OpenTelemetry tracer of this session's calls (``None``: not traced)
        self.tracer: Any = _telemetry.tracer()
        self.storm = StormBreaker()
        self._batch_lock = FifoLock()
        self._children: list[Session] = []
        self._closed = False
        tools = {spec.name: spec for spec in host.session_tools() if self._is_available(spec)}
        if self.profiles:
            tools = _profiles.tools_of(self.profiles, host.registry.read_only_child_denials, tools)
        self._visible = [name for name in host.visible_names() if name in tools]
        if _profiles.listed(self.profiles):  # a named tool set is on the child's surface
            self._visible += sorted(
                n for n, s in tools.items() if s.visibility == "hidden" and n not in self._visible
            )
        # hidden tools the integrator's rendering calls directly (a native face's ``shows``);
        # never one the user's [surface] hide names
        hide = set(host.config("surface").get("hide", ()))
        self._shown = frozenset(
            n
            for n in dict.fromkeys(show)
            if n in tools
            and tools[n].visibility == "hidden"
            and n not in hide
            and n not in self._visible
        )
        self._visible += [n for n in dict.fromkeys(show) if n in self._shown]
        #: how this session's proxy reaches hidden tools (``None`` without a proxy)
        self.route: ProxyRoute | None = next(
            (s.route for s in host.routes() if s.name in tools), None
        )
        #: where this session's judged calls run (`_pipeline.executor`): `LOCAL`, or a worker
        #: next to the workspace (a child works where its parent does)
        self.executor: Executor = (
            executor
            if executor is not None
            else (parent.executor.for_child(self) if parent is not None else LOCAL)
        )
        #: what the pipeline runs on (`SessionState`)
        self.state = SessionState(
            view=self,
            host=host,
            tools=tools,
            visible=frozenset(self._visible),
            route=self.route,
            files=self.files,
            results=self.results,
            max_chars=self.max_chars,
            notices=self.notices,
            file_changes=self.file_changes,
            storm=self.storm,
            journal=self.journal,
            tracer=self.tracer,
            profiles=self.profiles,
            profile=profile,
            depth=self.depth,
            turn_origin=origin,
            stages=_pipeline.stages_for(bool(self.profiles), self.executor.dispatch),
        )
        self.shared.join()
        if parent is not None:
            parent._children.append(self)
        host.hooks.session_start(self)

    # --- what the pipeline changes between batches (kept on its state) ---------------------

    @property
    def turn_origin(self) -> str:
        """Who started the current turn: ``"human"``, ``"automatic"`` or ``"none"``."""
        return self.state.turn_origin

    @turn_origin.setter
    def turn_origin(self, origin: str) -> None:
        """Set without the ``callgate_turn_start`` hook (`begin_turn` calls it): a plugin
        that starts a turn itself (a goal's automatic round) says so."""
        self.state.turn_origin = origin

    @property
    def mode(self) -> str:
        """``"plan"`` or ``"default"`` (`set_mode`)."""
        return self.state.mode

    @property
    def cancel_event(self) -> CancelEvent:
        """Behind ``ctx.cancelled``: set by `cancel` (from any thread) and at close."""
        return self.state.cancel_event

    @property
    def cancel_grace_s(self) -> float:
        """Seconds a cancelled tool has to stop on its own before the batch walks away."""
        return self.state.cancel_grace_s

    @cancel_grace_s.setter
    def cancel_grace_s(self, seconds: float) -> None:
        self.state.cancel_grace_s = seconds

    # --- plugin extensions (`SessionKey`) -----------------------------------------------

    def extension(self, key: SessionKey[T]) -> T:
        """This session's object for ``key``, made by the factory a plugin registered for it
        (`Registry.add_session_extension`) on first use; `LookupError` when no loaded
        plugin adds ``key``."""
        found = self._extensions.get(key.name, _MISSING)
        if found is _MISSING:
            factory = self.host.registry.session_extension(key)
            with self._extension_lock:  # two threads asking first make one object
                found = self._extensions.get(key.name, _MISSING)
                if found is _MISSING:
                    found = self._extensions[key.name] = factory(self)
        return found  # type: ignore[no-any-return]

    async def snapshot(self, key: SessionKey[Any]) -> Any:
        """What this session's extension ``key`` reports of itself, as JSON (its
        ``snapshot()``: a job table's jobs, for dashboards), from wherever the session's
        tools run: here, or its worker (docs/executors.md). `LookupError` when no loaded
        plugin adds ``key`` or its object has no ``snapshot``."""
        remote = getattr(self.executor, "snapshot", None)
        if remote is not None:
            return await remote(self.state, key.name)
        return self.local_snapshot(key)

    def local_snapshot(self, key: SessionKey[Any]) -> Any:
        """`snapshot` of this process's extension object (the worker answers with it)."""
        found = getattr(self.extension(key), "snapshot", None)
        if not callable(found):
            raise LookupError(f"the session extension {key.name!r} reports no snapshot")
        return found()

    def find_extension(self, key: SessionKey[T]) -> T | None:
        """`extension`, or ``None`` when no loaded plugin adds ``key``."""
        try:
            return self.extension(key)
        except LookupError:
            return None

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
        return self.state.counters.snapshot()

    def count(self, name: str, n: int = 1) -> None:
        """Add ``n`` to a counter (plugins count e.g. ``remote_dispatches``)."""
        self.state.count(name, n)

    def observations(self) -> dict[str, Any]:
        return self.ledger.paths()

    def tool_names(self) -> list[str]:
        """The visible surface's tool names, in surface order (fixed at session open)."""
        return list(self._visible)

    def available_tools(self) -> dict[str, ToolSpec]:
        """Every tool callable in this session (visible, hidden and aliases), by name."""
        return dict(self.state.tools)

    def tool(self, name: str) -> ToolSpec | None:
        """The tool ``name`` names in this session (visible, hidden or alias), if any."""
        return self.state.tools.get(name)

    def is_visible(self, name: str) -> bool:
        return name in self.state.visible

    def shown_hidden(self) -> frozenset[str]:
        """The hidden tools this session shows because it was opened with ``show`` (a native
        rendering's faces and deferred tools): still in the capability catalog."""
        return self._shown

    def surface_specs(self) -> list[ToolSpec]:
        """The visible surface's tools, in surface order (`callgate_providers.surface`
        renders them for a provider)."""
        return [self.state.tools[n] for n in self._visible]

    def why_absent(self, name: str) -> ToolResult | None:
        """Why a tool the host registers is not in this session, as the answer a call of it
        gets (directly or through a proxy: one verdict both ways): a child profile's
        ``blocked`` refusal, or ``unavailable`` saying why (hooks no plugin implements, or
        the tool's own ``available``). ``None`` when the host registers no such tool."""
        return _pipeline.why_absent(self.state, name)

    def _ledger_changed(self, path: str, entry: Any) -> None:
        from .._store.records import LedgerPut  # imported by then (the journal needs it)

        self.journal.submit(
            LedgerPut(self.id, path, None if entry is None else entry_to_json(entry))
        )

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
            raise ValueError('role must be "user" or "assistant" (system prompts are not recorded)')
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
        self.state.turn_origin = origin
        self.host.hooks.turn_start(self, origin)

    def tighten_fallback(self, mode: str, because: str) -> None:
        """Make this session's permission fallback (what a call that is not read-only gets when
        no rule or hook decides) at least as strict as ``mode`` (``"ask"`` or ``"deny"``;
        ``"allow"`` changes nothing): a plugin importing another agent's default mode uses it.
        It never loosens ``[permissions] mode``. ``because`` is said in the refusals it causes
        (``defaultMode "default" in ~/.claude/settings.json``)."""
        self.state.tighten_fallback(mode, because)

    def fallback_for(self, mode: str) -> tuple[str, str | None]:
        """The fallback a call gets when nothing decides, given the host's (or the proxy
        target's) ``mode``: the stricter of it and `tighten_fallback`'s, with the reason when
        the session's own is stricter."""
        return self.state.fallback_for(mode)

    def set_mode(self, mode: str) -> None:
        """``"plan"`` blocks every call that is not read-only; ``"default"`` ends it."""
        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}")
        self.state.mode = mode

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

    def open_child(
        self,
        workspace: str | os.PathLike[str] | None = None,
        session_dir: str | os.PathLike[str] | None = None,
        *,
        profile: ChildProfile | None = None,
    ) -> Session:
        """A subagent's session: same host and workspace, an empty observation ledger, its
        own results and records, this session's MCP connections (`shared`). ``profile``
        limits what it may run on top of this session's own profiles; the pipeline enforces
        them on every call. Raises `ToolError` (``blocked``) when no depth remains."""
        if self._closed:
            raise RuntimeError("the session is closed")
        limit = (
            min(self.max_depth, profile.max_depth)
            if profile is not None and profile.max_depth is not None
            else self.max_depth
        )
        if self.depth >= limit:
            raise ToolError(
                "blocked",
                f"blocked: no subagent depth remains (this session is "
                f"at depth {self.depth} of at most {limit}); do the work here",
                "profile:max_depth",
                {"executed": False},
            )
        return Session(
            self.host, workspace or self.workspace.root, session_dir, None, self, profile=profile
        )

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
        if self.executor is not LOCAL:
            try:
                await self.executor.close(self)
            except Exception:
                log.exception("closing the session's executor failed")
        await anyio.to_thread.run_sync(self._end)

    def _end(self) -> None:
        try:
            self.host.hooks.session_end(self)
        except Exception:
            log.exception("a session_end hook failed")
        from . import durable as _durable

        self.results.recorded()  # a trim still owed goes in before the session's last commit
        _durable.detach(self)
        self.results.close()
        self.workspace.close()  # the held roots go once no call is using them
        from .._pipeline import lifeline as _lifeline

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
        """Run one model turn's calls (`_pipeline.pipeline.run_batch`); one result per call, in call
        order. Batches of this session run one at a time, in arrival order."""
        if self._closed:
            raise RuntimeError("the session is closed")
        lock = self._batch_lock
        if not lock.take_now():  # held: wait in arrival order
            await lock.__aenter__()
        try:
            if self.state.cancel_event.is_set():  # a fresh one: an abandoned call keeps its cancel
                self.state.cancel_event = CancelEvent()
            token = _BATCH_TURN.set(_BatchTurn(self))
            try:
                results = await _pipeline.run_batch(self.state, calls)
            finally:
                _BATCH_TURN.reset(token)
            if results:
                try:
                    self.executor.delivered(self, [r.call_id or "" for r in results])
                except Exception:  # a plugin's bookkeeping must not cost the batch
                    log.exception("callgate_results_delivered failed")
            return results
        finally:
            lock.release()

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

    def check_arguments(
        self, spec: ToolSpec, raw: Any, *, inside_capability: bool = False, call_id: str = ""
    ) -> tuple[dict[str, Any] | None, ToolResult | None]:
        """Validate ``raw`` against ``spec`` as the pipeline does
        (`_pipeline.pipeline.check_arguments`): ``(arguments, None)`` when valid, else
        ``(None, error_result)``. For a proxy that validates a target itself
        (``inside_capability``: its feedback says the arguments sit inside the proxy's
        call)."""
        return _pipeline.check_arguments(self.state, spec, raw, call_id, inside=inside_capability)

    def permission_decision(self, call: ToolCall, spec: ToolSpec) -> Decision | None:
        """What the permission step would hear about ``call`` of ``spec`` (every
        ``callgate_check_permission`` hook and the ``[permissions]`` rules, deny over ask
        over allow; ``Decision.source`` names who spoke), or ``None``: nothing speaks and
        the fallback would apply. For a tool that must judge more than its arguments show
        (web_fetch re-judges every redirect hop)."""
        return _pipeline.decide(self.state, call, spec)


def _git_hooks_path(session: Session, root: str) -> str | None:
    """Git's ``core.hooksPath`` in repository ``root`` (a protected path when it points into
    the workspace), asked through the door, unconfined: the sandbox's own policy asks."""
    from .. import process

    try:
        done = process.prepare(
            session,
            ["git", "-C", root, "config", "--get", "core.hooksPath"],
            sandbox="off",
            purpose="git config",
        ).run(timeout=GIT_TIMEOUT_S, text=True)
    except (OSError, subprocess.SubprocessError):
        return None
    value = done.stdout.strip() if done.returncode == 0 else ""
    return value or None
