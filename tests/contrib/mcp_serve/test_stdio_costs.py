"""What one ``tools/call`` costs ``callgate serve`` beyond the SDK's own path (issue 38,
the stdio row), pinned as mechanisms, counted, never timed:

- a message from stdin reaches the server with no task of callgate's own in between (the
  unreadable-line answering happens in the reading task);
- a call whose request brought no ``progressToken`` gets no progress reporter (no
  forwarding, no flush before its result); one that brought a token still gets one;
- a result of callgate's own blocks is validated once, by the SDK's per-version sieve on its
  way out, not first built into the SDK's model here (a validation and a dump that the
  sieve repeated); the sieve makes the same wire fields of it either way;
- a call makes no memory object stream in callgate (its events go through a plain inbox)
  and no ``requestState`` token unless it asks the client something;
- a call's relay (how a proxied server reaches this request's client) takes anyio's token of
  the loop once per loop, not once per call.
"""

from __future__ import annotations

import asyncio
import secrets
import sys
import traceback
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from callgate import Host, ToolResult
from callgate.results import ImageBlock, TextBlock
from callgate_mcp_serve import CallgateMCP, ElicitationApprover, _progress, _stdio
from callgate_mcp_serve._server import to_mcp_result, wire_result
from mcp import Client
from mcp.shared._context_streams import create_context_streams
from mcp.shared.message import SessionMessage
from mcp_types.methods import serialize_server_result
from mcp_types.version import SUPPORTED_PROTOCOL_VERSIONS

from .test_server import run
from .toolkit import Toolkit


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    w = tmp_path / "ws"
    w.mkdir()
    (w / "a.txt").write_text("hello world\n")
    return w


def _app(ws: Path) -> CallgateMCP:
    host = Host.boot({}, plugins=[Toolkit(), ElicitationApprover()], entrypoints=False)
    return CallgateMCP(host, ws)


def _unreadable() -> Exception:
    try:
        types.jsonrpc_message_adapter.validate_json(
            '{"jsonrpc": "2.0", "id": 4, "method": "x", "params": {"p": "\\udc00"}}',
            by_name=False)
    except Exception as exc:
        return exc
    raise AssertionError("the SDK read it")


