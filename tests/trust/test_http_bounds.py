"""Issue 30, item 5 (and the stdio part of item 7): ``callgate serve`` keeps answering.

- a half-open flood: more connections that never finish their headers than the server
  has descriptors, with its stderr a pipe nobody reads; a real MCP client must still be
  answered, connections the clients closed must not stay in CLOSE-WAIT, and SIGTERM
  must end the server;
- over stdio, a request holding a lone surrogate or nested too deep for the parser must
  be answered with a JSON-RPC error carrying its id (a client waiting on it is not left
  hanging), and the session goes on.

Loopback only. The waits are hang guards (generous), never timing assertions.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import re
import resource
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from ..contrib.mcp_serve.http_support import connect
from ..contrib.mcp_serve.test_server import run, text_of
from ..contrib.mcp_serve.toolkit import child_env

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX descriptors and signals")

#: the server's descriptor limit in the flood test, and how many half-open connections
#: the flood holds (well over the limit)
FD_LIMIT = 256
FLOOD = 700
HANG_GUARD_S = 60.0


def _ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("hello world\n")
    return ws


def _low_fd_limit() -> None:  # runs in the server's child, before exec
    resource.setrlimit(resource.RLIMIT_NOFILE, (FD_LIMIT, FD_LIMIT))


@contextlib.contextmanager
def _served_with_undrained_stderr(ws: Path) -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    """``serve --http`` with a low descriptor limit; its stderr is read up to the
    "serving" line and then never again (a supervisor that reads lazily)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "callgate_cli", "serve", "--http", "127.0.0.1:0",
         "--workspace", str(ws)],
        env={**os.environ, **child_env()}, stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
        preexec_fn=_low_fd_limit)
    try:
        assert proc.stderr is not None
        seen = b""
        while b"serving MCP on" not in seen:
            ready, _, _ = select.select([proc.stderr], [], [], HANG_GUARD_S)
            assert ready, f"serve --http did not start: {seen!r}"
            chunk = os.read(proc.stderr.fileno(), 4096)
            assert chunk, f"serve --http exited: {seen!r}"
            seen += chunk
        found = re.search(rb"http://127\.0\.0\.1:(\d+)/mcp", seen)
        assert found, seen
        yield proc, int(found.group(1))
    finally:
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
        if proc.stderr is not None:
            proc.stderr.close()


def _pending(fd: int) -> int:
    """How many bytes wait unread in the pipe ``fd`` (read now, without blocking)."""
    os.set_blocking(fd, False)
    total = 0
    with contextlib.suppress(BlockingIOError):
        while True:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            total += len(chunk)
    return total


