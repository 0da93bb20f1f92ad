"""A remote executor: a session's judged calls run on a worker next to its workspace.

The transport is an argv (``[executor] transport`` in the user config, or
``callgate replay --executor``) whose process speaks the executor protocol
(`_executor.protocol`) on its stdio: ``callgate worker`` itself, or ssh, ``podman exec``,
``kubectl exec`` or bwrap in front of it. ``{workspace}`` and ``{session_id}`` in the argv
are replaced by the session's workspace (as the worker sees it) and id.

The transport is started through the spawn door (`callgate.process`, the user's own
program, so outside the sandbox, tied to the session family's lifetime) on a session's
first call that runs on the worker, and shared by the session's children. If it dies,
every call in flight answers ``unavailable`` (what it changed is unknown) and the next
call starts a new worker: a session is never left waiting on a dead one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shlex
import time
import weakref
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from .._files.changes import FileChange, FileChanges
from .._model.values import ToolResult
from .._pipeline import record
from .._pipeline.pipeline import dispatch as local_dispatch
from .._pipeline.progress import PROGRESS_SINK
from .._pipeline.worker import Abandoned, run_async
from . import protocol

if TYPE_CHECKING:
    from .._pipeline.state import SessionState
    from .._pipeline.step import Step
    from .._pipeline.view import SessionView

log = logging.getLogger("callgate")

#: seconds a worker has to answer the handshake (``[executor] connect_timeout_s``)
CONNECT_TIMEOUT_S = 60.0
#: the longest line a worker may send (a result holds a tool's whole output)
LINE_LIMIT = 1 << 30
#: how much of a dead worker's stderr its error message quotes
STDERR_TAIL = 2000
#: seconds a closing worker has to exit after its stdin closes
CLOSE_GRACE_S = 3.0


class WorkerUnavailable(Exception):
    """The worker could not be started, did not answer the handshake, or exited."""


class Connection:
    """One worker process and the requests in flight to it."""

    def __init__(self, argv: Sequence[str]) -> None:
        self.argv = tuple(argv)
        self.handshake: dict[str, Any] = {}
        self.served: frozenset[str] = frozenset()
        self.sessions: set[str] = set()
        #: the host sessions' ``file_changes`` feeds, by session id (the worker's changes
        #: are published into them)
        self.feeds: dict[str, FileChanges] = {}
        self.gone: str | None = None  # why the worker is gone, once it is
        #: the worker's identity when it outlives its host (a daemon: `detach_grace_s`)
        self.daemon: str | None = None
        self._proc: asyncio.subprocess.Process | None = None
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._progress: dict[int, Callable[[float, float | None, str | None], None]] = {}
        self._next = 0
        self._stderr = bytearray()
        self._tasks: list[asyncio.Task[Any]] = []

    @property
    def alive(self) -> bool:
        return self._proc is not None and self.gone is None

    async def open(
        self, owner: SessionView, timeout: float, extra: dict[str, Any] | None = None
    ) -> None:
        """Start the transport through the spawn door and shake hands (``extra``: more
        ``initialize`` parameters: ``detach``, ``attach``)."""
        try:
            boot = owner.host.worker_boot()
        except ValueError as exc:
            raise WorkerUnavailable(f"no worker was started: {exc}") from None
        await self._start(owner, timeout)
        await self._shake_hands(boot, timeout, extra)

    async def _start(self, owner: SessionView, timeout: float) -> None:
        """Start the transport (the worker's stdio become this connection's pipes) and
        the tasks that read them."""
        from .. import process

        try:
            prepared = process.prepare(
                owner,
                self.argv,
                sandbox="off",  # the user's own program (ssh, podman, bwrap): it confines
                cwd=os.getcwd(),  # the workspace need not exist here
                purpose="executor",
                lifetime="family",
            )
            self._proc = await prepared.start(
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=os.name == "posix",
                limit=LINE_LIMIT,
            )
        except OSError as exc:
            raise WorkerUnavailable(
                f"the executor transport {shlex.join(self.argv)} could not be started: "
                f"{exc.strerror or exc}"
            ) from None
        loop = asyncio.get_running_loop()
        self._tasks = [loop.create_task(self._read()), loop.create_task(self._read_stderr())]

    async def _shake_hands(
        self, boot: dict[str, Any], timeout: float, extra: dict[str, Any] | None = None
    ) -> None:
        """``initialize``: the protocol version checked, the tools the worker serves kept."""
        try:
            with _deadline(timeout):
                answer = await self.call(
                    "initialize",
                    {
                        "protocol": protocol.PROTOCOL,
                        "callgate": _version(),
                        "boot": boot,
                        **(extra or {}),
                    },
                )
        except TimeoutError:
            await self.close()
            raise WorkerUnavailable(
                f"the worker ({shlex.join(self.argv)}) did not answer the handshake within "
                f"{timeout:g} s{self._stderr_tail()}"
            ) from None
        except WorkerUnavailable:
            await self.close()
            raise
        except RuntimeError as exc:  # it answered the handshake with an error
            await self.close()
            raise WorkerUnavailable(
                f"the worker ({shlex.join(self.argv)}) refused the handshake: {exc}"
            ) from None
        if not isinstance(answer, dict) or answer.get("protocol") != protocol.PROTOCOL:
            await self.close()
            theirs = answer.get("protocol") if isinstance(answer, dict) else answer
            raise WorkerUnavailable(
                f"the worker speaks executor protocol {theirs!r}, this host "
                f"{protocol.PROTOCOL}: install the same callgate on both sides"
            )
        self.handshake = answer
        daemon = answer.get("daemon")
        self.daemon = daemon if isinstance(daemon, str) and daemon else None
        tools = (answer.get("capabilities") or {}).get("tools") or ()
        self.served = frozenset(t for t in tools if isinstance(t, str))

    async def call(
        self,
        method: str,
        params: dict[str, Any],
        progress: Callable[[float, float | None, str | None], None] | None = None,
    ) -> Any:
        """Send a request and wait for its result; `WorkerUnavailable` if the worker is gone
        (or goes) first, `RuntimeError` for an error answer."""
        if self.gone is not None or self._proc is None or self._proc.stdin is None:
            raise WorkerUnavailable(self.gone or "the worker is not running")
        self._next += 1
        ident = self._next
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[ident] = future
        if progress is not None:
            self._progress[ident] = progress
        try:
            self._proc.stdin.write(protocol.request(ident, method, params))
            return await future
        except (ConnectionError, RuntimeError) as exc:
            if self.gone is not None:
                raise WorkerUnavailable(self.gone) from None
            if isinstance(exc, ConnectionError):
                raise WorkerUnavailable(f"the worker's stdin closed: {exc}") from None
            raise
        finally:
            self._pending.pop(ident, None)
            self._progress.pop(ident, None)

    def notify(self, method: str, params: dict[str, Any]) -> None:
        if self.alive and self._proc is not None and self._proc.stdin is not None:
            with contextlib.suppress(ConnectionError, RuntimeError):
                self._proc.stdin.write(protocol.notification(method, params))

    async def _read(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        stdout = self._proc.stdout
        why = "the worker closed its output"
        try:
            while True:
                line = await stdout.readline()
                if not line:
                    break
                try:
                    message = protocol.decode(line)
                except ValueError:
                    why = f"the worker sent a line that is not a protocol message: {line[:200]!r}"
                    break
                self._deliver(message)
        except (ValueError, asyncio.LimitOverrunError):
            why = "the worker sent a line longer than the protocol allows"
        except Exception as exc:  # the reader must always fail the calls in flight
            why = f"reading from the worker failed: {exc}"
        await self._died(why)

    def _deliver(self, message: dict[str, Any]) -> None:
        ident = message.get("id")
        if ident is None:
            if message.get("method") == "session/file_changes":
                self._publish_changes(message.get("params") or {})
                return
            if message.get("method") == "tool/progress":
                params = message.get("params") or {}
                sink = self._progress.get(params.get("request"))  # type: ignore[arg-type]
                if sink is not None:
                    with contextlib.suppress(Exception):
                        sink(params.get("done", 0), params.get("total"), params.get("message"))
            return
        future = self._pending.get(ident)
        if future is None or future.done():
            return
        if "error" in message:
            err = message["error"] or {}
            future.set_exception(RuntimeError(str(err.get("message", "the worker failed"))))
        else:
            future.set_result(message.get("result"))

    def _publish_changes(self, params: dict[str, Any]) -> None:
        """The worker's changed files, published into the host session's feed (as the
        worker names them: its paths; a malformed entry is dropped)."""
        feed = self.feeds.get(params.get("session"))  # type: ignore[arg-type]
        changes = params.get("changes")
        if feed is None or not isinstance(changes, list):
            return
        batch = [
            FileChange(entry[0], entry[1], entry[2])
            for entry in changes
            if isinstance(entry, list)
            and len(entry) == 3
            and isinstance(entry[0], str)
            and entry[1] in ("created", "changed", "deleted")
            and entry[2] in ("tool", "watch")
        ]
        feed.publish(batch)

    async def _read_stderr(self) -> None:
        assert self._proc is not None and self._proc.stderr is not None
        while chunk := await self._proc.stderr.read(65536):
            self._stderr += chunk
            del self._stderr[: max(0, len(self._stderr) - STDERR_TAIL)]

    async def _died(self, why: str) -> None:
        proc = self._proc
        status = None
        if proc is not None:
            with contextlib.suppress(TimeoutError, ProcessLookupError), _deadline(1.0):
                status = await proc.wait()
        exited = f" (exit status {status})" if status is not None else ""
        self.gone = f"the worker ({shlex.join(self.argv)}) exited{exited}: {why}" + (
            self._stderr_tail()
        )
        for future in list(self._pending.values()):
            if not future.done():
                future.set_exception(WorkerUnavailable(self.gone))

    def _stderr_tail(self) -> str:
        tail = bytes(self._stderr).decode("utf-8", "replace").strip()
        return f"; its last words: {tail[-500:]}" if tail else ""

    async def close(self) -> None:
        """Close the worker's stdin (it ends its sessions and exits), then wait a little,
        then end its process group."""
        proc = self._proc
        if proc is None:
            return
        if self.gone is None:
            self.gone = "the session closed its worker"
        if proc.stdin is not None:
            with contextlib.suppress(Exception):
                proc.stdin.close()
        try:
            with _deadline(CLOSE_GRACE_S):
                await proc.wait()
        except TimeoutError:
            from .. import process

            with contextlib.suppress(Exception):
                process.kill_group(proc.pid)
        for task in self._tasks:
            task.cancel()


class Link:
    """The worker a session family shares: started on first use, again after it died."""

    def __init__(
        self, argv: Sequence[str], connect_timeout: float, detach_grace: float = 0.0
    ) -> None:
        self.argv = tuple(argv)
        self.connect_timeout = connect_timeout
        #: how long the worker outlives this host (``[executor] detach_grace_s``)
        self.detach_grace = detach_grace
        self.connection: Connection | None = None
        self.restarts = 0
        #: the worker a resumed session recorded is gone (a new one answered instead)
        self.lost: str | None = None
        self._lock: asyncio.Lock | None = None
        self.members = 0

    async def connected(self, owner: SessionView) -> tuple[Connection, bool]:
        """The live connection, started now if there is none or it died; and whether this
        replaced a worker that had died (its observations and jobs are gone)."""
        current = self.connection
        if current is not None and current.alive:
            return current, False
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            current = self.connection
            if current is not None and current.alive:
                return current, False
            replaced = current is not None
            if current is not None:
                await current.close()
            fresh = self.new_connection(owner)
            extra: dict[str, Any] = {}
            if self.detach_grace > 0:
                extra["detach"] = {"grace_s": self.detach_grace}
            attach = None if replaced else recorded_worker(owner, fresh.argv)
            if attach is not None:
                extra["attach"] = attach
            await fresh.open(owner, self.connect_timeout, extra)
            if attach is not None and fresh.daemon != attach:
                self.lost = attach
            self.connection = fresh
            if replaced:
                self.restarts += 1
            return fresh, replaced

    def new_connection(self, owner: SessionView) -> Connection:
        """A connection to a new worker of ``owner``'s family (not open yet)."""
        return Connection([a.replace("{session_id}", owner.id) for a in self.argv])


