"""The 2026-07-28 protocol over ``serve --http`` (issue 34, item 4), through the SDK's client.

A 2026-07-28 request carries no session: it is served on the callgate session of its
client, the principal that sent it (the bearer token; without tokens the server's user)
and its ``clientInfo.name``. So one client's read counts for its later edit, another
client (another token, or another name) keeps its own observations, a session belongs to
the principal that opened it, and it continues after a restart.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import mcp_types as types
from callgate.store import open_store
from callgate_mcp_serve._auth import principal_of
from callgate_mcp_serve._http import stored_name

from .http_support import Served, connect_modern, post
from .test_http import OTHER, TOKEN, needs_tools
from .test_server import run, text_of


def _ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("hello world\n")
    return ws


def _edit(old: str, new: str) -> dict[str, Any]:
    return {"path": "notes.txt", "old_string": old, "new_string": new}


def stateless_key(principal: str, client_name: str) -> str:
    """The documented id of a 2026-07-28 client's session (docs/mcp.md)."""
    return hashlib.sha256(f"{principal}\0{client_name}".encode()).hexdigest()[:32]


def _tokens(tmp_path: Path) -> Path:
    tokens = tmp_path / "tokens"
    tokens.write_text(f"{TOKEN}\n{OTHER}\n")
    return tokens


@needs_tools
def test_a_2026_client_reads_then_edits_on_its_own_session(tmp_path: Path) -> None:
    ws = _ws(tmp_path)

    async def scenario() -> None:
        with Served(["--http", "127.0.0.1:0", "--workspace", str(ws)]) as served:
            async with connect_modern(served.url) as client:
                assert client.protocol_version == "2026-07-28"
                names = {t.name for t in (await client.list_tools()).tools}
                assert "read_file" in names
                r = await client.call_tool("edit_file", _edit("hello", "nope"))
                assert r.is_error and "read" in text_of(r)  # nothing read yet
                r = await client.call_tool("read_file", {"path": "notes.txt"})
                assert not r.is_error, text_of(r)
                r = await client.call_tool("edit_file", _edit("hello", "edited"))
                assert not r.is_error, text_of(r)
        assert (ws / "notes.txt").read_text() == "edited world\n"

    run(scenario)


@needs_tools
def test_each_principal_and_client_name_keeps_its_own_observations(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    args = ["--http", "127.0.0.1:0", "--workspace", str(ws), "--token-file",
            str(_tokens(tmp_path))]

    async def scenario() -> None:
        with Served(args) as served:
            async with connect_modern(served.url, token=TOKEN, name="alpha") as a:
                r = await a.call_tool("read_file", {"path": "notes.txt"})
                assert not r.is_error, text_of(r)
            # another token, same client name: its own session, nothing read there
            async with connect_modern(served.url, token=OTHER, name="alpha") as b:
                r = await b.call_tool("edit_file", _edit("hello", "stolen"))
                assert r.is_error, text_of(r)
            # the same token, another client name: its own session too
            async with connect_modern(served.url, token=TOKEN, name="beta") as c:
                r = await c.call_tool("edit_file", _edit("hello", "beta"))
                assert r.is_error, text_of(r)
            # the first client again (a new connection): its read still counts
            async with connect_modern(served.url, token=TOKEN, name="alpha") as a2:
                r = await a2.call_tool("edit_file", _edit("hello", "alpha"))
                assert not r.is_error, text_of(r)
        assert (ws / "notes.txt").read_text() == "alpha world\n"
        store = open_store()
        mine = store.session(stored_name(stateless_key(principal_of(TOKEN), "alpha")),
                             prefix=False)
        theirs = store.session(stored_name(stateless_key(principal_of(OTHER), "alpha")),
                               prefix=False)
        assert mine is not None and mine.principal == principal_of(TOKEN)
        assert theirs is not None and theirs.principal == principal_of(OTHER)
        assert mine.id != theirs.id

    run(scenario)


@needs_tools
def test_a_2026_client_continues_its_session_after_a_restart(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    args = ["--http", "127.0.0.1:0", "--workspace", str(ws)]

    async def scenario() -> None:
        with Served(args) as served:
            async with connect_modern(served.url) as client:
                r = await client.call_tool("read_file", {"path": "notes.txt"})
                assert not r.is_error, text_of(r)
        with Served(args) as again:
            async with connect_modern(again.url) as client:
                r = await client.call_tool("edit_file", _edit("hello", "later"))
                assert not r.is_error, text_of(r)
        assert (ws / "notes.txt").read_text() == "later world\n"

    run(scenario)


def test_an_approval_reaches_a_2026_client_as_input_required(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    config = tmp_path / "callgate.toml"
    config.write_text('[permissions]\nmode = "ask"\n')
    asked: list[str] = []

    async def elicit(ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"allow": True})

    async def scenario() -> None:
        with Served(["--http", "127.0.0.1:0", "--workspace", str(ws), "--config",
                     str(config)]) as served:
            async with connect_modern(served.url, elicit=elicit) as client:
                r = await client.call_tool("write_file", {"path": "new.txt",
                                                          "content": "approved\n"})
                assert not r.is_error, text_of(r)
        assert asked and "write_file" in asked[0]
        assert (ws / "new.txt").read_text() == "approved\n"

    run(scenario)


def test_requests_that_need_no_session_open_none(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    with Served(["--http", "127.0.0.1:0", "--workspace", str(ws)]) as served:
        meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}}
        headers = {"mcp-protocol-version": "2026-07-28", "mcp-method": "server/discover"}
        r = post(served.url, {"jsonrpc": "2.0", "id": 1, "method": "server/discover",
                              "params": {"_meta": meta}}, headers)
        assert r.status_code == 200, r.text
        assert "2026-07-28" in r.json()["result"]["supportedVersions"]
        # no envelope: refused by the SDK's entry (400), nothing opened
        r = post(served.url, {"jsonrpc": "2.0", "id": 3, "method": "tools/list"},
                 {"mcp-protocol-version": "2026-07-28"})
        assert r.status_code == 400, r.text
    assert open_store().sessions() == []
