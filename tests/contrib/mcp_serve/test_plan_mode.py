"""``callgate serve --mode plan``: writes are refused until the user approves the plan.

The model presents its plan with ``exit_plan_mode``; the server asks the user behind the
client (an elicitation form on both protocol eras); only an approval ends plan mode.
In process with the SDK's ``Client`` on both eras, then once through the real
``callgate serve`` over stdio.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from callgate import Host
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from .test_server import ERAS, Elicitor, error_kind, run, served, text_of
from .toolkit import child_env

PLAN = "1. swap hello for bye in a.txt\n2. check the file"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    w = tmp_path / "ws"
    w.mkdir()
    (w / "a.txt").write_text("hello world\n")
    return w


def _approve() -> Elicitor:
    return Elicitor("accept", {"approve": True})


@pytest.mark.parametrize("mode", ERAS)
def test_a_write_is_refused_before_the_plan_is_approved_and_runs_after(ws: Path,
                                                                      mode: str) -> None:
    user = _approve()
    target = ws / "a.txt"

    async def scenario() -> None:
        async with served(ws, mode=mode, elicit=user, plan_mode=True) as (app, client, _):
            names = [t.name for t in (await client.list_tools()).tools]
            assert names[-1] == "exit_plan_mode" and names[:-1] == app.session.tool_names()
            assert not (await client.call_tool("peek", {"path": "a.txt"})).is_error
            before = (target.read_bytes(), target.stat().st_mtime_ns)
            r = await client.call_tool("swap", {"path": "a.txt", "old": "hello", "new": "bye"})
            assert r.is_error and error_kind(r) == "blocked"
            assert "plan mode" in text_of(r)
            assert (target.read_bytes(), target.stat().st_mtime_ns) == before
            assert user.messages == []  # refusing in plan mode asks nobody

            r = await client.call_tool("exit_plan_mode", {"plan": PLAN})
            assert not r.is_error, text_of(r)
            assert text_of(r).startswith("The user approved the plan. Plan mode has ended")
            assert app.session.mode == "default"

            r = await client.call_tool("swap", {"path": "a.txt", "old": "hello", "new": "bye"})
            assert not r.is_error, text_of(r)
            again = await client.call_tool("exit_plan_mode", {"plan": PLAN})
            assert not again.is_error and "not in plan mode" in text_of(again)
    run(scenario)
    assert target.read_text() == "bye world\n"
    [message] = user.messages  # asked once, with the plan itself
    assert "leave plan mode" in message and PLAN in message


@pytest.mark.parametrize("mode", ERAS)
@pytest.mark.parametrize(("action", "content"), [("decline", None),
                                                 ("accept", {"approve": False}),
                                                 ("cancel", None)])
def test_a_refused_plan_keeps_plan_mode(ws: Path, mode: str, action: str, content) -> None:
    user = Elicitor(action, content)

    async def scenario() -> None:
        async with served(ws, mode=mode, elicit=user, plan_mode=True) as (app, client, _):
            await client.call_tool("peek", {"path": "a.txt"})
            r = await client.call_tool("exit_plan_mode", {"plan": PLAN})
            assert r.is_error and error_kind(r) == "blocked"
            assert (r.meta or {})["callgate/error"]["signature"] == "plan:not_approved"
            assert "stays in plan mode" in text_of(r)
            assert app.session.mode == "plan"
            r = await client.call_tool("swap", {"path": "a.txt", "old": "hello", "new": "bye"})
            assert r.is_error and "plan mode" in text_of(r)
    run(scenario)
    assert (ws / "a.txt").read_text() == "hello world\n"
    assert len(user.messages) == 1


def test_a_client_without_elicitation_cannot_approve_unless_configured(ws: Path) -> None:
    async def scenario() -> None:
        async with served(ws, plan_mode=True) as (app, client, _):
            r = await client.call_tool("exit_plan_mode", {"plan": PLAN})
            assert r.is_error and (r.meta or {})["callgate/error"]["signature"] == \
                "plan:no_approver"
            assert "restart `callgate serve` without --mode plan" in text_of(r)
            assert app.session.mode == "plan"
        allow = {"permissions": {"ask_without_approver": "allow"}}
        async with served(ws, config=allow, plan_mode=True) as (app, client, _):
            r = await client.call_tool("exit_plan_mode", {"plan": PLAN})
            assert not r.is_error and app.session.mode == "default"
    run(scenario)


def test_a_malformed_plan_call_asks_nobody(ws: Path) -> None:
    user = _approve()

    async def scenario() -> None:
        async with served(ws, elicit=user, plan_mode=True) as (app, client, _):
            for bad in ({}, {"plan": ""}, {"plan": PLAN, "force": True}, {"plan": 5}):
                r = await client.call_tool("exit_plan_mode", bad)
                assert r.is_error and error_kind(r) == "invalid_arguments", bad
            assert app.session.mode == "plan"
    run(scenario)
    assert user.messages == []


def test_without_plan_mode_there_is_no_exit_plan_mode_tool(ws: Path) -> None:
    async def scenario() -> None:
        async with served(ws) as (_, client, _kit):
            names = [t.name for t in (await client.list_tools()).tools]
            assert "exit_plan_mode" not in names
            r = await client.call_tool("exit_plan_mode", {"plan": PLAN})
            assert r.is_error and error_kind(r) == "unknown_tool"
    run(scenario)


def _has_files_plugin() -> bool:
    try:
        return "write_file" in Host.boot({}, os="posix").registry.names()
    except Exception:
        return False


@pytest.mark.skipif(sys.platform == "win32" or not _has_files_plugin(),
                    reason="needs the built-in files plugin on POSIX")
def test_callgate_serve_mode_plan_over_stdio(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    asked: list[str] = []

    async def approve(ctx, params):
        import mcp_types as types

        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"approve": True})

    async def scenario() -> None:
        params = StdioServerParameters(command=sys.executable, args=[
            "-m", "callgate_cli", "serve", "--workspace", str(ws), "--mode", "plan"],
            env=child_env())
        async with stdio_client(params) as (read, write), \
                ClientSession(read, write, elicitation_callback=approve) as client:
            init = await client.initialize()
            assert "plan mode" in (init.instructions or "")
            names = {t.name for t in (await client.list_tools()).tools}
            assert {"write_file", "exit_plan_mode"} <= names
            args = {"path": "new.txt", "content": "made after approval\n"}
            r = await client.call_tool("write_file", args)
            assert r.is_error and "plan mode" in text_of(r)
            assert not (ws / "new.txt").exists()
            r = await client.call_tool("exit_plan_mode", {"plan": "write new.txt"})
            assert not r.is_error, text_of(r)
            r = await client.call_tool("write_file", args)
            assert not r.is_error, text_of(r)
    run(scenario)
    assert (ws / "new.txt").read_text() == "made after approval\n"
    assert len(asked) == 1 and "write new.txt" in asked[0]
