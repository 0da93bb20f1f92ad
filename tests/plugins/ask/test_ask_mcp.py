"""ask answered by MCP elicitation: the real ``callgate serve`` over stdio with the
``mcp`` SDK's stdio client as the user's side, and the server in process on both
protocol eras (``elicitation/create`` mid-call; 2026-07-28's ``InputRequiredResult``)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
import callgate_ask
import mcp_types as types
import pytest
from callgate import Host
from callgate_mcp_serve import CallgateMCP, ElicitationApprover, ElicitationAsker
from mcp import Client, ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from .test_ask import DB, FEATURES


def run(scenario: Any) -> Any:
    try:
        return anyio.run(scenario)
    except BaseExceptionGroup as group:
        while isinstance(group, BaseExceptionGroup) and len(group.exceptions) == 1:
            group = group.exceptions[0]
        raise group from None


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))


class User:
    """The user behind the MCP client: answers each form with ``action``/``content``."""

    def __init__(self, action: str = "accept", content: dict[str, Any] | None = None) -> None:
        self.action, self.content = action, content
        self.forms: list[types.ElicitRequestFormParams] = []

    async def __call__(self, ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        assert isinstance(params, types.ElicitRequestFormParams)
        self.forms.append(params)
        return types.ElicitResult(
            action=self.action, content=self.content if self.action == "accept" else None
        )


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    w = tmp_path / "ws"
    w.mkdir()
    return w


def test_callgate_serve_asks_over_stdio_and_the_clients_user_answers(ws: Path) -> None:
    user = User("accept", {"q1": "SQLite", "q2": ["Auth", "Export"], "q2_other": ""})

    async def scenario() -> tuple[types.CallToolResult, types.CallToolResult]:
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "callgate_cli", "serve", "--workspace", str(ws), "--surface", "full"],
            env={
                "CALLGATE_HOME": os.environ["CALLGATE_HOME"],
                "CALLGATE_CONFIG_HOME": os.environ["CALLGATE_CONFIG_HOME"],
                "CALLGATE_LOAD_PLUGINS": "ask",
            },
        )
        async with (
            stdio_client(params) as (read, write),
            ClientSession(read, write, elicitation_callback=user) as client,
        ):
            await client.initialize()
            assert "ask" in [t.name for t in (await client.list_tools()).tools]
            answered = await client.call_tool("ask", {"questions": [DB, FEATURES]})
            user.action = "decline"
            dismissed = await client.call_tool("ask", {"questions": [DB]})
            return answered, dismissed

    answered, dismissed = run(scenario)
    assert not answered.is_error
    assert text_of(answered) == ("The user answered:\n- Database: SQLite\n- Features: Auth, Export")
    assert "Stop and wait" in text_of(dismissed)
    form = user.forms[0]
    assert form.message.splitlines() == [
        "The assistant asks:",
        "1. [Database] Which database should the service use?",
        "2. [Features] Which features ship first?",
    ]
    props = form.requested_schema["properties"]
    assert props["q1"]["oneOf"][0] == {
        "const": "Postgres",
        "title": "Postgres — relational, already deployed",
    }
    assert props["q2"]["type"] == "array" and len(props["q2"]["items"]["anyOf"]) == 3
    assert props["q1_other"]["type"] == "string"


@pytest.mark.parametrize("mode", ["legacy", "auto"], ids=["handshake", "2026-07-28"])
def test_ask_in_process_on_both_eras_with_a_typed_answer(ws: Path, mode: str) -> None:
    user = User("accept", {"q1": "Postgres", "q1_other": "DuckDB"})

    async def scenario() -> types.CallToolResult:
        host = Host.boot(
            {}, plugins=[callgate_ask, ElicitationApprover(), ElicitationAsker()], entrypoints=False
        )
        app = CallgateMCP(host, ws)
        async with Client(app.server, mode=mode, elicitation_callback=user) as client:
            return await client.call_tool("ask", {"questions": [DB]})

    result = run(scenario)
    assert text_of(result) == "The user answered:\n- Database: (typed) DuckDB"
    assert len(user.forms) == 1


def test_a_client_without_elicitation_has_no_one_to_ask(ws: Path) -> None:
    async def scenario() -> types.CallToolResult:
        host = Host.boot({}, plugins=[callgate_ask, ElicitationAsker()], entrypoints=False)
        app = CallgateMCP(host, ws)
        async with Client(app.server, mode="legacy") as client:
            return await client.call_tool("ask", {"questions": [DB]})

    assert text_of(run(scenario)).startswith("No one is available to answer")


def test_serve_boots_without_the_ask_plugin(ws: Path) -> None:
    host = Host.boot({}, plugins=[ElicitationAsker()], entrypoints=False)
    assert "ask" not in host.visible_names()
