"""The path of a proxied MCP call (issue 38): how it crosses threads, what it works out once.

A call to a connected server runs on the session's event loop up to ``tools/call``, hops
once to the session's MCP loop thread (which owns the SDK's ``ClientSession``) and once
back; no worker thread waits in between. What does not change between calls (the live
schema's compile verdict, its fingerprint, the server's identity) is worked out once.
These tests count those mechanisms; every check the call goes through is still made
(`test_cap_calls`, `test_cap_dialects`).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import threading
import time
from typing import Any

import callgate_capability._cache as cache_module
import callgate_capability._servers as servers_module
import callgate_capability.config as config_module
import mcp
from callgate_capability._keys import MCP_SERVERS
from callgate_capability._mcp_client import McpRuntime

from .helpers import boot, calls_of, doc, fixture_server, uc


def _echo(s: Any, text: str) -> Any:
    return uc(s, action="call", capability_id="mcp-tool:fixture/echo",
              arguments={"text": text})


class _Trail:
    """Where each step of a call ran: ``(step, thread name, task)``."""

    def __init__(self) -> None:
        self.steps: list[tuple[str, str, Any]] = []
        self.waits = 0

    def note(self, step: str) -> None:
        try:
            task = asyncio.current_task()
        except RuntimeError:
            task = None
        self.steps.append((step, threading.current_thread().name, task))


def _traced(monkeypatch: Any) -> _Trail:
    trail = _Trail()
    submit, wait, call = McpRuntime.submit, McpRuntime.wait, McpRuntime.call
    call_tool, to_result = mcp.ClientSession.call_tool, servers_module.to_result

    def traced_submit(self: Any, coro: Any) -> Any:
        trail.note("submit")
        return submit(self, coro)

    def traced_wait(self: Any, *args: Any, **kwargs: Any) -> Any:
        trail.waits += 1
        return wait(self, *args, **kwargs)

    async def traced_call(self: Any, *args: Any, **kwargs: Any) -> Any:
        trail.note("runtime.call")
        return await call(self, *args, **kwargs)

    async def traced_call_tool(self: Any, *args: Any, **kwargs: Any) -> Any:
        trail.note("call_tool")
        return await call_tool(self, *args, **kwargs)

    def traced_to_result(*args: Any, **kwargs: Any) -> Any:
        trail.note("to_result")
        return to_result(*args, **kwargs)

    monkeypatch.setattr(McpRuntime, "submit", traced_submit)
    monkeypatch.setattr(McpRuntime, "wait", traced_wait)
    monkeypatch.setattr(McpRuntime, "call", traced_call)
    monkeypatch.setattr(mcp.ClientSession, "call_tool", traced_call_tool)
    monkeypatch.setattr(servers_module, "to_result", traced_to_result)
    return trail


def test_a_live_call_hops_to_the_mcp_loop_and_back_with_no_worker_thread(
        callgate_session, tmp_path, monkeypatch):
    s = boot(callgate_session, tmp_path, {"fixture": fixture_server(tmp_path)})
    doc(uc(s, action="call", capability_id="mcp-server:fixture"))
    trail = _traced(monkeypatch)
    assert _echo(s, "hi").text == "hi"
    steps = [step for step, _, _ in trail.steps]
    assert steps == ["submit", "runtime.call", "call_tool", "to_result"]
    threads = [thread for _, thread, _ in trail.steps]
    # sent from the session's loop thread (not a pipeline worker), answered on it
    assert threads[0] == threads[3] and not threads[0].startswith("callgate-tool")
    assert threads[1] == threads[2] == "callgate-mcp"
    handoffs = sum(1 for a, b in itertools.pairwise(threads) if a != b)
    assert handoffs == 2
    assert trail.waits == 0  # nobody blocks in a thread waiting for the MCP loop


def test_on_the_mcp_loop_the_call_runs_in_one_task(callgate_session, tmp_path, monkeypatch):
    """No task group and second task per call: ``tools/call`` is awaited in the task the
    request arrived in (a timer watches the server's group and the cancel)."""
    s = boot(callgate_session, tmp_path, {"fixture": fixture_server(tmp_path)})
    doc(uc(s, action="call", capability_id="mcp-server:fixture"))
    trail = _traced(monkeypatch)
    assert _echo(s, "one task").text == "one task"
    tasks = {step: task for step, _, task in trail.steps}
    assert tasks["runtime.call"] is not None
    assert tasks["call_tool"] is tasks["runtime.call"]


def test_the_live_schema_is_compiled_and_fingerprinted_once_per_listing(
        callgate_session, tmp_path, monkeypatch):
    s = boot(callgate_session, tmp_path, {"fixture": fixture_server(tmp_path)})
    doc(uc(s, action="call", capability_id="mcp-server:fixture"))
    assert _echo(s, "first").text == "first"
    compiled: list[Any] = []
    fingerprinted: list[Any] = []
    schema_error, short_fingerprint = cache_module.schema_error, cache_module.short_fingerprint

    def counted_schema_error(host: Any, schema: Any) -> str | None:
        compiled.append(schema)
        return schema_error(host, schema)

    def counted_fingerprint(schema: Any) -> str:
        fingerprinted.append(schema)
        return short_fingerprint(schema)

    monkeypatch.setattr(cache_module, "schema_error", counted_schema_error)
    monkeypatch.setattr(cache_module, "short_fingerprint", counted_fingerprint)
    for n in range(5):
        assert _echo(s, f"call {n}").text == f"call {n}"
    assert compiled == [] and fingerprinted == []  # none per call
    # every call was still validated against the live schema: a bad one is never sent
    bad = uc(s, action="call", capability_id="mcp-tool:fixture/echo", arguments={"text": 5})
    assert bad.error.kind == "invalid_arguments"
    assert [c["arguments"]["text"] for c in calls_of(tmp_path)] == [
        "first", *(f"call {n}" for n in range(5))]


class _CountingJson:
    """``json`` as `callgate_capability.config` sees it, counting ``dumps``."""

    def __init__(self) -> None:
        self.dumps_calls = 0

    def dumps(self, *args: Any, **kwargs: Any) -> str:
        self.dumps_calls += 1
        return json.dumps(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(json, name)


def test_a_servers_identity_is_worked_out_once_per_settings(
        callgate_session, tmp_path, monkeypatch):
    s = boot(callgate_session, tmp_path, {"fixture": fixture_server(tmp_path)})
    doc(uc(s, action="call", capability_id="mcp-server:fixture"))
    clear = getattr(getattr(config_module, "_identity", None), "cache_clear", None)
    if clear is not None:
        clear()
    counting = _CountingJson()
    monkeypatch.setattr(config_module, "json", counting)
    for n in range(5):
        assert _echo(s, f"call {n}").text == f"call {n}"
    assert counting.dumps_calls == 1
    # a change of what decides the process still changes the identity (and reconnects)
    servers = s.session.extension(MCP_SERVERS)
    before = servers.config("fixture").identity
    servers.reconfigure("fixture", env={"EXTRA": "1"})
    assert servers.config("fixture").identity != before
    assert _echo(s, "after").text == "after"


def test_cancelling_a_live_call_answers_cancelled_and_the_server_stays(
        callgate_session, tmp_path):
    s = boot(callgate_session, tmp_path, {"fixture": fixture_server(tmp_path)})
    doc(uc(s, action="call", capability_id="mcp-server:fixture"))
    pid = s.session.extension(MCP_SERVERS).pid("fixture")
    answers: list[Any] = []
    caller = threading.Thread(target=lambda: answers.append(uc(
        s, action="call", capability_id="mcp-tool:fixture/slow", arguments={"seconds": 60})))
    caller.start()
    deadline = time.monotonic() + 60
    while not calls_of(tmp_path) and time.monotonic() < deadline:
        time.sleep(0.02)  # the request reached the server
    assert calls_of(tmp_path) == [{"name": "slow", "arguments": {"seconds": 60}}]
    s.session.cancel()
    caller.join(60)
    assert not caller.is_alive()
    [r] = answers
    assert r.error.kind == "cancelled"
    assert r.text == 'MCP tool "slow" on "fixture" was cancelled'
    assert _echo(s, "still here").text == "still here"
    assert s.session.extension(MCP_SERVERS).pid("fixture") == pid
