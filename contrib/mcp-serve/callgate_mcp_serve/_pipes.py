"""stdio on the event loop: the MCP messages of a piped stdin/stdout read and written without
a thread (issue 38, the stdio row).

The SDK's ``stdio_server`` reads each line and writes and flushes each answer through
``anyio.wrap_file``: three worker-thread round trips per ``tools/call`` (read, write,
flush), each a queue hand-off, a thread wake-up and a wake-up of the loop back, which on a
loaded machine wait for a core each. When stdin and stdout are pipes or sockets (how every
MCP client starts a server) and the loop is asyncio's, `pipe_stdio` serves the same streams
from the loop itself: asyncio's pipe transports read what arrives and write each answer with
one non-blocking ``write``. Everything else about the wire is the SDK's:

- the same claim on the standard descriptors while serving: fd 0 reads the null device and
  fd 1 writes to stderr (nothing a tool or a child prints reaches the JSON-RPC stream), the
  wire on private close-on-exec duplicates, both restored on the way out;
- the same lines: UTF-8 with undecodable bytes replaced, split at ``\\n`` and, within a
  line, at ``\\r\\n`` or a lone ``\\r`` (the universal newlines of the SDK's text wrapper),
  every line validated as a JSON-RPC message, a line that is not one handed on as its
  exception (`_stdio.AnsweringStream` answers it);
- the same bytes out: ``model_dump_json(by_alias=True, exclude_unset=True)`` and ``\\n``;
- backpressure both ways: reading pauses while unread messages pile up, a send waits while
  the client is not reading.

`usable` says whether the fast path applies; `serve_stdio` falls back to the SDK's
transport otherwise (a terminal, a file, another event loop, Windows).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import stat
import sys
from collections import deque
from collections.abc import AsyncIterator

import anyio
import mcp_types as types
import sniffio
from mcp.shared.message import SessionMessage

#: unread messages at which reading pauses, and where it resumes
PAUSE_AT, RESUME_AT = 64, 16
#: the longest the way out waits for unsent answers to reach a slow client
DRAIN_AT_CLOSE_S = 5.0
_LINE_END = re.compile(rb"\r\n|\r")


def usable() -> bool:
    """Whether stdin and stdout are pipes or sockets and the loop is asyncio's."""
    if sys.platform == "win32":
        return False
    try:
        if sniffio.current_async_library() != "asyncio":
            return False
        return all(stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)
                   for mode in (os.fstat(0).st_mode, os.fstat(1).st_mode))
    except (OSError, sniffio.AsyncLibraryNotFoundError):
        return False


def _message(raw: bytes) -> SessionMessage | Exception:
    line = raw.decode("utf-8", "replace")
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except Exception as exc:  # what the SDK's reader hands the server: the failure itself
        return exc


class PipeReadStream(asyncio.Protocol):
    """The client's messages, read by the loop as they arrive (a ``ReadStream``)."""

    def __init__(self) -> None:
        self._items: deque[SessionMessage | Exception] = deque()
        self._buffer = bytearray()
        self._scanned = 0
        self._waiter: asyncio.Future[None] | None = None
        self._ended = False
        self._paused = False
        self._transport: asyncio.ReadTransport | None = None

    # --- the protocol: called by the loop ---------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.ReadTransport)
        self._transport = transport

    def data_received(self, data: bytes) -> None:
        buffer = self._buffer
        buffer += data
        while (end := buffer.find(b"\n", self._scanned)) >= 0:
            self._line(bytes(buffer[:end]))
            del buffer[:end + 1]
            self._scanned = 0
        self._scanned = len(buffer)
        if len(self._items) >= PAUSE_AT and not self._paused and self._transport is not None:
            self._paused = True
            self._transport.pause_reading()
        self._wake()

    def eof_received(self) -> bool:
        if self._buffer:  # a last line without its newline is still a line
            self._line(bytes(self._buffer))
            self._buffer.clear()
        self._end()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self._end()

    def _line(self, raw: bytes) -> None:
        if raw.endswith(b"\r"):  # a \r\n ending
            raw = raw[:-1]
        if b"\r" in raw:
            for part in _LINE_END.split(raw):
                self._items.append(_message(part))
        else:
            self._items.append(_message(raw))

    def _end(self) -> None:
        self._ended = True
        self._wake()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done() and (self._items or self._ended):
            waiter.set_result(None)

    # --- the stream: read by the server -----------------------------------------------

    async def receive(self) -> SessionMessage | Exception:
        while not self._items:
            if self._ended:
                raise anyio.EndOfStream
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        item = self._items.popleft()
        if self._paused and len(self._items) <= RESUME_AT and self._transport is not None:
            self._paused = False
            self._transport.resume_reading()
        return item

    async def aclose(self) -> None:
        self._ended = True
        if self._transport is not None:
            self._transport.close()
        await anyio.lowlevel.checkpoint()

    def __aiter__(self) -> PipeReadStream:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> PipeReadStream:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