def test_stdin_reaches_the_server_without_a_relay_task(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The server reads the SDK's stdin stream itself (wrapped, not relayed): while it
    serves, the only task is the serving one, and a line the SDK could not read is still
    answered with its error, in that task."""
    sdk_in, sdk_read = create_context_streams[SessionMessage | Exception](8)
    sdk_write, written = create_context_streams[SessionMessage](8)
    ping = SessionMessage(types.JSONRPCRequest(jsonrpc="2.0", id=5, method="ping"))
    seen: dict[str, Any] = {}

    @asynccontextmanager
    async def fake_stdio() -> AsyncIterator[tuple[Any, Any]]:
        yield sdk_read, sdk_write

    async def fake_run(read_stream: Any, write_stream: Any, _options: Any) -> None:
        seen["tasks"] = len(asyncio.all_tasks())
        seen["first"] = await read_stream.receive()  # the unreadable line is skipped
        with anyio.fail_after(5):
            seen["answer"] = await written.receive()  # ... and answered

    app = _app(ws)
    monkeypatch.setattr(_stdio, "stdio_server", fake_stdio)
    monkeypatch.setattr(_stdio, "SIGNALS", ())
    monkeypatch.setattr(app.server, "run", fake_run)

    async def scenario() -> None:
        await sdk_in.send(_unreadable())
        await sdk_in.send(ping)
        await _stdio.serve_stdio(app)

    run(scenario)
    assert seen["tasks"] == 1  # the serving task alone: no relay in front of the server
    assert seen["first"] is ping
    answer = seen["answer"].message
    assert isinstance(answer, types.JSONRPCError) and answer.id == 4
    assert answer.error.code == types.PARSE_ERROR


def test_the_wrapped_stream_ends_with_the_sdk_s_and_keeps_the_sender_s_context() -> None:
    async def scenario() -> None:
        sdk_in, sdk_read = create_context_streams[SessionMessage | Exception](2)
        _, replies = create_context_streams[SessionMessage](2)
        stream = _stdio.AnsweringStream(sdk_read, replies)
        ping = SessionMessage(types.JSONRPCRequest(jsonrpc="2.0", id=1, method="ping"))
        await sdk_in.send(ping)
        await sdk_in.aclose()
        got = [item async for item in stream]
        assert got == [ping]
        assert stream.last_context is sdk_read.last_context is not None

    anyio.run(scenario)


def test_a_call_without_a_progress_token_gets_no_reporter(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[_progress.Reporter] = []
    real_init = _progress.Reporter.__init__

    def counted(self: _progress.Reporter, ctx: Any) -> None:
        made.append(self)
        real_init(self, ctx)

    monkeypatch.setattr(_progress.Reporter, "__init__", counted)
    heard: list[float] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        heard.append(done)

    async def scenario() -> tuple[int, int]:
        async with Client(_app(ws).server, mode="legacy") as client:
            for _ in range(3):
                r = await client.call_tool("peek", {"path": "a.txt"})
                assert not r.is_error, r.content
            plain = len(made)
            r = await client.call_tool("peek", {"path": "a.txt"},
                                       progress_callback=on_progress)
            assert not r.is_error, r.content
            return plain, len(made)

    plain, tokened = run(scenario)
    assert plain == 0   # three calls without a token: no reporter at all
    assert tokened == 1  # the call that asked for progress has one


def test_a_call_s_result_is_not_built_into_the_sdk_s_model_by_callgate(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    validated: list[Any] = []
    real = types.CallToolResult.model_validate

    def counted(*args: Any, **kwargs: Any) -> Any:
        validated.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(types.CallToolResult, "model_validate", counted)

    async def scenario() -> list[types.CallToolResult]:
        async with Client(_app(ws).server, mode="legacy") as client:
            return [await client.call_tool("peek", {"path": "a.txt"}),
                    await client.call_tool("boom", {})]

    ok, failed = run(scenario)
    assert "hello world" in ok.content[0].text and not ok.is_error  # type: ignore[union-attr]
    assert failed.is_error and (failed.meta or {})["callgate/error"]["kind"] == "tool_error"
    assert validated == []  # the SDK's sieve validated them, on their way out, once


def _results() -> list[ToolResult]:
    png = bytes.fromhex("89504e470d0a1a0a")
    return [
        ToolResult.ok("hello\nworld"),
        ToolResult.ok(""),
        ToolResult(content=[TextBlock("before"), ImageBlock("image/png", png),
                            TextBlock("after")]),
        ToolResult.failure("tool_error", "it broke: \u2028 \x1b[31m", "BROKE"),
        ToolResult.ok("x" * 50, {"structured_content": {"a": [1, 2.5, None, "s"], "b": {}},
                                 "truncated": True}),
        ToolResult.ok("data", {"structured_content": {"n": 1}}),
        ToolResult.failure("not_found", "no such file", meta={"structured_content": "no"}),
    ]


@pytest.mark.parametrize("version", SUPPORTED_PROTOCOL_VERSIONS)
def test_the_wire_fields_are_the_model_s_for_every_protocol_version(
        ws: Path, version: str) -> None:
    """What the SDK sends for the dict is what it sent for the model, field for field and in
    the same order (it re-dumps both through the version's own model)."""
    host = _app(ws).host
    for result in _results():
        for schema in (None, {"type": "object"}, {"type": "object", "required": ["n"]}):
            fields = wire_result(host, result, max_chars=40, output_schema=schema)
            assert isinstance(fields, dict)
            model = to_mcp_result(host, result, max_chars=40, output_schema=schema)
            via_model = serialize_server_result("tools/call", version, model.model_dump(
                by_alias=True, mode="json", exclude_none=True))
            via_dict = serialize_server_result("tools/call", version, fields)
            assert list(via_dict.items()) == list(via_model.items())


def _from_serve() -> bool:
    return any("callgate_mcp_serve" in frame.filename for frame in traceback.extract_stack())


def test_a_call_makes_no_memory_stream_and_no_token_in_callgate(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[str] = []
    real_stream = anyio.create_memory_object_stream
    real_token = secrets.token_urlsafe

    class Counted(real_stream):  # type: ignore[misc, valid-type]
        def __new__(cls, *args: Any, **kwargs: Any) -> Any:
            if _from_serve():
                made.append("stream")
            return real_stream(*args, **kwargs)

    def token(*args: Any) -> str:
        if _from_serve():
            made.append("token")
        return real_token(*args)

    monkeypatch.setattr(anyio, "create_memory_object_stream", Counted)
    monkeypatch.setattr(secrets, "token_urlsafe", token)

    async def scenario() -> None:
        async with Client(_app(ws).server, mode="legacy") as client:
            for _ in range(3):
                r = await client.call_tool("peek", {"path": "a.txt"})
                assert not r.is_error, r.content

    run(scenario)
    assert made == []


def test_calls_take_anyio_s_loop_token_once_not_per_call(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every call's relay (what a proxied server asks goes to this request's client) needs
    anyio's token of the loop; it is taken once for the loop, not for each call."""
    taken: list[object] = []
    real = anyio.lowlevel.current_token

    def token() -> Any:
        caller = sys._getframe(1).f_code.co_filename
        if "callgate_mcp_serve" in caller:  # callgate's own, not anyio's internal ones
            taken.append(caller)
        return real()

    monkeypatch.setattr(anyio.lowlevel, "current_token", token)
    async def scenario() -> None:
        async with Client(_app(ws).server, mode="legacy") as client:
            for _ in range(4):
                r = await client.call_tool("peek", {"path": "a.txt"})
                assert not r.is_error, r.content

    run(scenario)
    assert len(taken) == 1, taken  # 4 before: one per call
