"""``callgate serve --http`` through the SDK's own streamable-HTTP client: one callgate
session per MCP session, bearer auth off loopback, DELETE, Origin checks, resume after a
restart. Everything binds and connects on loopback only.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import anyio
import pytest
from callgate import Host
from callgate.store import open_store
from callgate_mcp_serve._http import stored_name, workspace_name

from .http_support import INITIALIZE, Served, connect, post, run_cli
from .test_server import run, text_of

NEEDED = {"read_file", "edit_file", "bash", "job_output"}


def _missing_tools() -> set[str]:
    try:
        host = Host.boot({}, os="posix", surface="full")
    except Exception as exc:  # a half-built plugin elsewhere must not break collection
        return {f"(boot failed: {exc})"}
    return NEEDED - set(host.registry.names())


MISSING = _missing_tools() if sys.platform != "win32" else {"bash (POSIX only)"}
needs_tools = pytest.mark.skipif(bool(MISSING), reason=f"missing tools: {sorted(MISSING)}")
TOKEN = "t0k3n-for-the-http-tests-0123456789"
OTHER = "another-token-for-the-http-tests-987"


def _ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("hello world\n")
    return ws


@needs_tools
def test_two_clients_have_separate_observations_and_jobs(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    target = ws / "notes.txt"

    async def scenario() -> None:
        with Served(["--http", "127.0.0.1:0", "--workspace", str(ws)]) as served:
            async with connect(served.url) as a, connect(served.url) as b:
                assert a.session_id != b.session_id
                r = await a.client.call_tool("read_file", {"path": "notes.txt"})
                assert not r.is_error, text_of(r)
                r = await a.client.call_tool(
                    "bash", {"command": "sleep 30", "run_in_background": True}
                )
                assert not r.is_error, text_of(r)
                job = re.search(r"background job (bash-\d+)", text_of(r))
                assert job, text_of(r)

                before = target.read_bytes(), target.stat().st_mtime_ns
                r = await b.client.call_tool(
                    "edit_file", {"path": "notes.txt", "old_string": "hello", "new_string": "bye"}
                )
                assert r.is_error, text_of(r)  # B never read it
                assert (r.meta or {})["callgate/error"]["kind"] == "not_observed"
                assert (target.read_bytes(), target.stat().st_mtime_ns) == before

                r = await b.client.call_tool("job_output", {"job_id": job.group(1)})
                assert r.is_error, text_of(r)  # A's job is not B's
                r = await b.client.call_tool("job_output", {})
                assert job.group(1) not in text_of(r)

                r = await a.client.call_tool(
                    "edit_file", {"path": "notes.txt", "old_string": "hello", "new_string": "bye"}
                )
                assert not r.is_error, text_of(r)
                assert target.read_text() == "bye world\n"
                r = await a.client.call_tool("job_output", {})
                assert job.group(1) in text_of(r)

    run(scenario)


@needs_tools
def test_each_session_gets_its_own_workspace_under_the_root(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()

    async def scenario() -> None:
        with Served(["--http", "127.0.0.1:0", "--workspace-root", str(root)]) as served:
            async with connect(served.url) as a, connect(served.url) as b:
                r = await a.client.call_tool("bash", {"command": "echo a > mine.txt; pwd"})
                assert not r.is_error, text_of(r)
                # a digest of the id names the directory: the root's listing shows no id
                mine, theirs = workspace_name(a.session_id), workspace_name(b.session_id)
                assert str(root / mine) in text_of(r) and a.session_id not in text_of(r)
                r = await b.client.call_tool("read_file", {"path": "mine.txt"})
                assert r.is_error, text_of(r)
                assert (root / mine / "mine.txt").read_text() == "a\n"
                assert not (root / theirs / "mine.txt").exists()

    run(scenario)


def test_a_non_loopback_bind_needs_tokens_and_refuses_requests_without_one(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    refused = run_cli(["--http", "0.0.0.0:0", "--workspace", str(ws)])
    assert refused.returncode == 2
    assert "bearer tokens" in refused.stderr
    short = tmp_path / "short"
    short.write_text("abc\n")
    refused = run_cli(["--http", "0.0.0.0:0", "--workspace", str(ws), "--token-file", str(short)])
    assert refused.returncode == 2 and "at least 16" in refused.stderr
    assert "abc" not in refused.stderr  # a token is never printed

    tokens = tmp_path / "tokens"
    tokens.write_text(f"# who may call\n{TOKEN}\n")

    async def scenario() -> None:
        with Served(
            ["--http", "0.0.0.0:0", "--workspace", str(ws), "--token-file", str(tokens)],
            env={"CALLGATE_SERVE_TOKENS": OTHER},
        ) as served:
            port = served.url.rsplit(":", 1)[1].split("/")[0]
            url = f"http://127.0.0.1:{port}/mcp"  # bound on all, reached on loopback only
            assert post(url, INITIALIZE).status_code == 401
            r = post(url, INITIALIZE, {"authorization": "Bearer not-a-valid-token-at-all"})
            assert r.status_code == 401
            assert "www-authenticate" in r.headers
            async with connect(url, token=TOKEN) as a:
                listed = await a.client.list_tools()
                assert listed.tools
                sid = a.session_id
                # the other (valid) token cannot use A's session: it does not exist for it
                r = post(
                    url,
                    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
                    {
                        "authorization": f"Bearer {OTHER}",
                        "mcp-session-id": sid,
                        "mcp-protocol-version": "2025-06-18",
                    },
                )
                assert r.status_code == 404
                # nor can a request without a token
                r = post(
                    url,
                    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
                    {"mcp-session-id": sid, "mcp-protocol-version": "2025-06-18"},
                )
                assert r.status_code == 401
            async with connect(url, token=OTHER) as b:
                assert (await b.client.list_tools()).tools

    run(scenario)


def test_foreign_origins_and_hosts_are_refused(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    with Served(["--http", "127.0.0.1:0", "--workspace", str(ws)]) as served:
        port = served.url.rsplit(":", 1)[1].split("/")[0]
        assert post(served.url, INITIALIZE, {"origin": "http://evil.example"}).status_code == 403
        assert post(served.url, INITIALIZE, {"host": f"evil.example:{port}"}).status_code == 421
        ok = post(served.url, INITIALIZE, {"origin": f"http://localhost:{port}"})
        assert ok.status_code == 200, ok.text
        r = post(
            served.url,
            {"jsonrpc": "2.0", "id": 3, "method": "tools/list"},
            {"mcp-protocol-version": "2026-07-28"},
        )
        assert r.status_code == 400, r.text  # no 2026-07-28 envelope (_meta): refused


@needs_tools
def test_delete_ends_the_session_for_good(tmp_path: Path) -> None:
    ws = _ws(tmp_path)

    async def scenario() -> str:
        with Served(["--http", "127.0.0.1:0", "--workspace", str(ws)]) as served:
            async with connect(served.url) as a:
                r = await a.client.call_tool("read_file", {"path": "notes.txt"})
                assert not r.is_error, text_of(r)
                sid = a.session_id
            # the client's exit sent DELETE: the id is gone, and no restart brings it back
            r = post(
                served.url,
                {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
                {"mcp-session-id": sid, "mcp-protocol-version": "2025-06-18"},
            )
            assert r.status_code == 404
        with Served(["--http", "127.0.0.1:0", "--workspace", str(ws)]) as again:
            r = post(
                again.url,
                {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
                {"mcp-session-id": sid, "mcp-protocol-version": "2025-06-18"},
            )
            assert r.status_code == 404
        return sid

    sid = run(scenario)
    info = open_store().session(stored_name(sid), prefix=False)
    assert info is not None and info.status == "closed" and info.calls == 1


@needs_tools
def test_a_session_resumes_after_a_restart(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    target = ws / "notes.txt"

    async def scenario() -> None:
        with Served(["--http", "127.0.0.1:0", "--workspace", str(ws)]) as served:
            async with connect(served.url, terminate_on_close=False) as a:
                r = await a.client.call_tool("read_file", {"path": "notes.txt"})
                assert not r.is_error, text_of(r)
                sid = a.session_id
        # a new process on the same store: the client presents its id, and the session's
        # observations are back (the edit of a file read before the restart runs)
        with Served(["--http", "127.0.0.1:0", "--workspace", str(ws)]) as again:
            async with connect(again.url, session_id=sid) as b:
                assert b.session_id == sid
                r = await b.client.call_tool(
                    "edit_file",
                    {"path": "notes.txt", "old_string": "hello", "new_string": "resumed"},
                )
                assert not r.is_error, text_of(r)
        assert target.read_text() == "resumed world\n"
        # an id the store never held is not invented
        with Served(["--http", "127.0.0.1:0", "--workspace", str(ws)]) as third:
            r = post(third.url, INITIALIZE, {"mcp-session-id": "0" * 32})
            assert r.status_code == 404

    run(scenario)


@needs_tools
def test_a_request_of_a_stored_session_is_served_without_a_new_initialize(tmp_path: Path) -> None:
    """A client that does not know the server restarted keeps using its session id."""
    ws = _ws(tmp_path)

    async def scenario() -> None:
        with Served(["--http", "127.0.0.1:0", "--workspace", str(ws)]) as served:
            async with connect(served.url, terminate_on_close=False) as a:
                r = await a.client.call_tool("read_file", {"path": "notes.txt"})
                assert not r.is_error, text_of(r)
                sid = a.session_id
        with Served(["--http", "127.0.0.1:0", "--workspace", str(ws)]) as again:
            r = post(
                again.url,
                {
                    "jsonrpc": "2.0",
                    "id": 7,
                    "method": "tools/call",
                    "params": {
                        "name": "edit_file",
                        "arguments": {
                            "path": "notes.txt",
                            "old_string": "hello",
                            "new_string": "again",
                        },
                    },
                },
                {"mcp-session-id": sid, "mcp-protocol-version": "2025-06-18"},
            )
            assert r.status_code == 200, r.text
            assert '"isError":false' in r.text.replace(" ", ""), r.text
        assert (ws / "notes.txt").read_text() == "again world\n"

    run(scenario)


async def alternate(url_a: str, url_b: str, ws: Path) -> str:
    """One MCP session whose calls alternate between two servers on one store."""
    target = ws / "notes.txt"
    async with connect(url_a, terminate_on_close=False) as a:
        r = await a.client.call_tool("read_file", {"path": "notes.txt"})
        assert not r.is_error, text_of(r)
        sid = a.session_id
        async with connect(url_b, session_id=sid, terminate_on_close=False) as b:
            assert b.session_id == sid
            steps = [(b, "hello", "one"), (a, "one", "two"), (b, "two", "three")]
            for side, old, new in steps:
                r = await side.client.call_tool(
                    "edit_file", {"path": "notes.txt", "old_string": old, "new_string": new}
                )
                assert not r.is_error, text_of(r)
                assert target.read_text() == f"{new} world\n"
            r = await a.client.call_tool("job_output", {})
            assert not r.is_error, text_of(r)
    return sid


@needs_tools
def test_one_session_alternates_between_two_processes_on_one_store(tmp_path: Path) -> None:
    ws = _ws(tmp_path)

    async def scenario() -> None:
        args = ["--http", "127.0.0.1:0", "--workspace", str(ws)]
        with Served(args) as one, Served(args) as two:
            sid = await alternate(one.url, two.url, ws)
        info = open_store().session(stored_name(sid), prefix=False)
        assert info is not None and info.calls == 5

    run(scenario)


@needs_tools
def test_an_idle_session_is_closed_and_reopened_by_its_next_request(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    args = ["--http", "127.0.0.1:0", "--workspace", str(ws), "--idle-timeout", "1"]

    async def scenario() -> None:
        with Served(args) as served:
            r = post(served.url, INITIALIZE)
            assert r.status_code == 200, r.text
            sid = r.headers["mcp-session-id"]
            headers = {"mcp-session-id": sid, "mcp-protocol-version": "2025-06-18"}
            r = post(
                served.url,
                {
                    "jsonrpc": "2.0",
                    "id": 2,
                    "method": "tools/call",
                    "params": {"name": "read_file", "arguments": {"path": "notes.txt"}},
                },
                headers,
            )
            assert r.status_code == 200, r.text
            name = stored_name(sid)
            for _ in range(100):  # idle for a second: closed, its record committed
                info = open_store().session(name, prefix=False)
                if info is not None and info.status == "closed":
                    break
                await anyio.sleep(0.1)
            assert info is not None and info.status == "closed"
            r = post(
                served.url,
                {
                    "jsonrpc": "2.0",
                    "id": 3,
                    "method": "tools/call",
                    "params": {
                        "name": "edit_file",
                        "arguments": {
                            "path": "notes.txt",
                            "old_string": "hello",
                            "new_string": "later",
                        },
                    },
                },
                headers,
            )
            assert r.status_code == 200, r.text
            assert (ws / "notes.txt").read_text() == "later world\n"  # the read came back

    run(scenario)


def test_after_a_restart_only_the_token_that_opened_a_session_resumes_it(
    tmp_path: Path,
) -> None:
    ws = _ws(tmp_path)
    tokens = tmp_path / "tokens"
    tokens.write_text(f"{TOKEN}\n{OTHER}\n")
    args = ["--http", "127.0.0.1:0", "--workspace", str(ws), "--token-file", str(tokens)]

    async def scenario() -> None:
        with Served(args) as served:
            async with connect(served.url, token=TOKEN, terminate_on_close=False) as a:
                assert (await a.client.list_tools()).tools
                sid = a.session_id
        with Served(args) as again:
            call = {"jsonrpc": "2.0", "id": 5, "method": "tools/list"}
            headers = {"mcp-session-id": sid, "mcp-protocol-version": "2025-06-18"}
            r = post(again.url, call, {**headers, "authorization": f"Bearer {OTHER}"})
            assert r.status_code == 404  # not reopened for another token
            r = post(again.url, call, {**headers, "authorization": f"Bearer {TOKEN}"})
            assert r.status_code == 200, r.text
            assert "read_file" in r.text or '"tools"' in r.text

    run(scenario)
