"""``callgate serve --pair`` (issue 36.12): each MCP session is a planner/executor pair.

The client's model is the planner (read-only) until it hands its plan over with
``exit_plan_mode`` and the *user* approves it through an elicitation form; then its calls run
in the executor. A decline hands nothing over; a client that cannot elicit gets an error and
is never approved, not even with ``ask_without_approver = "allow"``. Run through the real
``callgate serve`` (stdio and ``--http``) with the SDK's ``ClientSession``.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx2
import mcp_types as types
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from .http_support import Served
from .test_server import ERAS, run, served, text_of
from .toolkit import child_env

PLAN = "1. write b.txt saying done\n2. check it"
WRITE = {"path": "b.txt", "content": "done\n"}


class User:
    """The human behind the client: answers each elicitation with ``action``/``content``."""

    def __init__(self, action: str = "accept", content: dict[str, Any] | None = None) -> None:
        self.action = action
        self.content = {"approve": True} if content is None and action == "accept" else content
        self.messages: list[str] = []

    async def __call__(self, ctx: Any, params: Any) -> types.ElicitResult:
        self.messages.append(params.message)
        return types.ElicitResult(action=self.action, content=self.content)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    w = tmp_path / "ws"
    w.mkdir()
    (w / "a.txt").write_text("alpha\n")
    return w


def env() -> dict[str, str]:
    return child_env(CALLGATE_LOAD_PLUGINS="files")


@contextlib.asynccontextmanager
async def over_stdio(ws: Path, user: User | None, *extra: str) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(command=sys.executable, args=[
        "-m", "callgate_cli", "serve", "--workspace", str(ws), "--pair", *extra], env=env())
    async with stdio_client(params) as (read, write), \
            ClientSession(read, write, elicitation_callback=user) as client:
        init = await client.initialize()
        assert "planner/executor pair" in (init.instructions or "")
        yield client


@contextlib.asynccontextmanager
async def over_http(url: str, user: User | None,
                    token: str | None = None) -> AsyncIterator[ClientSession]:
    headers = {"authorization": f"Bearer {token}"} if token else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=120.0)) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write, elicitation_callback=user) as client,
    ):
        await client.initialize()
        yield client


def signature(result: types.CallToolResult) -> str | None:
    return ((result.meta or {}).get("callgate/error") or {}).get("signature")


def sessions() -> list[dict[str, Any]]:
    """The sessions the served process recorded (planner and executor of each pair)."""
    proc = subprocess.run([sys.executable, "-m", "callgate_cli", "sessions", "list", "--json",
                           "--children"], capture_output=True, text=True, timeout=60,
                          env={**os.environ, **env()})
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines()]


async def plan_then_approve(client: ClientSession, ws: Path) -> None:
    """The planner reads and is refused a write; the approved hand-over lets the executor
    write (and the executor has its own ledger: it must read before it edits)."""
    names = {t.name for t in (await client.list_tools()).tools}
    assert {"read_file", "write_file", "edit_file", "exit_plan_mode"} <= names
    assert not (await client.call_tool("read_file", {"path": "a.txt"})).is_error
    refused = await client.call_tool("write_file", WRITE)
    assert refused.is_error and signature(refused) == "mode:plan", text_of(refused)
    assert not (ws / "b.txt").exists()

    handed = await client.call_tool("exit_plan_mode", {"plan": PLAN})
    assert not handed.is_error, text_of(handed)
    assert "your calls run in the executor session" in text_of(handed)

    wrote = await client.call_tool("write_file", WRITE)
    assert not wrote.is_error, text_of(wrote)
    assert "[plan approved]" in text_of(wrote)  # the executor is told, as on the Python API
    edit = {"path": "a.txt", "old_string": "alpha", "new_string": "beta"}
    unseen = await client.call_tool("edit_file", edit)
    assert unseen.is_error  # the planner read a.txt; the executor has not
    assert not (await client.call_tool("read_file", {"path": "a.txt"})).is_error
    edited = await client.call_tool("edit_file", edit)
    assert not edited.is_error, text_of(edited)
    again = await client.call_tool("exit_plan_mode", {"plan": PLAN})
    assert not again.is_error and "already approved" in text_of(again)


def test_stdio_an_approved_plan_hands_over_to_the_executor(ws: Path) -> None:
    user = User()

    async def scenario() -> None:
        async with over_stdio(ws, user) as client:
            await plan_then_approve(client, ws)
    run(scenario)
    assert (ws / "b.txt").read_text() == "done\n"
    assert (ws / "a.txt").read_text() == "beta\n"
    [asked] = user.messages  # the user was asked once, with the plan itself
    assert "hands this plan to the executor" in asked and PLAN in asked
    recorded = sessions()
    assert len(recorded) == 2  # the pair: a planner and an executor
    planner, executor = sorted(recorded, key=lambda s: s["calls"])
    assert planner["calls"] == 2  # read, the refused write (the hand-over is the server's)
    assert executor["calls"] == 4  # write, the unseen edit, read, edit
    assert executor["preview"].startswith("[approved plan, handed over by the planner]")
    assert planner["principal"] == executor["principal"]


@pytest.mark.parametrize(("action", "content"), [("decline", None),
                                                 ("accept", {"approve": False}),
                                                 ("cancel", None)])
def test_stdio_a_refused_plan_hands_nothing_over(ws: Path, action: str, content: Any) -> None:
    user = User(action, content)

    async def scenario() -> None:
        async with over_stdio(ws, user) as client:
            r = await client.call_tool("exit_plan_mode", {"plan": PLAN})
            assert r.is_error and signature(r) == "pair:not_approved", text_of(r)
            assert "you are still the planner" in text_of(r)
            assert "nothing executed" in text_of(r)
            w = await client.call_tool("write_file", WRITE)
            assert w.is_error and signature(w) == "mode:plan", text_of(w)
    run(scenario)
    assert not (ws / "b.txt").exists()
    assert len(user.messages) == 1


def test_stdio_a_client_without_elicitation_is_never_approved(ws: Path, tmp_path: Path) -> None:
    """Even a config that lets ``ask`` through without an approver hands nothing over."""
    config = tmp_path / "callgate.toml"
    config.write_text('[permissions]\nask_without_approver = "allow"\n')

    async def scenario() -> None:
        async with over_stdio(ws, None, "--config", str(config)) as client:
            r = await client.call_tool("exit_plan_mode", {"plan": PLAN})
            assert r.is_error and signature(r) == "pair:no_elicitation", text_of(r)
            assert "declared no elicitation support" in text_of(r)
            assert "nothing executed" in text_of(r)
            w = await client.call_tool("write_file", WRITE)
            assert w.is_error and signature(w) == "mode:plan", text_of(w)
    run(scenario)
    assert not (ws / "b.txt").exists()


def test_http_each_mcp_session_is_its_own_pair(ws: Path) -> None:
    """Over ``--http``: one client's approval hands over its own pair only; a declining
    client and one without elicitation stay planners and execute nothing."""
    approving, declining = User(), User("decline")

    async def scenario(url: str) -> None:
        async with over_http(url, approving) as first, over_http(url, declining) as second, \
                over_http(url, None) as third:
            await plan_then_approve(first, ws)
            r = await second.call_tool("exit_plan_mode", {"plan": PLAN})
            assert r.is_error and signature(r) == "pair:not_approved", text_of(r)
            r = await third.call_tool("exit_plan_mode", {"plan": PLAN})
            assert r.is_error and signature(r) == "pair:no_elicitation", text_of(r)
            for client in (second, third):
                w = await client.call_tool("write_file", {"path": "c.txt", "content": "x"})
                assert w.is_error and signature(w) == "mode:plan", text_of(w)

    with Served(["--http", "127.0.0.1:0", "--workspace", str(ws), "--pair"],
                env={"CALLGATE_LOAD_PLUGINS": "files"}) as served:
        run(lambda: scenario(served.url))
    assert (ws / "b.txt").read_text() == "done\n"
    assert not (ws / "c.txt").exists()
    assert len(approving.messages) == 1 and len(declining.messages) == 1


def test_http_a_pair_belongs_to_the_token_that_opened_it(ws: Path, tmp_path: Path) -> None:
    """Both sessions of a pair opened with a bearer token are that token's principal's (so
    their session tools see only its sessions), never the server's operating-system user's."""
    tokens = tmp_path / "tokens"
    tokens.write_text("pair-token-0123456789abcdef\n")

    async def scenario(url: str) -> None:
        async with over_http(url, User(), token="pair-token-0123456789abcdef") as client:
            await plan_then_approve(client, ws)

    with Served(["--http", "127.0.0.1:0", "--workspace", str(ws), "--pair", "--token-file",
                 str(tokens)], env={"CALLGATE_LOAD_PLUGINS": "files"}) as served:
        run(lambda: scenario(served.url))
    recorded = sessions()
    assert len(recorded) == 2
    assert all(s["principal"].startswith("token-") for s in recorded), recorded


@pytest.mark.parametrize(("extra", "why"), [(["--mode", "plan"], "drop --mode plan"),
                                           (["--session", "x"], "not joined by name")])
def test_pair_refuses_what_a_pair_cannot_be(ws: Path, extra: list[str], why: str) -> None:
    from .http_support import run_cli

    proc = run_cli(["--workspace", str(ws), "--pair", *extra])
    assert proc.returncode == 2 and why in proc.stderr, proc.stderr


@pytest.mark.parametrize("mode", ERAS)
@pytest.mark.parametrize("approve", [True, False])
def test_both_protocol_eras_ask_the_user_before_handing_over(ws: Path, mode: str,
                                                            approve: bool) -> None:
    """In process on both eras (a 2026-07-28 connection asks through an input request): only
    the user's yes moves the connection from the planner to the executor."""
    user = User("accept", {"approve": approve})
    swap = {"path": "a.txt", "old": "alpha", "new": "beta"}

    async def scenario() -> None:
        async with served(ws, mode=mode, elicit=user, pair=True) as (app, client, _):
            assert app.pair is not None and app.session is app.pair.planner
            assert not (await client.call_tool("peek", {"path": "a.txt"})).is_error
            r = await client.call_tool("exit_plan_mode", {"plan": PLAN})
            assert r.is_error != approve, text_of(r)
            assert app.pair.approved == approve
            assert app.session is (app.pair.executor if approve else app.pair.planner)
            assert app.pair.planner.mode == "plan"
            assert not (await client.call_tool("peek", {"path": "a.txt"})).is_error
            r = await client.call_tool("swap", swap)
            assert r.is_error != approve, text_of(r)
    run(scenario)
    assert (ws / "a.txt").read_text() == ("beta\n" if approve else "alpha\n")
    assert len(user.messages) == 1
