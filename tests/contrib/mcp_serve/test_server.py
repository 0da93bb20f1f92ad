"""``callgate serve``'s MCP server, driven in process by the ``mcp`` SDK's own ``Client``.

Every scenario runs on both protocol eras the SDK speaks: the handshake era
(``initialize``; the server may send ``elicitation/create`` mid-call) and the
2026-07-28 era (no server-initiated requests; an approval is an
``InputRequiredResult`` that the client answers by retrying the call).
The tools come from the test-only `Toolkit`, so these tests need no built-in plugin.
"""

from __future__ import annotations

import base64
import itertools
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import callgate_providers as providers
import mcp_types as types
import pytest
from callgate import Host
from callgate_mcp_serve import CallgateMCP, ElicitationApprover
from callgate_mcp_serve._approval import APPROVAL_KEY
from mcp import Client

from .toolkit import PNG, Toolkit, alive

ERAS = [pytest.param("legacy", id="handshake"), pytest.param("auto", id="2026-07-28")]

ASK = {"permissions": {"mode": "ask"}}


@asynccontextmanager
async def served(ws: Path, *, kit: Toolkit | None = None, config: dict[str, Any] | None = None,
                 mode: str = "legacy", elicit: Any = None, **kwargs: Any
                 ) -> AsyncIterator[tuple[CallgateMCP, Client, Toolkit]]:
    kit = kit or Toolkit()
    host = Host.boot(config or {}, plugins=[kit, ElicitationApprover()], entrypoints=False)
    app = CallgateMCP(host, ws, **kwargs)
    async with Client(app.server, mode=mode, elicitation_callback=elicit) as client:
        yield app, client, kit


def run(scenario: Any) -> Any:
    """``anyio.run``, re-raising a lone exception out of the task-group wrappers."""
    try:
        return anyio.run(scenario)
    except BaseExceptionGroup as group:
        while isinstance(group, BaseExceptionGroup) and len(group.exceptions) == 1:
            group = group.exceptions[0]
        raise group from None


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))


def error_kind(result: types.CallToolResult) -> str | None:
    meta = result.meta or {}
    return (meta.get("callgate/error") or {}).get("kind")


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    w = tmp_path / "ws"
    w.mkdir()
    (w / "a.txt").write_text("hello world\n")
    return w


class Elicitor:
    """A scripted user behind the client: answers every elicitation with ``answer``."""

    def __init__(self, action: str = "accept", content: dict[str, Any] | None = None,
                 fail: bool = False) -> None:
        self.action, self.content, self.fail = action, content, fail
        self.messages: list[str] = []

    async def __call__(self, ctx: Any, params: types.ElicitRequestParams
                       ) -> types.ElicitResult | types.ErrorData:
        self.messages.append(params.message)
        if self.fail:
            return types.ErrorData(code=types.INTERNAL_ERROR, message="the client broke")
        content = self.content if self.action == "accept" else None
        if self.action == "accept" and content is None:
            content = {"allow": True}
        return types.ElicitResult(action=self.action, content=content)


# --- tools/list -------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ERAS)
def test_tools_list_is_the_session_surface_in_its_mcp_rendering(ws: Path, mode: str) -> None:
    async def scenario() -> None:
        async with served(ws, mode=mode) as (app, client, _):
            listed = (await client.list_tools()).tools
            assert app.session is not None
            expected = providers.surface(app.session, "mcp")
            dumped = [t.model_dump(by_alias=True, exclude_none=True) for t in listed]
            assert dumped == expected
            hints = {t.name: (t.annotations.read_only_hint, t.annotations.destructive_hint)
                     for t in listed if t.annotations}
            assert hints["peek"] == (True, False)
            assert hints["swap"] == (False, True)
            assert hints["spawn"] == (False, False)
            assert [t.name for t in listed] == app.session.tool_names()
    run(scenario)