def test_attack_half_open_flood_with_an_undrained_stderr(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    flood: list[socket.socket] = []
    try:
        with _served_with_undrained_stderr(ws) as (proc, port):
            for _ in range(FLOOD):
                s = socket.create_connection(("127.0.0.1", port), timeout=HANG_GUARD_S)
                s.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: appl")
                flood.append(s)
            # half of the flood leaves (half-close): the server must close those too
            leaving = flood[: FLOOD // 2]
            for s in leaving:
                s.shutdown(socket.SHUT_WR)

            async def client() -> None:
                with anyio.fail_after(HANG_GUARD_S):  # a hang guard, not a timing bound
                    async with connect(f"http://127.0.0.1:{port}/mcp") as opened:
                        listed = await opened.client.list_tools()
                        assert listed.tools
                        r = await opened.client.call_tool("read_file", {"path": "notes.txt"})
                        assert not r.is_error and "hello world" in text_of(r), text_of(r)

            run(client)
            # every connection the client closed is closed by the server as well: reading
            # it ends (EOF or reset), none waits in CLOSE-WAIT forever
            for s in leaving:
                s.settimeout(HANG_GUARD_S)
                try:
                    data = s.recv(1024)
                except ConnectionResetError:
                    data = b""
                except TimeoutError:
                    pytest.fail("a connection its client closed was left open (CLOSE-WAIT)")
                assert data == b"" or data.startswith(b"HTTP/1.1 4"), data
            stderr_bytes = _pending(proc.stderr.fileno())  # type: ignore[union-attr]
            assert stderr_bytes < 16384, f"{stderr_bytes} bytes of log for one flood"
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(HANG_GUARD_S)
            except subprocess.TimeoutExpired:
                pytest.fail("SIGTERM did not end serve --http")
    finally:
        for s in flood:
            s.close()


def test_attack_idle_connections_are_closed_after_the_header_timeout(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    with _served_with_undrained_stderr(ws) as (_proc, port):
        s = socket.create_connection(("127.0.0.1", port), timeout=HANG_GUARD_S)
        with s:
            s.sendall(b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # never finished
            try:
                got = s.recv(1024)
            except TimeoutError:
                pytest.fail("a connection that never finished its headers stayed open")
            except ConnectionResetError:
                got = b""
            assert got == b"" or got.startswith(b"HTTP/1.1 408"), got
        # a byte now and then does not restart the clock (a slowloris client)
        slow = socket.create_connection(("127.0.0.1", port), timeout=HANG_GUARD_S)
        with slow:
            slow.settimeout(0.5)
            head = b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n" + b"X-Slow: " + b"a" * 10_000
            deadline = time.monotonic() + HANG_GUARD_S  # a hang guard, not a timing bound
            closed = False
            for byte in head:
                if time.monotonic() > deadline:
                    break
                try:
                    slow.sendall(bytes([byte]))
                    if slow.recv(1024) == b"":
                        closed = True
                        break
                except TimeoutError:
                    continue
                except (BrokenPipeError, ConnectionResetError):
                    closed = True
                    break
            assert closed, "a client trickling its request head kept its connection"


# --- stdio: what the parser refuses is still answered -----------------------------------------


class _StdioServer:
    """``callgate serve`` over stdio, spoken to line by line."""

    def __init__(self, ws: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "callgate_cli", "serve", "--workspace", str(ws)],
            env={**os.environ, **child_env()}, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)
        self.lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(b"")

    def send(self, raw: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(raw + b"\n")
        self.proc.stdin.flush()

    def answer(self, want_id: Any) -> dict[str, Any]:
        while True:
            try:
                line = self.lines.get(timeout=HANG_GUARD_S)
            except queue.Empty:
                pytest.fail(f"no answer to request {want_id!r}")
            assert line, f"the server exited before answering {want_id!r}"
            message = json.loads(line)
            if "id" in message and message["id"] == want_id:
                return message

    def close(self) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)


@pytest.fixture
def stdio(tmp_path: Path) -> Iterator[_StdioServer]:
    server = _StdioServer(_ws(tmp_path))
    server.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}}).encode())
    assert "result" in server.answer(1)
    server.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
    try:
        yield server
    finally:
        server.close()


def _still_serves(server: _StdioServer) -> None:
    server.send(b'{"jsonrpc": "2.0", "id": 99, "method": "tools/call", "params": '
                b'{"name": "read_file", "arguments": {"path": "notes.txt"}}}')
    answer = server.answer(99)
    assert "hello world" in json.dumps(answer["result"]), answer


def test_attack_stdio_request_with_a_lone_surrogate_is_answered(stdio: _StdioServer) -> None:
    stdio.send(b'{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": '
               b'{"name": "read_file", "arguments": {"path": "a\\ud800b"}}}')
    answer = stdio.answer(7)
    assert "error" in answer, answer
    assert answer["error"]["code"] in (-32700, -32600, -32602), answer
    assert "surrogate" in answer["error"]["message"] or "Unicode" in answer["error"]["message"]
    _still_serves(stdio)


@pytest.mark.parametrize("depth", [300, 100_000])
def test_attack_stdio_request_nested_too_deep_is_answered(stdio: _StdioServer,
                                                          depth: int) -> None:
    nested = b"[" * depth + b"]" * depth
    stdio.send(b'{"jsonrpc": "2.0", "id": "deep", "method": "tools/call", "params": '
               b'{"name": "read_file", "arguments": {"path": ' + nested + b"}}}")
    answer = stdio.answer("deep")
    assert "error" in answer, answer
    assert "nest" in answer["error"]["message"], answer
    _still_serves(stdio)


def test_attack_stdio_unparseable_line_is_answered_with_a_parse_error(
        stdio: _StdioServer) -> None:
    stdio.send(b'{"jsonrpc": "2.0", "id": 8, "method": ')  # cut short: its id is known
    answer = stdio.answer(8)
    assert answer["error"]["code"] == -32700, answer
    stdio.send(b"not json at all")  # no id to be found: null, as JSON-RPC says
    answer = stdio.answer(None)
    assert answer["error"]["code"] == -32700, answer
    stdio.send(b'{"jsonrpc": "2.0", "id": 10, "params": {}}')  # JSON, but no method
    answer = stdio.answer(10)
    assert answer["error"]["code"] == -32600, answer
    _still_serves(stdio)
