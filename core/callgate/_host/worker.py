"""``callgate worker --workspace DIR``: one executor, served over stdio (issue 37).

The host judges every call (validation, hooks, permissions, approval) and sends the ones
that run next to the workspace here (`_executor.protocol`); the worker runs the host gate
and the tool exactly as a local session does (`pipeline.dispatch`: confinement beneath
held roots, the stale guard, protected paths, the sandbox around every program through
the spawn door, output caps) and answers the unshaped result. Shaping, notices and
records are the host's.

stdout carries the protocol alone: the worker moves its own file descriptor 1 to
stderr first, so a plugin or library that prints cannot corrupt it. When stdin closes
(the host closed the session or died), every session ends: its jobs and programs with it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
import threading
import time
from typing import Any

from .._executor import protocol
from .._model.errors import ToolError
from .._model.facts import ExecutionFact
from .._pipeline import pipeline
from .._pipeline.progress import PROGRESS_SINK
from .._pipeline.step import Step
from .._pipeline.worker import CancelEvent
from .._session.session import Session
from .host import Host

log = logging.getLogger("callgate")


class WorkerHost(Host):
    """A host whose execution facts go back to the calling host instead of staying here."""

    def __init__(self) -> None:
        super().__init__()
        self._taken: dict[tuple[str, str], ExecutionFact] = {}

    def config(self, table: str) -> dict[str, Any]:
        """The config, with no session store: the host records its sessions; the worker's
        sessions only run calls."""
        found = super().config(table)
        return {**found, "record": "off"} if table == "sessions" else found

    def record_fact(self, fact: ExecutionFact) -> None:
        self._taken[(fact.session, fact.call_id)] = fact

    def take_fact(self, session: str, call_id: str) -> ExecutionFact | None:
        return self._taken.pop((session, call_id), None)


class Output:
    """The protocol's stdout: whole lines, from any thread."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._lock = threading.Lock()

    def write(self, data: bytes) -> None:
        with self._lock:
            view = memoryview(data)
            while view:
                written = os.write(self._fd, view)
                view = view[written:]