# --- tools/call ---------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ERAS)
def test_calls_share_one_session_and_a_stale_edit_is_an_error_result(ws: Path, mode: str) -> None:
    target = ws / "a.txt"

    async def scenario() -> None:
        async with served(ws, mode=mode) as (app, client, _):
            r = await client.call_tool("peek", {"path": "a.txt"})
            assert (r.is_error, text_of(r)) == (False, "hello world\n")
            r = await client.call_tool("swap", {"path": "a.txt", "old": "hello", "new": "bye"})
            assert not r.is_error, text_of(r)
            r = await client.call_tool("swap", {"path": "a.txt", "old": "bye", "new": "so long"})
            assert not r.is_error, text_of(r)  # the host's own write refreshed the observation
            assert target.read_text() == "so long world\n"

            target.write_text("changed outside\n")  # an editor, another process...
            before = (target.read_bytes(), target.stat().st_mtime_ns)
            r = await client.call_tool("swap", {"path": "a.txt", "old": "changed", "new": "x"})
            assert r.is_error and error_kind(r) == "stale_version"
            assert text_of(r).startswith("FS_STALE_VERSION: a.txt changed after this session")
            assert (target.read_bytes(), target.stat().st_mtime_ns) == before

            await client.call_tool("peek", {"path": "a.txt"})
            r = await client.call_tool("swap", {"path": "a.txt", "old": "changed", "new": "x"})
            assert not r.is_error and target.read_text() == "x outside\n"
            assert app.session is not None
            assert app.session.counters()["argument_validations"] == 6
    run(scenario)


@pytest.mark.parametrize("mode", ERAS)
def test_every_failure_is_an_is_error_result_with_the_host_text(ws: Path, mode: str) -> None:
    async def scenario() -> None:
        async with served(ws, mode=mode) as (_, client, _kit):
            r = await client.call_tool("peek", {"paht": "a.txt"})
            text = text_of(r)
            assert r.is_error and error_kind(r) == "invalid_arguments"
            assert text.startswith("argument validation failed for peek (schema ")
            assert "- /: required; expected required properties: path" in text
            assert 'did you mean "path"?' in text
            assert (r.meta or {})["callgate/error"]["signature"].startswith(
                "argument_validation:peek:")

            r = await client.call_tool("snooze", {"seconds": "1"})  # never coerced
            assert r.is_error and error_kind(r) == "invalid_arguments"
            assert "- /seconds: type; expected type number" in text_of(r)

            r = await client.call_tool("peak", {"path": "a.txt"})
            assert r.is_error and error_kind(r) == "unknown_tool"
            assert text_of(r) == 'unknown tool "peak"; did you mean peek?'

            r = await client.call_tool("boom", {})
            assert r.is_error and error_kind(r) == "tool_error"
            assert text_of(r) == "boom failed: the toolkit exploded on purpose"

            r = await client.call_tool("swap", {"path": "a.txt", "old": "hello", "new": "x"})
            assert r.is_error and error_kind(r) == "not_observed"

            r = await client.call_tool("peek", {"path": "../outside.txt"})
            assert r.is_error and error_kind(r) == "outside_workspace"

            r = await client.call_tool("peek", None)  # no arguments at all validate as {}
            assert r.is_error and "expected required properties: path" in text_of(r)
            assert (ws / "a.txt").read_text() == "hello world\n"
    run(scenario)


@pytest.mark.parametrize("mode", ERAS)
def test_images_notices_and_success_results_keep_their_shape(ws: Path, mode: str) -> None:
    async def scenario() -> None:
        async with served(ws, mode=mode) as (_, client, _kit):
            r = await client.call_tool("picture", {})
            assert not r.is_error and "callgate/error" not in (r.meta or {})
            image = [b for b in r.content if isinstance(b, types.ImageContent)]
            assert len(image) == 1 and image[0].mime_type == "image/png"
            assert base64.b64decode(image[0].data) == PNG

            # a notice is appended once, to the first result shaped after it was queued
            nudged = text_of(await client.call_tool("nudge", {"text": "hi"}))
            assert nudged == "queued\n\nnote from nudge: hi"
            again = text_of(await client.call_tool("peek", {"path": "a.txt"}))
            assert again == "hello world\n"
    run(scenario)


# --- ask permissions -------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ERAS)
def test_ask_goes_to_the_user_through_elicitation(ws: Path, mode: str) -> None:
    user = Elicitor("accept")

    async def scenario() -> None:
        async with served(ws, config=ASK, mode=mode, elicit=user) as (_, client, _kit):
            await client.call_tool("peek", {"path": "a.txt"})
            assert user.messages == []  # read-only tools fall back to allow, nobody is asked
            r = await client.call_tool("swap", {"path": "a.txt", "old": "hello", "new": "bye"})
            assert not r.is_error, text_of(r)
    run(scenario)
    assert (ws / "a.txt").read_text() == "bye world\n"
    [message] = user.messages
    assert message.startswith("callgate asks for approval: run swap?")
    assert '"new": "bye"' in message and "- hello\n+ bye" in message