class RemoteExecutor:
    """Runs a session's calls on its worker (tools that declare ``runs_at="host"`` here).

    ``transport`` is the argv template; ``workspace`` the workspace as the worker sees it."""

    def __init__(
        self,
        transport: Sequence[str],
        workspace: str,
        *,
        connect_timeout: float = CONNECT_TIMEOUT_S,
        detach_grace: float = 0.0,
        link: Link | None = None,
    ) -> None:
        if not transport or not all(isinstance(a, str) and a for a in transport):
            raise ValueError("an executor transport is a non-empty list of non-empty strings")
        self.transport = tuple(transport)
        self.workspace = workspace
        argv = [a.replace("{workspace}", workspace) for a in transport]
        self.link = link or Link(argv, connect_timeout, detach_grace)
        self.link.members += 1
        self.name = "worker: " + shlex.join(self.link.argv)
        self._epochs: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()
        self._next_epoch = 0

    def for_child(self, child: SessionView) -> RemoteExecutor:
        return RemoteExecutor(self.transport, self.workspace, link=self.link)

    def _epoch(self, event: Any) -> int:
        """The host batch a call belongs to (a cancel reaches only that batch's calls)."""
        found = self._epochs.get(event)
        if found is None:
            self._next_epoch += 1
            found = self._epochs[event] = self._next_epoch
        return found

    async def dispatch(self, state: SessionState, step: Step) -> None:
        """The pipeline's last stage: run the judged call on the worker (or here, for a
        tool that runs at the host)."""
        tool = step.tool
        assert tool is not None
        if tool.runs_at == "host":
            await local_dispatch(state, step)
            return
        try:
            conn = await self._session_connection(state)
        except (WorkerUnavailable, RuntimeError) as exc:
            step.result = ToolResult.failure(
                "unavailable",
                f"{tool.name} was not run: {exc}",
                "executor:unavailable",
                {"executed": False},
            )
            return
        if tool.name not in conn.served:
            step.result = self._not_served(tool.name)
            return
        await self._run(state, step, conn)

    async def _session_connection(self, state: SessionState) -> Connection:
        """The worker, with this session open on it (`WorkerUnavailable` if it cannot be
        reached); a replaced worker is announced to the model."""
        conn, replaced = await self.link.connected(state.view)
        if replaced:
            state.notices.put(
                "callgate.executor",
                "[executor] the workspace's worker had exited and a new one was started: "
                "read files again before editing them; earlier background jobs are gone",
            )
        if state.id not in conn.sessions:
            conn.feeds[state.id] = state.file_changes
            opened = await conn.call("session/open", {"session": state.id})
            conn.sessions.add(state.id)
            self._record(state, conn)
            if isinstance(opened, dict) and opened.get("resumed") and state.view.resumed:
                state.notices.put(
                    "callgate.executor",
                    "[executor] reattached to this session's worker, which kept running "
                    "while the host was away: its background jobs are there (job_output "
                    "reads them)",
                )
            elif self.link.lost is not None and state.view.resumed:
                state.notices.put(
                    "callgate.executor",
                    "[executor] this session's worker from before the host restarted is "
                    "gone (its background jobs ended with it); a new one was started: read "
                    "files again before editing them",
                )
        return conn

    def _record(self, state: SessionState, conn: Connection) -> None:
        """The session records its executor in its store: the transport and the worker's
        identity from the handshake (a resume after a host restart reattaches to it)."""
        shake = conn.handshake
        record = {
            "transport": list(conn.argv),
            "daemon": conn.daemon,
            "pid": shake.get("pid"),
            "workspace": shake.get("workspace"),
            "callgate": shake.get("callgate"),
        }
        try:
            if state.view.storage.get(RECORD[0], RECORD[1]) != record:
                state.view.storage.put(RECORD[0], RECORD[1], record)
        except Exception:  # a store that cannot take it costs only the reattach
            log.exception("recording the session's worker failed")

    async def preview(self, state: SessionState, step: Step) -> tuple[Any, dict[str, Any]]:
        """The approval preview of an ``ask``, made by the worker where the files are (the
        host's copy of the workspace, if any, is not the one the call would change): the
        preview the approver sees and the file versions an approval binds to. A tool that
        refuses answers its result; a worker that cannot be reached answers
        ``unavailable`` and nothing runs (`Answered`)."""
        from .._pipeline.step import Answered

        tool = step.tool
        assert tool is not None
        try:
            conn = await self._session_connection(state)
            if tool.name not in conn.served:
                raise Answered(self._not_served(tool.name))
            reply = await conn.call(
                "tool/preview",
                {"session": state.id, "tool": tool.name, "call": protocol.call_to_wire(step.call)},
            )
        except (WorkerUnavailable, RuntimeError) as exc:
            raise Answered(
                ToolResult.failure(
                    "unavailable",
                    f"{tool.name} was not run: its approval preview could not be made: {exc}",
                    "executor:unavailable",
                    {"executed": False},
                )
            ) from None
        if "refused" in reply:
            raise Answered(protocol.result_from_wire(reply["refused"]))
        versions = {str(k): tuple(v) for k, v in (reply.get("versions") or {}).items()}
        return protocol.value_from_wire(reply.get("preview")), versions

    async def snapshot(self, state: SessionState, name: str) -> Any:
        """What the worker's session extension ``name`` reports of itself (a job table's
        jobs, for a dashboard of a remote session); `WorkerUnavailable` if it is gone."""
        conn = await self._session_connection(state)
        return await conn.call("session/snapshot", {"session": state.id, "extension": name})

    def delivered(self, session: SessionView, call_ids: Sequence[str]) -> None:
        """A batch's results reached the model: the host's plugins hear it (tools that ran
        here), and so do the worker's (``session/delivered``, written before any later
        call of this session, so the worker hears it first): the shell's job table there
        announces a finished job only once the model has seen its id."""
        session.host.hooks.results_delivered(call_ids, session)
        conn = self.link.connection
        if conn is not None and session.id in conn.sessions:
            conn.notify("session/delivered", {"session": session.id, "calls": list(call_ids)})

    @staticmethod
    def _not_served(name: str) -> ToolResult:
        return ToolResult.failure(
            "unavailable",
            f"{name} was not run: the workspace's worker does not serve it "
            "(the worker's callgate lacks the plugin); install it there",
            "executor:not_served",
            {"executed": False},
        )

    async def _run(self, state: SessionState, step: Step, conn: Connection) -> None:
        tool = step.tool
        assert tool is not None
        epoch = self._epoch(state.cancel_event)
        params = {
            "session": state.id,
            "epoch": epoch,
            "tool": tool.name,
            "call": protocol.call_to_wire(step.call),
            "read_only": step.read_only,
            "destructive": step.destructive,
            "expected": step.expected,
            "cancel_grace_s": state.cancel_grace_s,
        }
        handle = state.cancel_event.subscribe(
            lambda: conn.notify("tool/cancel", {"session": state.id, "epoch": epoch})
        )
        started = time.monotonic()
        sink = PROGRESS_SINK.get()
        reply: dict[str, Any] | None = None
        try:
            # the worker applies the grace itself; this waits a little longer for its answer
            answer: dict[str, Any] = await run_async(
                lambda: conn.call("tool/run", params, sink),
                state.cancel_event,
                state.cancel_grace_s + 2.0,
            )
            reply = answer
            result = protocol.result_from_wire(answer["result"])
        except Abandoned as exc:
            result = ToolResult.failure(
                "cancelled",
                f"{tool.name} was cancelled and {exc}, so the session stopped waiting for "
                "its worker; it may still be running, and what it has changed is unknown",
                "cancelled",
                {"abandoned": True},
            )
        except WorkerUnavailable as exc:
            result = ToolResult.failure(
                "unavailable",
                f"{tool.name} did not finish: {exc}. What it changed is unknown; the next "
                "call starts a new worker (read files again before editing them)",
                "executor:worker_exited",
                {"executed": "unknown"},
            )
        except (RuntimeError, KeyError, TypeError, ValueError) as exc:
            result = ToolResult.failure("tool_error", f"{tool.name} failed on its worker: {exc}")
        finally:
            state.cancel_event.unsubscribe(handle)
        ended = time.monotonic()
        if reply is not None:
            for source, text in reply.get("notices") or ():
                state.notices.put(str(source), str(text))
            gate = reply.get("gate")
            if gate:
                step.gate = (gate[0], gate[1])
        fact = reply.get("fact") if reply is not None else None
        # the worker answers a writer's fact only when it ran: one it answered without one
        # was refused by its gate and never ran, so it has no fact (issue 36.11); a call
        # whose worker never answered may have run, and keeps one
        ran = reply is None or fact is not None
        if ran and (not step.read_only or step.destructive):
            paths = tuple(fact.get("paths") or ()) if fact else ()
            held = float(fact.get("held_s") or 0.0) if fact else ended - started
            record.dispatched(state, step, result, paths, max(started, ended - held), ended)
        elif step.gate is not None and step.span is not None:
            record.event(step, step.gate)
        step.result = result

    async def close(self, session: SessionView) -> None:
        """Close this session's side on the worker; the family's last member ends it."""
        link = self.link
        link.members -= 1
        conn = link.connection
        if conn is None or not conn.alive:
            return
        conn.feeds.pop(session.id, None)
        if session.id in conn.sessions:
            conn.sessions.discard(session.id)
            with (
                contextlib.suppress(WorkerUnavailable, RuntimeError, TimeoutError),
                _deadline(CLOSE_GRACE_S),
            ):
                await conn.call("session/close", {"session": session.id})
        if link.members <= 0:
            await conn.close()