class WorkerSession:
    """The worker's side of one host session."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.epoch: int | None = None
        #: a batch the host cancelled before its first call reached here (the host writes
        #: the cancel the moment it subscribes, which can be before the call's request)
        self.cancelled_epoch: int | None = None


class Worker:
    """Serves the executor protocol for one workspace."""

    def __init__(self, workspace: str, out: Output, daemon: str | None = None) -> None:
        self._host: WorkerHost | None = None
        self.workspace = os.path.realpath(workspace)
        self.out = out
        self.sessions: dict[str, WorkerSession] = {}
        self.tasks: set[asyncio.Task[Any]] = set()
        #: this worker's identity when it is a daemon that outlives its host
        #: (`worker_daemon`), and how long it waits for a host to come back
        self.daemon = daemon
        self.grace_s = 0.0
        #: no host has connected yet (a daemon waits for its first without a deadline)
        self.first = True

    @property
    def host(self) -> WorkerHost:
        if self._host is None:
            raise ValueError("initialize first")
        return self._host

    def boot(self, boot: dict[str, Any] | None) -> WorkerHost:
        """Boot as the calling host says (its config as this worker's user config, its
        plugins), or, without a word from it, from this machine's own config and every
        installed plugin. The worker's workspace config layers on top, as it would here."""
        if boot is None:
            return WorkerHost.boot(None, workspace=self.workspace)
        import importlib

        # what the host's plugins pass their programs and the transport could not carry
        # (`Host.worker_environ`): secrets only when the user's config passes them
        for name, value in (boot.get("environ") or {}).items():
            if isinstance(name, str) and isinstance(value, str) and "\0" not in name + value:
                os.environ[name] = value
        return WorkerHost.boot(
            None,
            workspace=self.workspace,
            user_config=dict(boot.get("config") or {}),
            entrypoints=list(boot.get("entry_points") or ()),
            plugins=[importlib.import_module(m) for m in boot.get("modules") or ()],
            surface=boot.get("surface"),
            os=boot.get("os") or "auto",
        )

    def served(self) -> list[str]:
        return sorted(s.name for s in self.host.session_tools() if s.runs_at != "host")

    def handshake(self, params: dict[str, Any]) -> dict[str, Any]:
        theirs = params.get("protocol")
        if theirs != protocol.PROTOCOL:
            raise ValueError(
                f"this worker speaks executor protocol {protocol.PROTOCOL}, not {theirs!r}"
            )
        from .._executor.remote import _version

        if self._host is None:
            self._host = self.boot(params.get("boot"))
        detach = params.get("detach")
        if self.daemon is not None and isinstance(detach, dict):
            grace = detach.get("grace_s")
            if isinstance(grace, int | float) and not isinstance(grace, bool) and grace >= 0:
                self.grace_s = float(grace)
        return {
            "daemon": self.daemon,
            "sessions": sorted(self.sessions),
            "protocol": protocol.PROTOCOL,
            "callgate": _version(),
            "os": sys.platform,
            "platform": self.host.os,
            "workspace": self.workspace,
            "pid": os.getpid(),
            "capabilities": {
                "tools": self.served(),
                "cancel": True,
                "progress": True,
                "notices": True,
                "sessions": True,
                "preview": True,
                "file_changes": True,
            },
        }

    async def serve(self, reader: asyncio.StreamReader, *, close_sessions: bool = True) -> None:
        """Answer one host until its input ends; then end every session (their jobs with
        them), unless ``close_sessions`` is false (a daemon keeps them for a host that
        comes back)."""
        try:
            while True:
                line = await reader.readline()
                if not line:
                    break
                try:
                    message = protocol.decode(line)
                except ValueError:
                    self.out.write(protocol.error(None, protocol.PARSE_ERROR, "not JSON"))
                    continue
                self._handle(message)
        finally:
            if not close_sessions:  # nobody will read the calls in flight: end them (a
                for ws in self.sessions.values():  # foreground command's process group)
                    ws.session.cancel()  # but keep the sessions and their jobs
            for task in list(self.tasks):
                task.cancel()
            if close_sessions:
                await self.close_sessions()

    async def close_sessions(self) -> None:
        for ws in list(self.sessions.values()):
            with contextlib.suppress(Exception):
                await ws.session.close()
        self.sessions.clear()

    def _handle(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        params = message.get("params") or {}
        ident = message.get("id")
        if method == "tool/cancel":
            ws = self.sessions.get(params.get("session", ""))
            if ws is not None:
                if ws.epoch == params.get("epoch"):
                    ws.session.cancel()
                else:
                    ws.cancelled_epoch = params.get("epoch")
            return
        if method == "session/delivered":  # before any later request: a batch ended there
            ws = self.sessions.get(params.get("session", ""))
            calls = params.get("calls")
            if ws is not None and isinstance(calls, list):
                ids = [c for c in calls if isinstance(c, str)]
                try:
                    self.host.hooks.results_delivered(ids, ws.session)
                except Exception:
                    log.exception("callgate_results_delivered failed")
            return
        if ident is None:
            return  # an unknown notification
        task = asyncio.get_running_loop().create_task(self._answer(ident, method, params))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _answer(self, ident: Any, method: Any, params: dict[str, Any]) -> None:
        try:
            if method == "initialize":
                result: Any = self.handshake(params)
            elif method == "session/open":
                result = self._open(params["session"])
            elif method == "session/close":
                ws = self.sessions.pop(params["session"], None)
                if ws is not None:
                    await ws.session.close()
                result = {}
            elif method == "tool/run":
                result = await self._run(ident, params)
            elif method == "tool/preview":
                result = await self._preview(params)
            elif method == "session/snapshot":
                result = self._snapshot(params)
            else:
                self.out.write(
                    protocol.error(ident, protocol.METHOD_NOT_FOUND, f"no method {method!r}")
                )
                return
        except (KeyError, TypeError, ValueError) as exc:
            self.out.write(protocol.error(ident, protocol.INVALID_PARAMS, str(exc)))
            return
        except Exception as exc:
            log.exception("the worker failed on %s", method)
            self.out.write(protocol.error(ident, protocol.INTERNAL, f"{type(exc).__name__}: {exc}"))
            return
        self.out.write(protocol.response(ident, result))

    def _open(self, sid: str) -> dict[str, Any]:
        """Open the host session ``sid``'s side here; ``resumed``: it was open already (a
        daemon kept it, its jobs running, while its host was away)."""
        resumed = sid in self.sessions
        if resumed:  # a new host numbers its batches afresh: forget the old one's
            kept = self.sessions[sid]
            kept.epoch = kept.cancelled_epoch = None
        else:
            session = self.host.open_session(self.workspace)
            session.file_changes.subscribe(self._forward_changes(sid))
            self.sessions[sid] = WorkerSession(session)
        return {"workspace": self.workspace, "resumed": resumed}

    def _forward_changes(self, sid: str) -> Any:
        """What the session's tools (and watcher) changed here goes to the host's session
        feed too (``session/file_changes``): its plugins (a language server) hear of the
        worker's edits. Written on the publisher's thread, so a tool's changes precede its
        call's answer on the wire, as locally they precede its shaping."""

        def forward(batch: Any) -> None:
            changes = [[c.path, c.kind, c.origin] for c in batch]
            self.out.write(
                protocol.notification("session/file_changes", {"session": sid, "changes": changes})
            )

        return forward

    def _snapshot(self, params: dict[str, Any]) -> Any:
        """What a session extension here reports of itself (`Session.snapshot`)."""
        from .._model.keys import SessionKey

        session = self.sessions[params["session"]].session
        return session.local_snapshot(SessionKey(str(params["extension"])))

    def _served_tool(self, state: Any, name: str) -> Any:
        tool = state.tools.get(name) or self.host.registry.get(name)
        if tool is None or tool.execute is None or tool.runs_at == "host":
            raise ValueError(f"this worker does not serve tool {name!r}")
        return tool

    async def _preview(self, params: dict[str, Any]) -> dict[str, Any]:
        """The approval preview of an ``ask``, made here where the files are, as the host
        makes it for a local session (`pipeline._preview`: the gate's dry run, then the
        tool's ``preview``); a tool's refusal comes back as its result."""
        import anyio

        state = self.sessions[params["session"]].session.state
        tool = self._served_tool(state, params["tool"])
        if tool.preview is None:
            raise ValueError(f"tool {tool.name!r} has no preview")
        call = protocol.call_from_wire(params["call"])
        step = Step(call, call, tool=tool)
        try:
            preview, versions = await anyio.to_thread.run_sync(pipeline._preview, state, step)
        except ToolError as exc:
            return {"refused": protocol.result_to_wire(exc.to_result())}
        return {
            "preview": protocol.value_to_wire(preview),
            "versions": {k: list(v) for k, v in versions.items()},
        }

    async def _run(self, ident: Any, params: dict[str, Any]) -> dict[str, Any]:
        ws = self.sessions[params["session"]]
        session = ws.session
        state = session.state
        epoch = params.get("epoch")
        if epoch != ws.epoch:  # a new host batch: a fresh cancel, as `Session.run_batch` makes
            ws.epoch = epoch
            if state.cancel_event.is_set():
                state.cancel_event = CancelEvent()
            if ws.cancelled_epoch is not None and ws.cancelled_epoch == epoch:
                state.cancel_event.set()  # its tools see ctx.cancelled, as locally
        tool = self._served_tool(state, params["tool"])
        grace = params.get("cancel_grace_s")
        if isinstance(grace, int | float) and grace >= 0:
            state.cancel_grace_s = float(grace)  # the host's, so both give up alike
        call = protocol.call_from_wire(params["call"])
        expected = params.get("expected")
        step = Step(
            call,
            call,
            tool=tool,
            read_only=bool(params.get("read_only")),
            destructive=bool(params.get("destructive")),
            expected={k: tuple(v) for k, v in expected.items()} if expected else None,
        )
        out = self.out

        def progress(done: float, total: float | None, message: str | None) -> None:
            out.write(
                protocol.notification(
                    "tool/progress",
                    {"request": ident, "done": done, "total": total, "message": message},
                )
            )

        token = PROGRESS_SINK.set(progress)
        started = time.perf_counter()
        try:
            await pipeline.dispatch(state, step)
        finally:
            PROGRESS_SINK.reset(token)
        took = time.perf_counter() - started
        assert step.result is not None
        fact = self.host.take_fact(state.id, call.id)
        return {
            "result": protocol.result_to_wire(step.result),
            "notices": session.notices.drain_items(),
            "fact": None
            if fact is None
            else {"paths": list(fact.paths), "held_s": max(0.0, fact.ended - fact.started)},
            "gate": list(step.gate) if step.gate is not None else None,
            "took_s": took,  # the worker's own time: the rest of the round trip is transport
        }


async def _stdin_reader() -> asyncio.StreamReader:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 30)
    await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(0, "rb", buffering=0)
    )
    return reader