@pytest.mark.parametrize("mode", ERAS)
@pytest.mark.parametrize(("action", "content", "reason"), [
    ("decline", None, "the user declined it in the MCP client"),
    ("cancel", None, "the user dismissed the approval request in the MCP client"),
    ("accept", {"allow": False}, "the user refused it in the MCP client"),
])
def test_a_refused_approval_blocks_and_changes_nothing(ws: Path, mode: str, action: str,
                                                       content: Any, reason: str) -> None:
    user = Elicitor(action, content)
    target = ws / "a.txt"

    async def scenario() -> None:
        async with served(ws, config=ASK, mode=mode, elicit=user) as (_, client, _kit):
            await client.call_tool("peek", {"path": "a.txt"})
            before = (target.read_bytes(), target.stat().st_mtime_ns)
            r = await client.call_tool("swap", {"path": "a.txt", "old": "hello", "new": "bye"})
            assert r.is_error and error_kind(r) == "blocked"
            assert text_of(r) == f"blocked: swap was not approved: {reason}"
            assert (r.meta or {})["callgate/error"]["signature"] == "mode:ask"
            assert (target.read_bytes(), target.stat().st_mtime_ns) == before
    run(scenario)
    assert len(user.messages) == 1
    assert sorted(p.name for p in ws.iterdir()) == ["a.txt"]  # no stray temp file


@pytest.mark.parametrize("mode", ERAS)
def test_without_elicitation_the_configured_fallback_decides(ws: Path, mode: str) -> None:
    async def scenario() -> None:
        async with served(ws, config=ASK, mode=mode) as (_, client, _kit):
            await client.call_tool("peek", {"path": "a.txt"})
            r = await client.call_tool("swap", {"path": "a.txt", "old": "hello", "new": "bye"})
            assert r.is_error and error_kind(r) == "blocked"
            assert "no approver is available" in text_of(r)
        allow = {"permissions": {"mode": "ask", "ask_without_approver": "allow"}}
        async with served(ws, config=allow, mode=mode) as (_, client, _kit):
            await client.call_tool("peek", {"path": "a.txt"})
            r = await client.call_tool("swap", {"path": "a.txt", "old": "hello", "new": "bye"})
            assert not r.is_error, text_of(r)
    run(scenario)
    assert (ws / "a.txt").read_text() == "bye world\n"


def test_a_client_that_fails_to_answer_falls_back(ws: Path) -> None:
    user = Elicitor(fail=True)

    async def scenario() -> None:
        async with served(ws, config=ASK, elicit=user) as (_, client, _kit):
            await client.call_tool("peek", {"path": "a.txt"})
            r = await client.call_tool("swap", {"path": "a.txt", "old": "hello", "new": "bye"})
            assert r.is_error and "no approver is available" in text_of(r)
    run(scenario)
    assert len(user.messages) == 1 and (ws / "a.txt").read_text() == "hello world\n"


def test_2026_approval_round_trip_by_hand_and_its_expiry(ws: Path) -> None:
    """The InputRequiredResult leg: a retry carries the answer; an unanswered ask expires."""
    user = Elicitor("accept")

    async def scenario() -> None:
        async with served(ws, config=ASK, mode="auto", elicit=user,
                          approval_timeout=0.3) as (_app, client, _kit):
            await client.call_tool("peek", {"path": "a.txt"})
            args = {"path": "a.txt", "old": "hello", "new": "bye"}
            first = await client.session.call_tool("swap", args, allow_input_required=True)
            assert isinstance(first, types.InputRequiredResult)
            [(key, request)] = (first.input_requests or {}).items()
            assert key == APPROVAL_KEY and isinstance(request, types.ElicitRequest)
            assert request.params.message.startswith("callgate asks for approval: run swap?")
            answer = {APPROVAL_KEY: types.ElicitResult(action="accept", content={"allow": True})}

            forged = await client.session.call_tool("swap", args, input_responses=answer,
                                                    request_state="forged-token")
            assert forged.is_error and "expired or is unknown" in text_of(forged)
            assert (ws / "a.txt").read_text() == "hello world\n"

            done = await client.session.call_tool("swap", args, input_responses=answer,
                                                  request_state=first.request_state)
            assert not done.is_error, text_of(done)
            assert (ws / "a.txt").read_text() == "bye world\n"

            # Nobody answers this one: after the timeout the host's fallback refuses it and
            # the session is free again; the late answer finds nothing to resume.
            args = {"path": "a.txt", "old": "bye", "new": "ciao"}
            ask = await client.session.call_tool("swap", args, allow_input_required=True)
            assert isinstance(ask, types.InputRequiredResult)
            await anyio.sleep(0.6)
            r = await client.call_tool("peek", {"path": "a.txt"})
            assert text_of(r) == "bye world\n"
            late = await client.session.call_tool("swap", args, input_responses=answer,
                                                  request_state=ask.request_state)
            assert late.is_error and "expired or is unknown" in text_of(late)
            assert (ws / "a.txt").read_text() == "bye world\n"
    run(scenario)


