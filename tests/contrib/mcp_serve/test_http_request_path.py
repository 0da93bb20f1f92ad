"""What ``serve --http`` does per request, counted (issue 38): it reads a session's holder
from the store only after a takeover on that store, never on every request (the
per-request read was a thread hop and a query per call), and it serializes each response
once (the event log's text is what the stream sends). The served app runs in this process
(ASGI, no socket) so reads and serializations can be counted; that a takeover by another
process is still noticed at once is
``test_http.py::test_one_session_alternates_between_two_processes_on_one_store``, that a
dropped stream still gets its response is ``test_http_resume.py``."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from callgate import Host
from callgate_mcp_serve._http import STATE_NS, HttpOptions, SessionManager
from callgate_mcp_serve._takeovers import SUFFIX, TakeoverCounter

from .http_support import INITIALIZE
from .test_http import needs_tools

PORT = 8765
URL = f"http://127.0.0.1:{PORT}/mcp"
HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


def test_a_takeover_counter_is_shared_by_every_mapping_of_its_file(tmp_path: Path) -> None:
    one, two = TakeoverCounter(str(tmp_path / "c")), TakeoverCounter(str(tmp_path / "c"))
    try:
        assert one.read() == two.read() == 0
        one.bump()
        two.bump()
        assert one.read() == two.read() == 2
        assert (tmp_path / "c").stat().st_mode & 0o777 == 0o600
    finally:
        one.close()
        two.close()


def test_a_takeover_counter_is_no_link_planted_in_its_place(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.write_text("keep")
    os.symlink(target, tmp_path / "c")
    with pytest.raises(OSError):
        TakeoverCounter(str(tmp_path / "c"))
    assert target.read_text() == "keep"


@pytest.mark.parametrize("how", ["world-writable", "group-writable", "foreign-owner"])
def test_a_takeover_counter_someone_else_could_write_is_not_used(
        tmp_path: Path, how: str) -> None:
    """A counter file planted beside a store in a shared folder (writable by others, or
    theirs) could hold the count still, so a takeover would go unnoticed: it is refused,
    and the server reads each request's holder from the store instead."""
    planted = tmp_path / "c"
    planted.write_bytes(bytes(8))
    planted.chmod({"world-writable": 0o666, "group-writable": 0o620}.get(how, 0o600))
    if how == "foreign-owner":
        if os.geteuid() != 0:
            pytest.skip("changing a file's owner needs root")
        os.chown(planted, 65534, 65534)
    with pytest.raises(ValueError):
        TakeoverCounter(str(planted))


def test_a_closed_takeover_counter_reads_as_unknown(tmp_path: Path) -> None:
    """A request still in flight when the server stops reads no count (it then reads the
    holder from the store) rather than failing on the unmapped page."""
    counter = TakeoverCounter(str(tmp_path / "c"))
    counter.bump()
    counter.close()
    assert counter.read() is None
    counter.bump()  # nothing to count on any more: no error


class _CountedReads:
    """Counts the holder reads `SessionManager` makes of the session store."""

    def __init__(self, store: Any, monkeypatch: pytest.MonkeyPatch) -> None:
        self.reads = 0
        cls = type(store)
        for name in ("state_value", "state"):
            real = getattr(cls, name)

            def counted(self_: Any, *args: Any, _real: Any = real) -> Any:
                if len(args) < 2 or args[1] == STATE_NS:
                    self.reads += 1
                return _real(self_, *args)

            monkeypatch.setattr(cls, name, counted)


async def _call(http: httpx2.AsyncClient, sid: str, n: int) -> str:
    body = {"jsonrpc": "2.0", "id": n, "method": "tools/call",
            "params": {"name": "read_file", "arguments": {"path": "notes.txt"}}}
    r = await http.post(URL, json=body, headers={**HEADERS, "mcp-session-id": sid,
                                                 "mcp-protocol-version": "2025-06-18"})
    assert r.status_code == 200, r.text
    return r.text


@needs_tools
def test_requests_of_a_live_session_read_no_holder_from_the_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("hello world\n")
    host = Host.boot({}, os="posix", surface="full", workspace=str(ws))
    manager = SessionManager(host, HttpOptions(workspace=str(ws), idle_timeout=None),
                             port=PORT)
    counted = _CountedReads(host.store, monkeypatch)

    async def scenario() -> None:
        async with manager.run(), httpx2.AsyncClient(
            transport=httpx2.ASGITransport(app=manager), timeout=30.0
        ) as http:
            r = await http.post(URL, json=INITIALIZE, headers=HEADERS)
            assert r.status_code == 200, r.text
            sid = r.headers["mcp-session-id"]
            headers = {**HEADERS, "mcp-session-id": sid, "mcp-protocol-version": "2025-06-18"}
            r = await http.post(URL, json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                                headers=headers)
            assert r.status_code == 202, r.text
            await _call(http, sid, 2)  # the session is remembered (its holder written) by now
            before = counted.reads
            for n in range(3, 23):
                assert "hello world" in await _call(http, sid, n)
            assert counted.reads == before  # twenty calls, no holder read

            # another process takes a session of this store over: the count moves, the
            # next request reads the holder once (still ours here), then none again
            other = TakeoverCounter(host.store.location + SUFFIX)
            try:
                other.bump()
            finally:
                other.close()
            await _call(http, sid, 23)
            assert counted.reads == before + 1
            await _call(http, sid, 24)
            assert counted.reads == before + 1

            # ... and when the holder is another process now, the session is reloaded
            live = manager._live[sid]
            session = live.app.session
            assert session is not None
            await anyio.to_thread.run_sync(session.storage.put, STATE_NS, "holder", "another")
            other = TakeoverCounter(host.store.location + SUFFIX)
            try:
                other.bump()
            finally:
                other.close()
            await _call(http, sid, 25)
            assert manager._live[sid] is not live  # reopened from the store

    anyio.run(scenario)


@needs_tools
def test_a_response_is_serialized_once_and_sent_as_the_event_log_kept_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("hello world\n")
    host = Host.boot({}, os="posix", surface="full", workspace=str(ws))
    manager = SessionManager(host, HttpOptions(workspace=str(ws), idle_timeout=None),
                             port=PORT)
    dumped: list[str] = []
    real = types.JSONRPCResponse.model_dump_json

    def counted(self: Any, *args: Any, **kwargs: Any) -> str:
        text = real(self, *args, **kwargs)
        dumped.append(text)
        return text

    async def scenario() -> None:
        async with manager.run(), httpx2.AsyncClient(
            transport=httpx2.ASGITransport(app=manager), timeout=30.0
        ) as http:
            r = await http.post(URL, json=INITIALIZE, headers=HEADERS)
            sid = r.headers["mcp-session-id"]
            await _call(http, sid, 2)
            monkeypatch.setattr(types.JSONRPCResponse, "model_dump_json", counted)
            text = await _call(http, sid, 3)
            monkeypatch.undo()
            assert len(dumped) == 1  # once: for the event log, and the stream sends it
            events = [line for line in text.splitlines() if line.startswith(("id:", "data:"))]
            event_id, data = events[0][3:].strip(), events[1][5:].strip()
            assert data == dumped[0] == manager.events.json_of(sid, event_id)
            assert '"id":3' in data and "hello world" in data

    anyio.run(scenario)