def serve(workspace: str) -> int:
    """Serve the protocol for ``workspace`` on stdio until EOF (the host boots the worker's
    plugins and config in its ``initialize``).

    An ``initialize`` that asks for a grace period (``detach``) or names a daemon to
    reattach to (``attach``) makes this worker a relay to a daemon that outlives the
    host (`worker_daemon`): the named one if it is still there, else a new one."""
    out = Output(os.dup(1))
    os.dup2(2, 1)  # from now on, whatever prints goes to stderr, never into the protocol
    sys.stdout = sys.stderr

    async def main() -> None:
        reader = await _stdin_reader()
        first = await reader.readline()
        path = _daemon_for(first, workspace, out)
        if path is not None:
            await _relay(first, path, reader, out)
            return
        worker = Worker(workspace, out)
        if first:
            try:
                worker._handle(protocol.decode(first))
            except ValueError:
                out.write(protocol.error(None, protocol.PARSE_ERROR, "not JSON"))
        await worker.serve(reader)

    asyncio.run(main())
    return 0


def serve_daemon(workspace: str, path: str) -> int:
    """The daemon: serve one host connection at a time on ``path``; exit when a host
    leaves with no session open, or when none came back within the grace period."""
    import socket

    from . import worker_daemon

    out = worker_daemon.SocketOutput()
    ident = os.path.basename(path).removesuffix(".sock")
    worker = Worker(workspace, out, daemon=worker_daemon.check_identity(ident))  # type: ignore[arg-type]
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o077)
    try:
        with worker_daemon.address(path + ".new") as bound:
            listener.bind(bound)
    finally:
        os.umask(old)
    listener.listen(4)
    os.replace(path + ".new", path)  # the host's worker waits for the name

    async def main() -> None:
        loop = asyncio.get_running_loop()
        listener.setblocking(False)
        try:
            while True:
                try:
                    timeout = None if worker.first else worker.grace_s
                    conn = await asyncio.wait_for(loop.sock_accept(listener), timeout)
                except TimeoutError:
                    log.info("no host came back within %g s: closing", worker.grace_s)
                    break
                sock = conn[0]
                if worker_daemon.peer_uid(sock) not in (None, os.getuid()):
                    sock.close()  # not this user (the directory is private: belt and braces)
                    continue
                worker.first = False
                reader, writer = await asyncio.open_unix_connection(sock=sock, limit=1 << 30)
                out.sock = sock
                await worker.serve(reader, close_sessions=False)
                out.sock = None
                writer.close()
                if not worker.sessions:
                    break
        finally:
            await worker.close_sessions()
            with contextlib.suppress(OSError):
                os.unlink(path)
            with contextlib.suppress(OSError):
                os.unlink(path[: -len(".sock")] + ".log")

    asyncio.run(main())
    return 0