# --- concurrency, cancellation, shutdown ---------------------------------------------------------


@pytest.mark.parametrize("mode", ERAS)
def test_concurrent_calls_run_one_batch_at_a_time(ws: Path, mode: str) -> None:
    results: list[types.CallToolResult] = []

    async def scenario() -> Toolkit:
        async with served(ws, mode=mode) as (_, client, kit):
            async def one() -> None:
                results.append(await client.call_tool("snooze", {"seconds": 0.2}))
            async with anyio.create_task_group() as tg:
                for _ in range(3):
                    tg.start_soon(one)
            return kit

    kit = run(scenario)
    assert [r.is_error for r in results] == [False, False, False]
    spans = sorted(kit.spans, key=lambda s: s[1])
    assert len(spans) == 3
    for (_, _, end), (_, start, _) in itertools.pairwise(spans):
        assert start >= end  # no two batches overlap


@pytest.mark.parametrize("mode", ERAS)
def test_a_cancelled_request_cancels_its_running_call(ws: Path, mode: str) -> None:
    async def scenario() -> Toolkit:
        async with served(ws, mode=mode) as (_, client, kit):
            started = time.monotonic()
            with anyio.move_on_after(0.5):
                await client.call_tool("snooze", {"seconds": 30})
            with anyio.fail_after(10):
                while not kit.cancelled_seen.is_set():
                    await anyio.sleep(0.02)
            assert time.monotonic() - started < 10
            r = await client.call_tool("peek", {"path": "a.txt"})  # the session serves on
            assert text_of(r) == "hello world\n"
            return kit
    run(scenario)


@pytest.mark.parametrize("mode", ERAS)
def test_a_call_cancelled_while_it_waits_for_its_turn_never_runs(ws: Path, mode: str) -> None:
    async def scenario() -> None:
        async with served(ws, mode=mode) as (_, client, _kit):
            await client.call_tool("peek", {"path": "a.txt"})

            async def cancelled_swap() -> None:
                await anyio.sleep(0.1)  # the snooze holds the session by now
                with anyio.move_on_after(0.1):
                    await client.call_tool("swap", {"path": "a.txt", "old": "hello",
                                                    "new": "bye"})
            async with anyio.create_task_group() as tg:
                tg.start_soon(client.call_tool, "snooze", {"seconds": 0.6})
                tg.start_soon(cancelled_swap)
            await anyio.sleep(0.3)
            r = await client.call_tool("peek", {"path": "a.txt"})
            assert text_of(r) == "hello world\n"
    run(scenario)
    assert (ws / "a.txt").read_text() == "hello world\n"


@pytest.mark.parametrize("mode", ERAS)
def test_the_connection_ending_closes_the_session_and_its_processes(ws: Path, mode: str) -> None:
    async def scenario() -> tuple[CallgateMCP, Toolkit]:
        async with served(ws, mode=mode) as (app, client, kit):
            r = await client.call_tool("spawn", {})
            assert not r.is_error
            assert app.session is not None and not app.session.closed
            assert alive(kit.pids[0])
            return app, kit

    app, kit = run(scenario)
    assert app.session is not None and app.session.closed
    assert [e[0] for e in kit.events] == ["start", "end"]
    deadline = time.monotonic() + 10
    while alive(kit.pids[0]) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(kit.pids[0])
