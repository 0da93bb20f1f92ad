"""stdio served from the event loop (`callgate_mcp_serve._pipes`, issue 38's stdio row):
the same lines in and bytes out as the SDK's transport, no worker-thread round trip for a
request or its answer, and the descriptors claimed and given back like the SDK does.
Pipes of this test process stand in for the client's (the real ``callgate serve`` over
pipes is in test_stdio, test_progress, test_end_to_end and tests/trust/test_http_bounds)."""

from __future__ import annotations

import io
import json
import os
import sys
import threading
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import mcp_types as types
import pytest
from callgate import Host
from callgate_mcp_serve import CallgateMCP, ElicitationApprover, _pipes, _stdio
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

from .toolkit import Toolkit

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX pipes")


class _Pipes:
    """Two pipes: what the client writes to the server's stdin, and reads from its stdout.
    ``stdin``/``stdout`` are the server's ends."""

    def __init__(self) -> None:
        self.stdin, self.to_server = os.pipe()
        self.from_server, self.stdout = os.pipe()
        self._read = b""

    def send(self, raw: bytes) -> None:
        os.write(self.to_server, raw)

    def end_input(self) -> None:
        os.close(self.to_server)

    def lines(self, count: int) -> list[bytes]:
        """``count`` lines the server wrote (blocking reads: call from a plain thread)."""
        while self._read.count(b"\n") < count:
            chunk = os.read(self.from_server, 65536)
            if not chunk:
                break
            self._read += chunk
        *done, self._read = self._read.split(b"\n", count)
        return [line + b"\n" for line in done]

    def close(self) -> None:
        for fd in (self.stdin, self.stdout, self.from_server):
            os.close(fd)


@pytest.fixture
def pipes() -> Any:
    made = _Pipes()
    yield made
    made.close()


def _request(rid: int, method: str, params: dict[str, Any] | None = None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        message["params"] = params
    return (json.dumps(message) + "\n").encode()


def test_lines_in_are_the_sdk_s_lines(pipes: _Pipes) -> None:
    """``\\n``, ``\\r\\n`` and a lone ``\\r`` end lines; bad UTF-8 is replaced; a last line
    without its newline still counts; what is not a JSON-RPC message arrives as its error."""
    async def scenario() -> list[SessionMessage | Exception]:
        async with _pipes.pipe_stdio(pipes.stdin, pipes.stdout) as (reading, _writing):
            pipes.send(b'{"jsonrpc":"2.0","id":1,"method":"ping"}\r\n'
                       b'{"jsonrpc":"2.0","id":2,"method":"ping"}\r'
                       b'{"jsonrpc":"2.0","id":3,"method":"p\xffng"}\n'
                       b'not json\n\n'
                       b'{"jsonrpc":"2.0","id":4,"method":"ping"}')
            pipes.end_input()
            with anyio.fail_after(10):
                return [item async for item in reading]

    got = anyio.run(scenario)
    ids = [item.message.id if isinstance(item, SessionMessage) else "error"
           for item in got]
    assert ids == [1, 2, 3, "error", "error", 4]
    third = got[2]
    assert isinstance(third, SessionMessage)
    assert isinstance(third.message, types.JSONRPCRequest)
    assert third.message.method == "p\ufffdng"


def test_a_long_line_and_a_burst_arrive_whole_and_in_order(pipes: _Pipes) -> None:
    """A 1 MiB request split across many reads, then more messages at once than reading
    buffers before it pauses: each arrives whole, in order."""
    big = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "x", "params": {"s": "é" * 2**19}})
    burst = [_request(i, "ping") for i in range(1, 4 * _pipes.PAUSE_AT)]

    def client() -> None:
        data = big.encode() + b"\n"
        for start in range(0, len(data), 4096):
            pipes.send(data[start:start + 4096])
        for line in burst:
            pipes.send(line)
        pipes.end_input()

    async def scenario() -> list[SessionMessage | Exception]:
        async with _pipes.pipe_stdio(pipes.stdin, pipes.stdout) as (reading, _writing):
            sending = threading.Thread(target=client, daemon=True)
            sending.start()
            got = []
            with anyio.fail_after(30):
                async for item in reading:
                    got.append(item)
                    await anyio.sleep(0)  # a slow reader: the burst must wait, not drop
            sending.join(10)
            return got

    got = anyio.run(scenario)
    assert [item.message.id for item in got if isinstance(item, SessionMessage)] == \
        list(range(len(burst) + 1))
    first = got[0]
    assert isinstance(first, SessionMessage) and isinstance(first.message, types.JSONRPCRequest)
    assert first.message.params == {"s": "é" * 2**19}


def test_bytes_out_are_the_sdk_s_bytes(pipes: _Pipes) -> None:
    message = types.JSONRPCResponse(jsonrpc="2.0", id=7, result={"text": "héllo\u2028"})
    expected = message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"

    async def scenario() -> None:
        async with _pipes.pipe_stdio(pipes.stdin, pipes.stdout) as (_reading, writing):
            await writing.send(SessionMessage(message))

    anyio.run(scenario)
    assert pipes.lines(1) == [expected.encode("utf-8")]