def _daemon_for(first: bytes, workspace: str, out: Output) -> str | None:
    """The socket of the daemon this host's ``initialize`` asks for: the one it names
    (``attach``), if it still listens, else a new one when it asks for a grace period
    (``detach``); ``None``: serve here (no grace asked, or no daemon could start, which
    the host hears of as a handshake without one)."""
    from . import worker_daemon

    try:
        params = protocol.decode(first).get("params") or {}
    except ValueError:
        return None
    if not isinstance(params, dict) or protocol.decode(first).get("method") != "initialize":
        return None
    detach, attach = params.get("detach"), worker_daemon.check_identity(params.get("attach"))
    try:
        if attach is not None:
            path = worker_daemon.socket_path(attach)
            if _listens(path):
                return path
        if isinstance(detach, dict) and detach.get("grace_s"):
            return worker_daemon.start(workspace)[1]
    except (worker_daemon.DaemonUnavailable, OSError) as exc:
        log.warning("serving without a daemon: %s", exc)
    return None


def _listens(path: str) -> bool:
    import socket

    from . import worker_daemon

    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        try:
            with worker_daemon.address(path) as reach:
                probe.connect(reach)
        except (OSError, worker_daemon.DaemonUnavailable):
            return False
    return True


async def _relay(first: bytes, path: str, reader: asyncio.StreamReader, out: Output) -> None:
    """Copy the host's messages (``first`` included) to the daemon and its answers back."""
    from . import worker_daemon

    with worker_daemon.address(path) as reach:
        d_reader, d_writer = await asyncio.open_unix_connection(reach, limit=1 << 30)
    d_writer.write(first)

    async def up() -> None:
        while chunk := await reader.read(1 << 16):
            d_writer.write(chunk)
            await d_writer.drain()
        with contextlib.suppress(OSError):
            d_writer.write_eof()

    async def down() -> None:
        while chunk := await d_reader.read(1 << 16):
            out.write(chunk)

    # until the daemon closes: after the host's input ends, its answers still come back
    sending = asyncio.ensure_future(up())
    try:
        await down()
    finally:
        sending.cancel()
        d_writer.close()


__all__ = ["Worker", "WorkerHost", "serve", "serve_daemon"]


if __name__ == "__main__":  # the daemon `worker_daemon.start` starts: WORKSPACE SOCKET
    sys.exit(serve_daemon(sys.argv[1], sys.argv[2]))
