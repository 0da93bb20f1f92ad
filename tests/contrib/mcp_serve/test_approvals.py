"""Approvals over a real stdio connection (issue 23, item 1).

Every case drives ``callgate serve``'s stdio server (the toolkit launcher, or the real
``callgate serve`` with the files plugin for diffs) through the ``mcp`` SDK's stdio client:

- only an ``accept`` whose content fits the form with ``allow`` the boolean ``true`` approves;
- cancelling the ``tools/call`` withdraws its approval: nothing runs, a late answer is ignored;
- ``[serve] approval_timeout_s`` refuses an unanswered call as not approved;
- a pending approval never holds the session's other requests;
- the message shows the diff, the command and the paths as people read them.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from .test_server import error_kind, run, text_of
from .toolkit import child_env

HERE = Path(__file__).parent
LAUNCHER = HERE / "serve_toolkit.py"

Answer = tuple[str, Any] | Callable[[], Awaitable[tuple[str, Any]]]


class User:
    """The person behind the client: answers each elicitation with the next scripted answer
    (an ``(action, content)`` pair, or a coroutine function deciding when and what)."""

    def __init__(self, *answers: Answer) -> None:
        self.answers = list(answers)
        self.messages: list[str] = []
        self.withdrawn = 0  # questions the server cancelled before they were answered

    async def __call__(self, ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.messages.append(params.message)
        answer = self.answers.pop(0)
        try:
            action, content = answer if isinstance(answer, tuple) else await answer()
        except anyio.get_cancelled_exc_class():
            self.withdrawn += 1
            raise
        return types.ElicitResult(action=action, content=content)


@asynccontextmanager
async def toolkit_client(
    ws: Path, tmp_path: Path, user: User, config: dict[str, Any] | None = None
) -> AsyncIterator[ClientSession]:
    config = {"permissions": {"mode": "ask"}, **(config or {})}
    params = StdioServerParameters(
        command=sys.executable,
        args=[str(LAUNCHER), str(ws), str(tmp_path / "marker"), json.dumps(config)],
        env=child_env(PYTHONPATH=os.pathsep.join(sys.path)),
    )
    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write, elicitation_callback=user) as client,
    ):
        await client.initialize()
        yield client


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    w = tmp_path / "ws"
    w.mkdir()
    (w / "a.txt").write_text("hello world\n")
    return w


SWAP = {"path": "a.txt", "old": "hello", "new": "bye"}

NOT_APPROVALS = [
    ("accept", {"allow": "false"}),
    ("accept", {"allow": 0}),
    ("accept", {}),
    ("accept", None),
    ("accept", {"allow": "true"}),
    ("accept", {"allow": 1}),
    ("accept", {"allow": False}),
    ("decline", None),
    ("cancel", None),
]


def test_only_an_explicit_boolean_true_approves(ws: Path, tmp_path: Path) -> None:
    user = User(*NOT_APPROVALS, ("accept", {"allow": True}))
    target = ws / "a.txt"

    async def scenario() -> list[str]:
        texts = []
        async with toolkit_client(ws, tmp_path, user) as client:
            await client.call_tool("peek", {"path": "a.txt"})
            before = (target.read_bytes(), target.stat().st_mtime_ns)
            for _ in NOT_APPROVALS:
                r = await client.call_tool("swap", SWAP)
                assert r.is_error and error_kind(r) == "blocked", text_of(r)
                texts.append(text_of(r).split("\n\n")[0])  # without the storm hint
                assert (target.read_bytes(), target.stat().st_mtime_ns) == before
            r = await client.call_tool("swap", SWAP)
            assert not r.is_error, text_of(r)
        return texts

    texts = run(scenario)
    assert len(user.messages) == len(NOT_APPROVALS) + 1
    assert (
        texts[:6]
        == [
            "blocked: swap was not approved: the MCP client's answer did not fit "
            "the approval form (only allow = true approves)"
        ]
        * 6
    )
    assert texts[6:] == [
        "blocked: swap was not approved: the user refused it in the MCP client",
        "blocked: swap was not approved: the user declined it in the MCP client",
        "blocked: swap was not approved: the user dismissed the approval request in the MCP client",
    ]
    assert target.read_text() == "bye world\n"


def test_a_cancelled_request_withdraws_its_approval_and_a_late_answer_is_ignored(
    ws: Path, tmp_path: Path
) -> None:
    asked = anyio.Event()

    async def slow_yes() -> tuple[str, Any]:
        asked.set()
        await anyio.sleep(1.5)  # the client cancels the call meanwhile
        return "accept", {"allow": True}

    user = User(slow_yes)
    target = ws / "a.txt"

    async def scenario() -> float:
        async with toolkit_client(ws, tmp_path, user) as client:
            await client.call_tool("peek", {"path": "a.txt"})
            before = target.read_bytes()
            async with anyio.create_task_group() as tg:

                async def cancelled_swap() -> None:
                    with anyio.CancelScope() as scope:
                        tg.start_soon(_cancel_when, asked, scope)
                        await client.call_tool("swap", SWAP)
                    assert scope.cancelled_caught

                tg.start_soon(cancelled_swap)
            started = time.monotonic()
            r = await client.call_tool("peek", {"path": "a.txt"})  # the session is free at once
            took = time.monotonic() - started
            assert text_of(r) == "hello world\n"
            await anyio.sleep(2.0)  # past the moment the late answer would have come
            assert target.read_bytes() == before
            r = await client.call_tool("peek", {"path": "a.txt"})
            assert text_of(r) == "hello world\n"
        return took

    took = run(scenario)
    assert took < 1.0
    assert len(user.messages) == 1 and user.withdrawn == 1  # the question was withdrawn
    assert target.read_text() == "hello world\n"


async def _cancel_when(event: anyio.Event, scope: anyio.CancelScope) -> None:
    await event.wait()
    await anyio.sleep(0.2)
    scope.cancel()


def test_an_unanswered_approval_times_out_refused(ws: Path, tmp_path: Path) -> None:
    async def never() -> tuple[str, Any]:
        await anyio.sleep(30)
        return "accept", {"allow": True}

    user = User(never)
    config = {"serve": {"approval_timeout_s": 0.5}}

    async def scenario() -> tuple[types.CallToolResult, float]:
        async with toolkit_client(ws, tmp_path, user, config) as client:
            await client.call_tool("peek", {"path": "a.txt"})
            started = time.monotonic()
            r = await client.call_tool("swap", SWAP)
            return r, time.monotonic() - started

    r, took = run(scenario)
    assert r.is_error and error_kind(r) == "blocked"
    assert text_of(r) == (
        "blocked: swap was not approved: nobody answered the approval request "
        "in time ([serve] approval_timeout_s)"
    )
    assert 0.4 < took < 5
    assert user.withdrawn == 1
    assert (ws / "a.txt").read_text() == "hello world\n"


def test_a_pending_approval_never_holds_other_requests(ws: Path, tmp_path: Path) -> None:
    release = anyio.Event()

    async def yes_when_released() -> tuple[str, Any]:
        await release.wait()
        return "accept", {"allow": True}

    user = User(yes_when_released)

    async def scenario() -> list[str]:
        seen: list[str] = []
        async with toolkit_client(ws, tmp_path, user) as client:
            await client.call_tool("peek", {"path": "a.txt"})
            async with anyio.create_task_group() as tg:

                async def swap() -> None:
                    r = await client.call_tool("swap", SWAP)
                    seen.append("swap " + ("error" if r.is_error else "ok"))

                tg.start_soon(swap)
                while not user.messages:
                    await anyio.sleep(0.02)
                with anyio.fail_after(3):  # the approval is pending: other calls still run
                    for _ in range(3):
                        r = await client.call_tool("peek", {"path": "a.txt"})
                        seen.append(text_of(r))
                    r = await client.call_tool("snooze", {"seconds": 0.05})
                    seen.append(text_of(r))
                release.set()
        return seen

    seen = run(scenario)
    assert seen == ["hello world\n"] * 3 + ["slept 0.05s", "swap ok"]
    assert (ws / "a.txt").read_text() == "bye world\n"


# --- the message, with the real files plugin -------------------------------------------------


def test_the_message_shows_the_diff_the_paths_and_keeps_the_first_change(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    body = [f"line {i}" for i in range(400)]
    (ws / "big.txt").write_text("\n".join(body) + "\n")
    new = list(body)
    new[5] = "line 5 CHANGED FIRST"
    for i in range(100, 300):
        new[i] = f"rewritten {i}"
    user = User(("decline", None))
    config = tmp_path / "callgate.toml"
    config.write_text('[permissions]\nmode = "ask"\n')
    params = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "callgate_cli",
            "serve",
            "--workspace",
            str(ws),
            "--config",
            str(config),
            "--surface",
            "full",
        ],
        env=child_env(),
    )

    async def scenario() -> types.CallToolResult:
        async with (
            stdio_client(params) as (read, write),
            ClientSession(read, write, elicitation_callback=user) as client,
        ):
            await client.initialize()
            r = await client.call_tool("read_file", {"path": "big.txt"})
            assert not r.is_error, text_of(r)
            return await client.call_tool(
                "write_file", {"path": "big.txt", "content": "\n".join(new) + "\n"}
            )

    r = run(scenario)
    assert r.is_error and "not approved" in text_of(r)
    [message] = user.messages
    assert "FilePreview" not in message and "old_bytes" not in message
    assert message.startswith("callgate asks for approval: run write_file?")
    assert "Paths: big.txt (path)" in message
    assert "Modify big.txt (+201 -201 lines):" in message
    assert "-line 5\n+line 5 CHANGED FIRST" in message  # the first change is never hidden
    assert "diff lines not shown⟩" in message and "+rewritten 299" in message  # and its end
    assert len(message) < 7000
    assert (ws / "big.txt").read_text() == "\n".join(body) + "\n"
