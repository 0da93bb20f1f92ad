"""One session's MCP children, driven by the official ``mcp`` SDK on a private loop thread.

Sessions are driven from many event loops and threads (the sync facade, replay,
``callgate serve``), while an MCP connection is a set of anyio tasks bound to
the loop that opened it. So each session owns one daemon thread running its
own asyncio loop; connects and calls are coroutines submitted to it. A caller on an
asyncio loop awaits the returned future (`McpRuntime.result`: one wake-up each way, no
worker thread in between); a blocking caller waits on it (`McpRuntime.wait`, watching for
cancellation).

A connection is held open by one task per server: ``stdio_client`` (the SDK
spawns the child, prepared by the core's door, `callgate.process`, in its own process
group and, on exit, closes stdin, waits, then kills the tree; what escaped the group
ends with the session family) and ``ClientSession``; ``initialize`` and a full
``tools/list`` run before the server counts as connected. Only this module
imports ``mcp``: without the SDK the rest of the plugin still works.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import json
import logging
import os
import re
import signal
import threading
from collections import deque
from collections.abc import Callable, Coroutine
from typing import Any

import anyio
import anyio.abc
import attrs
from callgate import process
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp import types as mcp_types

log = logging.getLogger("callgate.capability")

MAX_PAGES = 50
#: A message from a server (one line of its stdout) longer than this is dropped while it
#: streams in, never held whole: a result over it fails its call with a clear error.
MAX_MESSAGE_BYTES = 16 << 20
#: The JSON-RPC error code of that failure (the implementation-defined server range).
MESSAGE_TOO_LARGE = -32099
TAIL_LINES = 20
TAIL_BYTES = 2048
_POLL_S = 0.5
#: how often a call in flight checks that its server's process group is whole
_WATCH_S = 0.1
#: the longest a call's answer waits for the server's earlier log messages to be relayed
_RELAY_WAIT_S = 5.0


@attrs.frozen
class Launch:
    """Everything needed to start one server (env already expanded; ``prepared``: its
    program through the core's door, `callgate.process`)."""

    name: str
    identity: str
    command: str
    args: tuple[str, ...]
    env: dict[str, str]
    cwd: str
    startup_timeout_s: float
    log_path: str
    prepared: process.Prepared = attrs.field(eq=False, repr=False)
    #: the session's workspace, answered to the server's ``roots/list``
    workspace: str = ""
    #: what the server's requests go to when no call of the session runs on it (its logs),
    #: and whether sampling is declared (some plugin relays it)
    relay: Any = attrs.field(default=None, eq=False, repr=False)
    can_sample: bool = attrs.field(default=False, eq=False)


class StartFailure(Exception):
    """A server did not come up: ``reason`` is one short clause, ``stderr`` its tail."""

    def __init__(self, reason: str, stderr: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.stderr = stderr


class ServerGone(Exception):
    """The server exited (or its connection closed) while a call was pending."""

    def __init__(self, reason: str, stderr: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.stderr = stderr


class CallTimedOut(Exception):
    """``tools/call`` sent, no answer within the server's ``call_timeout_s``."""


class NotConnected(Exception):
    """The server has no live connection (never started, failed, or exited)."""


class Cancelled(Exception):
    """The integrator cancelled the batch while we waited for the loop thread."""


# --- which process did stdio_client spawn? -------------------------------------------
#
# The SDK does not hand out the child process, but an exit code ("exited with
# code 3") and a fast kill of a server that hangs while starting need it. We
# wrap the SDK's process factory once; the wrapper reports each process to
# the connection task that asked for it (a context variable), and does
# nothing else. If a future SDK renames the factory, exit codes are simply
# not reported.

_SPAWN_SINK: contextvars.ContextVar[list[Any] | None] = contextvars.ContextVar(
    "callgate_mcp_spawn_sink", default=None)
_probe_lock = threading.Lock()


def _install_spawn_probe() -> None:
    from mcp.client import stdio as sdk_stdio

    with _probe_lock:
        original = getattr(sdk_stdio, "_create_platform_compatible_process", None)
        if original is None or getattr(original, "_callgate_probe", False):
            return

        async def probe(*args: Any, **kwargs: Any) -> Any:
            process = await original(*args, **kwargs)
            if isinstance(process, anyio.abc.Process) and process.stdout is not None:
                process = _CappedProcess(process, MAX_MESSAGE_BYTES)
            sink = _SPAWN_SINK.get()
            if sink is not None:
                sink.append(process)
            return process

        probe._callgate_probe = True  # type: ignore[attr-defined]
        sdk_stdio._create_platform_compatible_process = probe  # type: ignore[attr-defined]


_ID_AT_START = re.compile(
    rb'^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")')
_ID_AT_END = re.compile(
    rb'"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")\s*(?:,\s*"jsonrpc"\s*:\s*"2\.0"\s*)?\}\s*$')
_HEAD_BYTES = 4096
_TAIL_BYTES = 512


class _LineCap(anyio.abc.ByteReceiveStream):
    """A server's stdout, passed on one whole line at a time, each at most ``limit`` bytes.

    A longer line is dropped as it arrives (only its first and last few bytes are
    kept, to find its JSON-RPC id) and replaced by an error response to that id,
    so the call it answers fails at once with a clear reason; memory stays
    bounded by ``limit`` whatever the server sends.
    """

    def __init__(self, inner: anyio.abc.ByteReceiveStream, limit: int) -> None:
        self._inner = inner
        self._limit = limit
        self._line = bytearray()
        self._ready: deque[bytes] = deque()
        self._dropping = False
        self._dropped = 0
        self._head = b""
        self._tail = b""

    async def receive(self, max_bytes: int = 65536) -> bytes:
        while not self._ready:
            self._feed(await self._inner.receive(max_bytes))
        return self._ready.popleft()

    async def aclose(self) -> None:
        await self._inner.aclose()

    def _feed(self, chunk: bytes) -> None:
        start = 0
        while start < len(chunk):
            end = chunk.find(b"\n", start)
            if end < 0:
                self._take(chunk[start:], complete=False)
                return
            self._take(chunk[start:end + 1], complete=True)
            start = end + 1

    def _take(self, piece: bytes, complete: bool) -> None:
        if not self._dropping:
            if len(self._line) + len(piece) <= self._limit + 1:
                self._line += piece
                if complete:
                    self._ready.append(bytes(self._line))
                    self._line.clear()
                return
            self._dropping = True
            self._head = (bytes(self._line[:_HEAD_BYTES]) + piece[:_HEAD_BYTES])[:_HEAD_BYTES]
            self._dropped = len(self._line)
            self._line.clear()
        self._dropped += len(piece)
        self._tail = (self._tail + piece[-_TAIL_BYTES:])[-_TAIL_BYTES:]
        if complete:
            self._dropping = False
            replacement = self._replacement()
            if replacement is not None:
                self._ready.append(replacement)

    def _replacement(self) -> bytes | None:
        match = _ID_AT_START.match(self._head) or _ID_AT_END.search(self._tail)
        size, self._head, self._tail = self._dropped, b"", b""
        if match is None:
            log.warning("dropped a %d-byte message from an MCP server (over %d bytes, no id "
                        "found)", size, self._limit)
            return None
        message = (f"callgate: the server's answer was {size:,} bytes, over the "
                   f"{self._limit:,}-byte limit for one MCP message; it was dropped unread")
        error = json.dumps({"code": MESSAGE_TOO_LARGE, "message": message})
        return b'{"jsonrpc":"2.0","id":' + match.group(1) + b',"error":' + \
            error.encode() + b"}\n"


class _CappedProcess(anyio.abc.Process):
    """The SDK's server process with its stdout read through `_LineCap`."""

    def __init__(self, process: anyio.abc.Process, limit: int) -> None:
        self._wrapped = process
        assert process.stdout is not None
        self._stdout = _LineCap(process.stdout, limit)

    @property
    def _process(self) -> Any:  # the SDK closes the asyncio transport through this
        return getattr(self._wrapped, "_process", None)

    async def aclose(self) -> None:
        await self._wrapped.aclose()

    async def wait(self) -> int:
        return await self._wrapped.wait()

    def terminate(self) -> None:
        self._wrapped.terminate()

    def kill(self) -> None:
        self._wrapped.kill()

    def send_signal(self, signal: int) -> None:  # type: ignore[override]
        self._wrapped.send_signal(signal)  # type: ignore[arg-type]

    @property
    def pid(self) -> int:
        return self._wrapped.pid

    @property
    def returncode(self) -> int | None:
        return self._wrapped.returncode

    @property
    def stdin(self) -> anyio.abc.ByteSendStream | None:
        return self._wrapped.stdin

    @property
    def stdout(self) -> anyio.abc.ByteReceiveStream | None:
        return self._stdout

    @property
    def stderr(self) -> anyio.abc.ByteReceiveStream | None:
        return self._wrapped.stderr


def _leaf(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def seconds(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def stderr_tail(path: str, offset: int) -> str:
    """The last ≤20 lines / 2 KiB a child wrote to stderr since ``offset``, UTF-8 safe."""
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            end = fh.tell()
            start = max(offset, end - 64 * 1024)
            fh.seek(start)
            data = fh.read(end - start)
    except OSError:
        data = b""
    lines = data.rstrip(b"\r\n").splitlines()[-TAIL_LINES:]
    text = b"\n".join(lines)
    if len(text) > TAIL_BYTES:
        text = text[-TAIL_BYTES:]
        while text and (text[0] & 0xC0) == 0x80:  # never start inside a character
            text = text[1:]
    decoded = text.decode("utf-8", "replace").strip("\n")
    return decoded if decoded.strip() else "(no stderr output)"


class Connection:
    """One live (or starting, or failed) child and its client session."""

    def __init__(self, launch: Launch) -> None:
        self.launch = launch
        self.status = "starting"
        self.tools: list[mcp_types.Tool] = []
        #: the relays of the calls in flight on this server, oldest first: its requests
        #: (elicitation, sampling) and logs belong to the oldest (`_relay.CallRelay`)
        self.callers: list[Any] = []
        #: log messages on their way to a caller's relay (`_on_log`): a call's answer waits
        #: for them, so what the server logged before answering reaches the client first
        self.relaying: set[asyncio.Future[Any]] = set()
        self.server_info: dict[str, Any] = {}
        self.session: ClientSession | None = None
        self.process: Any = None
        self.failure: str | None = None
        self._stop: anyio.Event | None = None
        self._scope: anyio.CancelScope | None = None
        self._task: asyncio.Task[None] | None = None
        self._ready: asyncio.Future[None] | None = None
        self._timed_out = False
        self._stopping = False
        self._exit_at_failure: int | None = None
        self._log_offset = 0
        #: the processes of the child's group when it was ready (the server behind a
        #: wrapper such as ``bash -c "server | tee log"`` among them)
        self.members: frozenset[int] = frozenset()

    @property
    def pid(self) -> int | None:
        return getattr(self.process, "pid", None)

    @property
    def alive(self) -> bool:
        if self.status != "connected":
            return False
        return self.process is None or self.process.returncode is None

    def tail(self) -> str:
        return stderr_tail(self.launch.log_path, self._log_offset)

    def lost_member(self) -> bool:
        """Whether the child, or a process of its group that was there when it became
        ready, has died: behind a wrapper the pipe may stay open after the server died."""
        if self.process is not None and self.process.returncode is not None:
            return True
        return any(not _running(pid) for pid in self.members)

    # --- start ---------------------------------------------------------------

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        self._ready = loop.create_future()
        self._stop = anyio.Event()
        os.makedirs(os.path.dirname(self.launch.log_path), exist_ok=True)
        errlog = open(self.launch.log_path, "ab")  # noqa: SIM115 - closed by _hold
        self._log_offset = errlog.tell()
        self._task = loop.create_task(self._hold(errlog))
        try:
            await asyncio.wait_for(asyncio.shield(self._ready), self.launch.startup_timeout_s)
        except TimeoutError:
            self._timed_out = True
            self.kill_tree()
            if self._scope is not None:
                self._scope.cancel()
            await asyncio.wait({self._task}, timeout=10)
            self.status = "failed"
            reason = f"did not finish starting within {seconds(self.launch.startup_timeout_s)} s"
            self.failure = reason
            raise StartFailure(reason, self.tail()) from None

    async def _hold(self, errlog: Any) -> None:
        sink: list[Any] = []
        _SPAWN_SINK.set(sink)
        error: BaseException | None = None
        # the program as the core's door prepared it: sandbox, environment, lifetime
        command, *args = self.launch.prepared.argv
        params = StdioServerParameters(command=command, args=args,
                                       env=dict(self.launch.prepared.env),
                                       cwd=self.launch.prepared.cwd)
        try:
            with anyio.CancelScope() as scope:
                self._scope = scope
                async with stdio_client(params, errlog=errlog) as (read, write):
                    self.process = sink[0] if sink else None
                    try:
                        await self._serve(read, write)
                    except Exception:
                        await self._settle_exit(1.0)
                        self._exit_at_failure = getattr(self.process, "returncode", None)
                        raise
        except Exception as exc:
            error = _leaf(exc)
        finally:
            errlog.close()
        assert self._ready is not None
        if not self._ready.done():
            self.status = "failed"
            reason = self._start_reason(error)
            self.failure = reason
            if self._timed_out:  # start() has already answered the caller
                self._ready.cancel()
            else:
                self._ready.set_exception(StartFailure(reason, self.tail()))
        elif not self._stopping:
            self.status = "failed"
            self.failure = self._exit_reason(error)
        else:
            self.status = "stopped"

    async def _serve(self, read: Any, write: Any) -> None:
        from callgate import __version__

        info = mcp_types.Implementation(name="callgate", version=__version__)
        # callgate is a full host: it declares elicitation and roots, and sampling when a
        # plugin relays it; what the server asks goes to the call in flight (`_relay`)
        sampling = self._on_sample if self.launch.can_sample else None
        async with ClientSession(read, write, client_info=info,
                                 elicitation_callback=self._on_elicit,
                                 sampling_callback=sampling, logging_callback=self._on_log,
                                 list_roots_callback=self._on_roots) as session:
            init = await session.initialize()
            tools: list[mcp_types.Tool] = []
            cursor: str | None = None
            for _ in range(MAX_PAGES):
                params = mcp_types.PaginatedRequestParams(cursor=cursor) if cursor else None
                page = await session.list_tools(params=params)
                tools.extend(page.tools)
                cursor = page.next_cursor
                if not cursor:
                    break
            self.session = session
            self.tools = tools
            server = init.server_info
            self.server_info = {"name": server.name, "version": server.version} if server else {}
            self.status = "connected"
            self.members = group_members(self.pid)
            assert self._ready is not None
            self._ready.set_result(None)
            await self._watch()
            self.session = None

    # --- what the server asks of its host (issue 34, item 5) -------------------------------

    def _caller(self) -> Any:
        return self.callers[0] if self.callers else None

    def _relayed(self, fn: Callable[..., Any], *args: Any) -> asyncio.Future[Any]:
        """``fn(*args)`` in a worker thread (an integrator's hook may block): await it."""
        return asyncio.get_running_loop().run_in_executor(None, fn, *args)

    async def _on_elicit(self, context: Any, params: Any) -> Any:
        relay = self._caller()
        if relay is None:
            return mcp_types.ErrorData(
                code=mcp_types.INVALID_REQUEST,
                message="callgate: no call to this server is running, so there is no user "
                        "to ask; ask while a tool call runs")
        request = params.model_dump(by_alias=True, mode="json", exclude_none=True)
        request.setdefault("mode", "form")
        answer = await self._relayed(relay.elicit, request)
        if answer is None:
            return mcp_types.ErrorData(
                code=mcp_types.INVALID_REQUEST,
                message="callgate cannot ask the user here: its client cannot answer "
                        "this kind of elicitation (or nobody is there to answer)")
        try:
            return mcp_types.ElicitResult.model_validate(answer)
        except ValueError:
            log.warning("an elicitation answer for %s did not fit ElicitResult", self.launch.name)
            return mcp_types.ElicitResult(action="cancel")

    async def _on_sample(self, context: Any, params: Any) -> Any:
        relay = self._caller()
        if relay is None:
            return mcp_types.ErrorData(
                code=mcp_types.INVALID_REQUEST,
                message="callgate: no call to this server is running; sampling is relayed "
                        "only while a tool call runs")
        request = params.model_dump(by_alias=True, mode="json", exclude_none=True)
        answer = await self._relayed(relay.sample, request)
        if answer is None:
            return mcp_types.ErrorData(code=mcp_types.INVALID_REQUEST,
                                       message="callgate: sampling was refused (no model to "
                                               "ask for this session)")
        kind: Any = mcp_types.CreateMessageResult
        if request.get("tools"):
            kind = mcp_types.CreateMessageResultWithTools
        try:
            return kind.model_validate(answer)
        except ValueError:
            return mcp_types.ErrorData(code=mcp_types.INTERNAL_ERROR,
                                       message="callgate: the sampler's answer did not fit "
                                               "CreateMessageResult")

    async def _on_log(self, params: Any) -> None:
        message = params.model_dump(by_alias=True, mode="json", exclude_none=True)
        try:  # recorded beside the server's stderr, whoever else sees it
            line = json.dumps(message.get("data"), ensure_ascii=False, default=str)
            with open(self.launch.log_path, "a", encoding="utf-8") as fh:
                fh.write(f"[mcp log {message.get('level')}] "
                         f"{message.get('logger') or self.launch.name}: {line}\n")
        except OSError:
            pass
        relay = self._caller() or self.launch.relay
        if relay is not None:
            sent = self._relayed(relay.log, message)
            self.relaying.add(sent)
            sent.add_done_callback(self.relaying.discard)
            await sent

    async def logs_relayed(self) -> None:
        """Wait for the log messages already received to reach their relay (a caller's
        answer must not overtake what the server logged before it). The SDK hands each
        notification to a task of its own, started before the answer that followed it:
        one turn of the loop lets those tasks take their relay."""
        await asyncio.sleep(0)
        if self.relaying:
            await asyncio.wait(set(self.relaying), timeout=_RELAY_WAIT_S)

    async def _on_roots(self, context: Any) -> Any:
        from pathlib import Path

        if not self.launch.workspace:
            return mcp_types.ListRootsResult(roots=[])
        uri = Path(self.launch.workspace).as_uri()
        return mcp_types.ListRootsResult(roots=[mcp_types.Root(
            uri=uri, name=os.path.basename(self.launch.workspace) or uri)])

    async def _watch(self) -> None:
        """Hold the connection until asked to stop, or until the child exits."""
        assert self._stop is not None
        while not self._stop.is_set():
            with anyio.move_on_after(_POLL_S):
                await self._stop.wait()
            if self.process is not None and self.process.returncode is not None:
                return

    async def _settle_exit(self, timeout: float) -> None:
        """Give a child that closed its stdout a moment to be reaped (for its exit code)."""
        with anyio.move_on_after(timeout):
            while self.process is not None and self.process.returncode is None:
                await anyio.sleep(0.02)

    def _start_reason(self, error: BaseException | None) -> str:
        if self._stopping:
            return "the session closed while the server was starting"
        if self._timed_out:
            return f"did not finish starting within {seconds(self.launch.startup_timeout_s)} s"
        if self.process is None and isinstance(error, FileNotFoundError):
            return f'command "{self.launch.command}" was not found'
        if self.process is None and isinstance(error, PermissionError):
            return f'command "{self.launch.command}" could not be run (permission denied)'
        code = self._exit_at_failure
        if code is not None:
            return _describe_exit(code)
        if error is None:
            return "the connection closed before the server was ready"
        return f"{type(error).__name__}: {error}".strip()

    def _exit_reason(self, error: BaseException | None) -> str:
        code = getattr(self.process, "returncode", None)
        if code is not None:
            return _describe_exit(code)
        if error is not None:
            return f"the connection failed ({type(error).__name__}: {error})"
        return "the connection closed"

    # --- stop ------------------------------------------------------------------

    async def stop(self) -> None:
        """Close stdin and let the SDK wind the child down (it kills the tree if needed)."""
        self._stopping = True
        if self._stop is not None:
            self._stop.set()
        if self._ready is not None and not self._ready.done() and self._scope is not None:
            self._scope.cancel()  # still starting: no need to wait for it to finish
        if self._task is not None and not self._task.done():
            await asyncio.wait({self._task}, timeout=10)
        self.kill_tree()

    def kill_tree(self) -> None:
        """SIGKILL the child's process group (it was started as a session leader)."""
        process = self.process
        if process is None or process.returncode is not None:
            return
        try:
            if os.name == "posix":
                os.killpg(process.pid, signal.SIGKILL)
            else:  # pragma: no cover - the SDK's job object covers the tree on Windows
                process.kill()
        except (OSError, ProcessLookupError):
            pass


def group_members(pgid: int | None) -> frozenset[int]:
    """The live processes of process group ``pgid`` (Linux ``/proc``; elsewhere the leader)."""
    if pgid is None:
        return frozenset()
    try:
        names = os.listdir("/proc")
    except OSError:
        return frozenset({pgid})
    found = set()
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 2 and fields[2] == str(pgid).encode() and fields[0] != b"Z":
            found.add(int(name))
    return frozenset(found)


def _running(pid: int) -> bool:
    """``pid`` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except FileNotFoundError:
        return False
    except (OSError, IndexError):
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _describe_exit(code: int) -> str:
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = str(-code)
        return f"was killed by signal {name}"
    return f"exited with code {code}"


class McpRuntime:
    """The loop thread and the connections of one session."""

    def __init__(self) -> None:
        _install_spawn_probe()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name="callgate-mcp", daemon=True)
        self._thread.start()
        self._conns: dict[str, Connection] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._closed = False

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_forever()

    # --- from any thread --------------------------------------------------------

    def submit(self, coro: Coroutine[Any, Any, Any]) -> concurrent.futures.Future[Any]:
        if self._closed:
            coro.close()
            raise NotConnected("the session is closed")
        return asyncio.run_coroutine_threadsafe(coro, self._loop)

    def wait(self, future: concurrent.futures.Future[Any],
             cancelled: threading.Event | None = None) -> Any:
        """Block until ``future`` is done; cancel it if ``cancelled`` is set meanwhile."""
        while True:
            done, _ = concurrent.futures.wait([future], timeout=0.1)
            if done:
                return future.result()
            if cancelled is not None and cancelled.is_set():
                future.cancel()
                raise Cancelled()

    async def result(self, future: concurrent.futures.Future[Any],
                     cancelled: threading.Event | None = None) -> Any:
        """Await ``future`` from the caller's event loop. Under asyncio directly: the
        loop thread's answer wakes the caller's loop once (a worker thread blocked in
        `wait` cost two more wake-ups per call); under another backend through a worker
        thread (`wait`). The caller's own cancellation cancels ``future``."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:  # not asyncio (trio through anyio): a thread waits for it
            import anyio.to_thread

            return await anyio.to_thread.run_sync(self.wait, future, cancelled)
        try:
            return await asyncio.wrap_future(future)
        except BaseException:
            future.cancel()
            raise

    def connection(self, name: str) -> Connection | None:
        return self._conns.get(name)

    def connections(self) -> list[Connection]:
        return list(self._conns.values())

    def close(self, timeout: float = 15.0) -> None:
        """Stop every child (stdin closed, then the SDK's tree kill), then the loop."""
        if self._closed:
            return
        self._closed = True
        try:
            asyncio.run_coroutine_threadsafe(self._stop_all(), self._loop).result(timeout)
        except Exception:
            log.warning("stopping MCP servers took too long; killing them", exc_info=True)
        for conn in list(self._conns.values()):
            conn.kill_tree()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)
        if not self._thread.is_alive():
            self._loop.close()

    # --- on the loop ----------------------------------------------------------------

    async def _stop_all(self) -> None:
        conns = list(self._conns.values())
        await asyncio.gather(*(c.stop() for c in conns), return_exceptions=True)

    async def connect(self, launch: Launch) -> Connection:
        """The live connection for ``launch``; starts it (once at a time) when needed."""
        lock = self._locks.setdefault(launch.name, asyncio.Lock())
        async with lock:
            conn = self._conns.get(launch.name)
            if conn is not None and conn.alive and conn.launch.identity == launch.identity:
                return conn
            if conn is not None and conn.status in ("connected", "starting"):
                await conn.stop()
            conn = Connection(launch)
            self._conns[launch.name] = conn
            await conn.start()
            return conn

    async def call(self, name: str, tool: str, arguments: dict[str, Any], timeout: float,
                   on_send: Callable[[], None] | None = None,
                   on_progress: Callable[[float, float | None, str | None], None] | None = None,
                   relay: Any = None, cancelled: threading.Event | None = None
                   ) -> mcp_types.CallToolResult:
        """Send ``tools/call``; ``on_send`` runs right before the request goes out. With
        ``on_progress`` the request carries a progress token and the child's
        ``notifications/progress`` go to it (callgate serve passes them to its client).
        While it runs, what the server asks (elicitation, sampling) and logs goes to
        ``relay`` (`_relay.CallRelay`). ``cancelled`` set meanwhile ends it with
        `Cancelled` (watched here, on this loop, with the server's group)."""
        conn = self._conns.get(name)
        if conn is None or not conn.alive or conn.session is None:
            raise NotConnected(name)
        if on_send is not None:
            on_send()
        if relay is not None:
            conn.callers.append(relay)
        try:
            answer = await self._call(conn, tool, arguments, timeout, on_progress, cancelled)
            if relay is not None:
                await conn.logs_relayed()
            return answer
        finally:
            if relay is not None:
                conn.callers.remove(relay)

    async def _call(self, conn: Connection, tool: str, arguments: dict[str, Any],
                    timeout: float,
                    on_progress: Callable[[float, float | None, str | None], None] | None,
                    cancelled: threading.Event | None = None) -> mcp_types.CallToolResult:
        """``call_tool`` in this task, under a timeout, with a timer that looks every
        ``_WATCH_S`` at the server's group (the pipe may outlive the server behind a
        wrapper) and at ``cancelled``: no task group, no second task, no cancel scope per
        call (each cost a task switch or two on every call, and the call is one write and
        one read)."""
        callback = None
        if on_progress is not None:
            async def callback(done: float, total: float | None, message: str | None) -> None:
                on_progress(done, total, message)
        session = conn.session
        assert session is not None
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None
        ended: list[str] = []  # why the watcher ended the call: "lost" or "cancelled"

        def watch() -> None:
            if conn.lost_member():
                ended.append("lost")
            elif cancelled is not None and cancelled.is_set():
                ended.append("cancelled")
            else:
                timer[0] = loop.call_later(_WATCH_S, watch)
                return
            task.cancel()

        timer = [loop.call_later(_WATCH_S, watch)]
        try:
            async with asyncio.timeout(timeout):
                return await session.call_tool(tool, arguments, progress_callback=callback)
        except asyncio.CancelledError:
            if not ended:
                raise  # the caller's cancel (the session closing, the batch walked away)
            if task.uncancel() > 0:
                raise  # the caller cancelled too: theirs stands
            if ended[0] == "cancelled":
                raise Cancelled() from None
            await conn._settle_exit(0.5)
            conn.kill_tree()
            reason = "a process of the server's group exited (the server behind its wrapper)"
            code = getattr(conn.process, "returncode", None)
            if code is not None:
                reason = _describe_exit(code)
            if conn._stop is not None:
                conn._stop.set()
            conn.status = "failed"
            conn.failure = reason
            raise ServerGone(reason, conn.tail()) from None
        except TimeoutError:
            raise CallTimedOut() from None
        except Exception as exc:
            await conn._settle_exit(1.0)
            code = getattr(conn.process, "returncode", None)
            if code is not None or conn.status != "connected":
                reason = _describe_exit(code) if code is not None else "the connection closed"
                if conn._stop is not None:
                    conn._stop.set()
                conn.status = "failed"
                conn.failure = reason
                raise ServerGone(reason, conn.tail()) from None
            raise _leaf(exc) from None
        finally:
            timer[0].cancel()