class PipeWriteStream(asyncio.Protocol):
    """The answers, each written with one non-blocking write (a ``WriteStream``); a send
    waits only while the client is not reading (the transport's buffer is over its mark)."""

    def __init__(self) -> None:
        self._transport: asyncio.WriteTransport | None = None
        self._writable: asyncio.Event = asyncio.Event()
        self._writable.set()
        self._lost: asyncio.Event = asyncio.Event()
        self._closed = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.WriteTransport)
        self._transport = transport

    def pause_writing(self) -> None:
        self._writable.clear()

    def resume_writing(self) -> None:
        self._writable.set()

    def connection_lost(self, exc: Exception | None) -> None:
        self._lost.set()
        self._writable.set()

    async def send(self, item: SessionMessage) -> None:
        if self._closed:
            raise anyio.ClosedResourceError
        if self._lost.is_set() or self._transport is None:
            raise anyio.BrokenResourceError
        json = item.message.model_dump_json(by_alias=True, exclude_unset=True)
        self._transport.write((json + "\n").encode("utf-8"))
        if not self._writable.is_set():
            await self._writable.wait()
            if self._lost.is_set():
                raise anyio.BrokenResourceError

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        transport = self._transport
        if transport is None or self._lost.is_set():
            return
        transport.close()  # writes what is buffered, then closes
        with anyio.move_on_after(DRAIN_AT_CLOSE_S, shield=True):
            await self._lost.wait()

    async def __aenter__(self) -> PipeWriteStream:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


def _claim(fd: int, diversion: int) -> int:
    """Point ``fd`` at ``diversion`` and return a private duplicate of what it was (the
    SDK's claim: nothing else in the process reaches the wire through fd 0 or 1)."""
    import fcntl

    wire = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
    try:
        os.dup2(diversion, fd)
    except OSError:
        os.close(wire)
        raise
    return wire


@contextlib.asynccontextmanager
async def pipe_stdio(stdin: int = 0, stdout: int = 1
                     ) -> AsyncIterator[tuple[PipeReadStream, PipeWriteStream]]:
    """Serve on this process's piped stdin and stdout from the event loop (`usable` first).
    While it serves, ``stdin`` reads the null device and ``stdout`` writes to stderr."""
    loop = asyncio.get_running_loop()
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        wire_in = _claim(stdin, null)
    finally:
        os.close(null)
    try:
        try:
            to_stderr = os.dup(2)
        except OSError:  # no stderr: what tools print goes nowhere
            to_stderr = os.open(os.devnull, os.O_WRONLY)
        try:
            wire_out = _claim(stdout, to_stderr)
        finally:
            os.close(to_stderr)
    except OSError:
        os.dup2(wire_in, stdin)
        os.close(wire_in)
        raise
    reading, writing = PipeReadStream(), PipeWriteStream()
    # closefd=False: the transports close these objects, the descriptors stay ours to restore
    with os.fdopen(wire_in, "rb", buffering=0, closefd=False) as wire_in_file, \
            os.fdopen(wire_out, "wb", buffering=0, closefd=False) as wire_out_file:
        try:
            await loop.connect_read_pipe(lambda: reading, wire_in_file)
            await loop.connect_write_pipe(lambda: writing, wire_out_file)
            yield reading, writing
        finally:
            with anyio.CancelScope(shield=True):
                await writing.aclose()
                await reading.aclose()
            for fd, wire in ((stdin, wire_in), (stdout, wire_out)):
                with contextlib.suppress(OSError):
                    os.set_blocking(wire, True)
                with contextlib.suppress(OSError):
                    os.dup2(wire, fd)
                with contextlib.suppress(OSError):
                    os.close(wire)


__all__ = ["PipeReadStream", "PipeWriteStream", "pipe_stdio", "usable"]
