"""``callgate serve --session NAME``: an MCP client that reconnects for every call (as the
MCP inspector's CLI does) still edits what it read, because every connection naming the
session joins it (issue 18). Each connection is a real ``callgate serve`` subprocess
driven by the ``mcp`` SDK's stdio client; the store is the test's private one."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from callgate.store import open_store
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from .test_server import run, text_of
from .toolkit import child_env

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="bash is POSIX only")


def one_call(ws: Path, name: str, arguments: dict[str, Any], *session: str) -> Any:
    """Connect, make one call, disconnect: a fresh ``callgate serve`` process each time."""
    async def scenario() -> Any:
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "callgate_cli", "serve", "--workspace", str(ws), "--surface", "full",
                  *session],
            env=child_env(CALLGATE_LOAD_PLUGINS="files,shell,capability"))
        async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            return await client.call_tool(name, arguments)

    return run(scenario)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    w = tmp_path / "ws"
    w.mkdir()
    (w / "notes.txt").write_text("hello world\nsecond line\n")
    return w


def test_a_client_that_reconnects_per_call_reads_then_edits(ws: Path) -> None:
    target = ws / "notes.txt"
    joined = ("--session", "review")
    read = one_call(ws, "read_file", {"path": "notes.txt"}, *joined)
    assert not read.is_error and "1→hello world" in text_of(read)
    edit = one_call(ws, "edit_file", {"path": "notes.txt", "old_string": "hello",
                                      "new_string": "goodbye"}, *joined)
    assert not edit.is_error, text_of(edit)
    assert target.read_text() == "goodbye world\nsecond line\n"

    # the session's own edit is observed; an outside change after it is refused as stale
    target.write_text("changed elsewhere\nsecond line\n")
    before = (target.read_bytes(), target.stat().st_mtime_ns)
    stale = one_call(ws, "edit_file", {"path": "notes.txt", "old_string": "second",
                                       "new_string": "2nd"}, *joined)
    assert stale.is_error and "stale" in text_of(stale).lower(), text_of(stale)
    assert (target.read_bytes(), target.stat().st_mtime_ns) == before

    store = open_store()
    info = store.session("review", prefix=False)
    assert info is not None and info.calls == 3 and info.status == "closed"
    ids = [c.call_id for c in store.calls(info.id)]
    assert len(set(ids)) == 3  # every connection's call ids are its own
    store.close()


def test_without_session_each_connection_is_a_new_session(ws: Path) -> None:
    read = one_call(ws, "read_file", {"path": "notes.txt"})
    assert not read.is_error
    edit = one_call(ws, "edit_file", {"path": "notes.txt", "old_string": "hello",
                                      "new_string": "goodbye"})
    assert edit.is_error
    assert "read" in text_of(edit).lower()  # not observed in this connection's session
    assert (ws / "notes.txt").read_text() == "hello world\nsecond line\n"


def test_a_long_result_of_one_connection_pages_back_in_the_next(ws: Path) -> None:
    joined = ("--session", "pager")
    big = one_call(ws, "bash", {"command": "python3 -c \"print('x' * 100000, end='')\""},
                   *joined)
    assert not big.is_error
    marker = text_of(big)
    ref = marker.split("result_ref=", 1)[1].split()[0]
    call_id = marker.split("call_id=", 1)[1].split()[0]
    page = one_call(ws, "use_capability", {
        "action": "call", "capability_id": "session:tool_result",
        "arguments": {"tool_call_id": call_id, "result_ref": ref, "offset": 0,
                      "limit": 24576}}, *joined)
    assert not page.is_error, text_of(page)
    head, body = text_of(page).split("\n", 1)
    header = json.loads(head)
    assert body == "x" * 24576 and header["next_offset"] == 24576
    store = open_store()
    info = store.session("pager", prefix=False)
    [first] = [c for c in store.calls(info.id) if c.call_id == call_id]
    whole = first.text.encode()
    assert header["total_bytes"] == len(whole) > 100_000
    assert header["sha256"] == hashlib.sha256(whole).hexdigest() == first.result_sha256
    store.close()
