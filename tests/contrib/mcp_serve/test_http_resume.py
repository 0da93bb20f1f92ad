"""Resumable streams over ``serve --http`` (issue 34, item 3), through the SDK's own client.

Every request's SSE stream opens with a priming event (an id and ``retry``); what the server
sends is kept, bounded, per session (`_events`). A client whose POST stream drops mid-call
reconnects with ``Last-Event-ID`` and receives the response of the call that finished
meanwhile; an id the session does not keep is answered 409, never 500.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import httpx2
from callgate.store import open_store
from callgate_mcp_serve._events import EventLog
from callgate_mcp_serve._http import stored_name

from .http_support import INITIALIZE, CuttingProxy, Served, connect, post
from .test_http import needs_tools
from .test_server import run, text_of

NEW = "2025-11-25"


def _ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("hello world\n")
    return ws


@needs_tools
def test_a_client_whose_stream_drops_mid_call_receives_the_result(tmp_path: Path) -> None:
    ws = _ws(tmp_path)

    async def scenario() -> None:
        async with anyio.create_task_group() as tasks:
            proxy = await CuttingProxy(0).start(tasks)
            args = ["--http", "127.0.0.1:0", "--workspace", str(ws),
                    "--allow-host", f"127.0.0.1:{proxy.port}"]  # the name the client uses
            with Served(args) as served:
                proxy.target_port = int(served.url.rsplit(":", 1)[1].split("/")[0])
                async with connect(f"http://127.0.0.1:{proxy.port}/mcp") as a:
                    r = await a.client.call_tool(
                        "bash", {"command": "sleep 1.5; echo finished-meanwhile"})
                    assert proxy.cuts == 1, "the POST stream was never dropped"
                    assert not r.is_error, text_of(r)
                    assert "finished-meanwhile" in text_of(r)
                    sid = a.session_id
                info = open_store().session(stored_name(sid), prefix=False)
                assert info is not None and info.calls == 1  # run once, not again
            tasks.cancel_scope.cancel()

    run(scenario)


def test_an_unknown_last_event_id_is_a_4xx_and_opens_nothing(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    with Served(["--http", "127.0.0.1:0", "--workspace", str(ws)]) as served:
        r = post(served.url, {**INITIALIZE, "params": {**INITIALIZE["params"],
                                                       "protocolVersion": NEW}})
        assert r.status_code == 200, r.text
        sid = r.headers["mcp-session-id"]
        headers = {"accept": "text/event-stream", "mcp-session-id": sid,
                   "mcp-protocol-version": NEW}
        for stale in ("0000-1", "nonsense", f"{'f' * 8}-999999"):
            got = httpx2.get(served.url, headers={**headers, "last-event-id": stale},
                             timeout=10)
            assert got.status_code == 409, (stale, got.status_code, got.text)
            assert "Last-Event-ID" in got.json()["error"]["message"]
        assert "Traceback" not in "".join(served.log)


def test_priming_events_carry_an_id_and_retry(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    with Served(["--http", "127.0.0.1:0", "--workspace", str(ws)]) as served:
        r = post(served.url, {**INITIALIZE, "params": {**INITIALIZE["params"],
                                                       "protocolVersion": NEW}})
        sid = r.headers["mcp-session-id"]
        headers = {"mcp-session-id": sid, "mcp-protocol-version": NEW}
        post(served.url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, headers)
        r = post(served.url, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, headers)
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
        first = r.text.replace("\r\n", "\n").split("\n\n")[0].splitlines()
        assert first[0].startswith("id: ") and "data: " in first and "retry: 1000" in first


def _message(n: int, chars: int = 10) -> Any:
    import mcp_types as types

    return types.JSONRPCResponse(jsonrpc="2.0", id=n, result={"text": "x" * chars})


def test_the_event_log_is_bounded_and_keeps_sessions_apart() -> None:
    now = [0.0]
    log = EventLog(session_max_events=4, session_max_bytes=2_000, total_max_bytes=3_000,
                   max_age_s=60, clock=lambda: now[0])
    a = [log.add("a", "s1", _message(i)) for i in range(6)]
    assert not log.knows("a", a[0]) and not log.knows("a", a[1])  # over 4 events
    assert log.knows("a", a[5]) and not log.knows("b", a[5])  # another session's id
    assert log.after("b", a[3]) is None
    stream, later = log.after("a", a[3])  # type: ignore[misc]
    assert stream == "s1" and [i for i, _ in later] == a[4:]
    log.add("a", "s1", _message(7, 1_500))  # over the session's bytes: its oldest go
    assert log.total_bytes <= 2_000 and len(log) <= 4
    log.add("b", "s2", _message(8, 1_900))  # over the total: the globally oldest go
    assert log.total_bytes <= 3_000
    now[0] = 100.0  # over the age: everything older goes with the next event
    fresh = log.add("b", "s2", None)
    assert len(log) == 1 and log.knows("b", fresh)
    log.drop("b")
    assert len(log) == 0 and log.total_bytes == 0