def test_the_descriptors_are_claimed_while_serving_and_given_back(pipes: _Pipes) -> None:
    before = (os.fstat(pipes.stdin).st_ino, os.fstat(pipes.stdout).st_ino)

    async def scenario() -> tuple[int, int]:
        async with _pipes.pipe_stdio(pipes.stdin, pipes.stdout):
            # while serving, the server's stdin reads the null device and its stdout is
            # stderr: nothing a tool prints reaches the wire
            return (os.fstat(pipes.stdin).st_ino, os.fstat(pipes.stdout).st_ino)

    during = anyio.run(scenario)
    assert during == (os.stat(os.devnull).st_ino, os.fstat(2).st_ino)
    assert (os.fstat(pipes.stdin).st_ino, os.fstat(pipes.stdout).st_ino) == before
    assert os.get_blocking(pipes.stdin) and os.get_blocking(pipes.stdout)


def _session_over(tmp_path: Path, pipes: _Pipes, monkeypatch: pytest.MonkeyPatch,
                  wire: Any) -> tuple[list[bytes], list[Any]]:
    """A whole MCP session over the pipes (initialize, a tools/call, end of input) served
    on ``wire``: the answers, and the worker-thread hops made for stream I/O."""
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    (ws / "a.txt").write_text("hello pipes\n")
    host = Host.boot({}, plugins=[Toolkit(), ElicitationApprover()], entrypoints=False)
    app = CallgateMCP(host, ws)
    hops: list[Any] = []
    real = anyio.to_thread.run_sync

    async def counted(func: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(getattr(func, "__self__", None), io.IOBase):  # a file's read or write
            hops.append(func)
        return await real(func, *args, **kwargs)

    monkeypatch.setattr(anyio.to_thread, "run_sync", counted)
    answers: list[bytes] = []

    def client() -> None:
        pipes.send(_request(1, "initialize", {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "pipes", "version": "0"}}))
        answers.extend(pipes.lines(1))
        pipes.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
        pipes.send(_request(2, "tools/call", {"name": "peek", "arguments": {"path": "a.txt"}}))
        answers.extend(pipes.lines(1))
        pipes.end_input()

    talking = threading.Thread(target=client, daemon=True)
    talking.start()

    async def scenario() -> None:
        with anyio.fail_after(30):
            async with wire() as (reading, writing):
                await app.server.run(_stdio.AnsweringStream(reading, writing), writing,
                                     app.server.create_initialization_options())

    anyio.run(scenario)
    talking.join(10)
    assert len(answers) == 2
    result = json.loads(answers[1])["result"]
    assert "hello pipes" in result["content"][0]["text"] and not result["isError"]
    return answers, hops


def test_a_served_call_takes_no_worker_thread_round_trip_for_its_io(
        tmp_path: Path, pipes: _Pipes, monkeypatch: pytest.MonkeyPatch) -> None:
    """Over the loop's pipes, no ``anyio.to_thread`` hop reads a request or writes an
    answer; over the SDK's transport (the same pipes, given to it explicitly) each message
    took its own (the control that shows the count sees them)."""
    _answers, hops = _session_over(tmp_path, pipes, monkeypatch,
                                   lambda: _pipes.pipe_stdio(pipes.stdin, pipes.stdout))
    assert hops == []


def test_the_sdk_s_transport_hops_for_every_line(
        tmp_path: Path, pipes: _Pipes, monkeypatch: pytest.MonkeyPatch) -> None:
    def sdk() -> Any:
        # closefd=False: the pipes are the fixture's; the SDK holds these for the session
        stdin = anyio.wrap_file(open(pipes.stdin, encoding="utf-8", closefd=False))  # noqa: SIM115
        stdout = anyio.wrap_file(open(pipes.stdout, "w", encoding="utf-8",  # noqa: SIM115
                                      closefd=False))
        return stdio_server(stdin, stdout)

    _answers, hops = _session_over(tmp_path, pipes, monkeypatch, sdk)
    assert len(hops) >= 6  # two requests read, two answers written and flushed


def test_serve_stdio_takes_the_loop_s_pipes_only_where_they_work(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    host = Host.boot({}, plugins=[Toolkit(), ElicitationApprover()], entrypoints=False)
    app = CallgateMCP(host, ws)
    chosen: list[str] = []

    def fake(name: str) -> Any:
        from contextlib import asynccontextmanager

        @asynccontextmanager
        async def wire() -> Any:
            chosen.append(name)
            send, receive = anyio.create_memory_object_stream[Any](1)
            send.close()
            yield receive, send

        return wire

    async def nothing(*_args: Any) -> None:
        return None

    monkeypatch.setattr(_stdio, "SIGNALS", ())
    monkeypatch.setattr(app.server, "run", nothing)
    monkeypatch.setattr(_pipes, "pipe_stdio", fake("pipes"))
    monkeypatch.setattr(_stdio, "stdio_server", fake("sdk"))
    for usable in (True, False):
        monkeypatch.setattr(_pipes, "usable", lambda usable=usable: usable)
        anyio.run(_stdio.serve_stdio, app)
    assert chosen == ["pipes", "sdk"]