#: where a session keeps its executor in its store (`SessionStorage` namespace and key)
RECORD = ("callgate.executor", "worker")


def recorded_worker(owner: SessionView, argv: Sequence[str]) -> str | None:
    """The worker ``owner`` (a resumed session) recorded, when it was reached through this
    same transport and outlives its host (a daemon's identity); else ``None``. The store
    never names a program: a recorded transport that differs from the one configured now
    is not reattached to."""
    try:
        found = owner.storage.get(RECORD[0], RECORD[1])
    except Exception:
        return None
    if not isinstance(found, dict) or found.get("transport") != list(argv):
        return None
    daemon = found.get("daemon")
    return daemon if isinstance(daemon, str) and daemon else None


@contextlib.contextmanager
def _deadline(seconds: float) -> Any:
    """``asyncio.timeout`` as a plain context manager (TimeoutError when it expires)."""
    import anyio

    with anyio.fail_after(seconds):
        yield


def _version() -> str:
    from .._model import entrypoints  # not importlib.metadata (~45 modules)

    return entrypoints.version("callgate") or "0"


__all__ = [
    "CONNECT_TIMEOUT_S",
    "RECORD",
    "Connection",
    "Link",
    "RemoteExecutor",
    "WorkerUnavailable",
    "recorded_worker",
]
