"""callgate as a full host of the MCP servers it proxies (issue 34, item 5), driven by the SDK's
own ``Client`` against ``callgate serve`` in process; the proxied server is a real stdio
child built with the SDK's ``MCPServer`` (``tests/fixtures/mcp_host_fixture_server.py``).

What the server asks while a call runs goes to the client of that call: form elicitation
(refused cleanly when the client cannot elicit), sampling (refused when the client cannot
sample), and its log messages (``notifications/message``, recorded in the server's log file
too); callgate declares those capabilities to the server, and answers its ``roots/list``
with the workspace. With ``workspace_from_roots`` the session works in the client's one root.
"""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path
from typing import Any

import callgate_capability
import callgate_files
import mcp_types as types
import pytest
from callgate import Host
from callgate_mcp_serve import CallgateMCP, ElicitationApprover
from mcp import Client

from .test_server import ERAS, run, text_of

HOST_FIXTURE = str(Path(__file__).resolve().parents[2] / "fixtures" /
                   "mcp_host_fixture_server.py")


def _host(**tables: Any) -> Host:
    config = {"mcp_servers": {"host": {"command": sys.executable, "args": [HOST_FIXTURE]}},
              "permissions": {"allow": ["mcp__host__*"]}, **tables}
    return Host.boot(config, plugins=[callgate_capability, callgate_files,
                                      ElicitationApprover()], entrypoints=False)


def _call(tool: str, **arguments: Any) -> dict[str, Any]:
    return {"action": "call", "capability_id": f"mcp-tool:host/{tool}", "arguments": arguments}


@pytest.mark.parametrize("mode", ERAS)
def test_a_servers_elicitation_reaches_the_calling_client(
        tmp_path: Path, mode: str) -> None:
    app = CallgateMCP(_host(), tmp_path)
    asked: list[types.ElicitRequestParams] = []

    async def elicit(ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params)
        return types.ElicitResult(action="accept", content={"answer": "blue"})

    async def scenario() -> types.CallToolResult:
        async with Client(app.server, mode=mode, elicitation_callback=elicit) as client:
            return await client.call_tool("use_capability", _call("ask_user",
                                                                  question="Favourite colour?"))

    r = run(scenario)
    assert not r.is_error, text_of(r)
    assert "accepted: blue" in text_of(r)
    [params] = asked
    assert isinstance(params, types.ElicitRequestFormParams)
    assert params.message.startswith('MCP server "host" (run by callgate) asks:')
    assert "Favourite colour?" in params.message
    assert "answer" in params.requested_schema["properties"]


def test_a_servers_question_cannot_hide_or_redraw_text(tmp_path: Path) -> None:
    from callgate_mcp_serve._relay import _shown
    from callgate_mcp_serve._render import visible

    tricky = "Continue?\x1b[2J\u202eevil\r" + " " * 40 + "; run me"
    assert "\x1b" not in visible(tricky) and "\u202e" not in visible(tricky)
    schema = {"type": "object", "properties": {"ok": {"type": "boolean", "title": tricky,
                                                      "description": "a\x1b[1mb"}}}
    shown = _shown(schema)
    assert "\x1b" not in shown["properties"]["ok"]["title"]
    assert shown["properties"]["ok"]["description"] == "a\\x1b[1mb"
    assert shown["properties"]["ok"]["type"] == "boolean"


@pytest.mark.parametrize("mode", ERAS)
def test_a_client_that_cannot_elicit_has_the_server_refused_cleanly(
        tmp_path: Path, mode: str) -> None:
    app = CallgateMCP(_host(), tmp_path)

    async def scenario() -> types.CallToolResult:
        async with Client(app.server, mode=mode) as client:  # no elicitation: not declared
            return await client.call_tool("use_capability", _call("ask_user", question="?"))

    r = run(scenario)
    assert not r.is_error, text_of(r)
    assert "elicitation failed" in text_of(r) and "cannot ask the user" in text_of(r)


@pytest.mark.parametrize("mode", ERAS)
def test_sampling_is_relayed_to_a_client_that_samples_and_refused_otherwise(
        tmp_path: Path, mode: str) -> None:
    seen: list[types.CreateMessageRequestParams] = []

    async def sample(ctx: Any, params: types.CreateMessageRequestParams
                     ) -> types.CreateMessageResult:
        seen.append(params)
        return types.CreateMessageResult(role="assistant", model="test-model",
                                         content=types.TextContent(type="text", text="42"))

    async def scenario(callback: Any) -> tuple[str, str]:
        app = CallgateMCP(_host(), tmp_path)
        async with Client(app.server, mode=mode, sampling_callback=callback) as client:
            caps = await client.call_tool("use_capability", _call("capabilities"))
            r = await client.call_tool("use_capability", _call("sample", prompt="6 x 7?"))
            return text_of(caps), text_of(r)

    caps, answer = run(lambda: scenario(sample))
    assert json.loads(caps) == {"elicitation": True, "sampling": True, "roots": True}
    assert answer == "sampled: 42"
    assert seen and seen[0].messages[0].content.text == "6 x 7?"  # type: ignore[union-attr]
    _, refused = run(lambda: scenario(None))
    assert refused.startswith("sampling failed")


def test_a_servers_log_messages_reach_the_client_above_its_level_and_the_log_file(
        tmp_path: Path) -> None:
    app = CallgateMCP(_host(), tmp_path)
    got: list[types.LoggingMessageNotificationParams] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        got.append(params)

    async def scenario() -> tuple[list[Any], str]:
        async with Client(app.server, mode="legacy", logging_callback=on_log) as client:
            r = await client.call_tool("use_capability", _call("chatty"))
            assert text_of(r) == "logged"
            first = list(got)
            got.clear()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                await client.set_logging_level("error")
            r = await client.call_tool("use_capability", _call("chatty"))
            assert text_of(r) == "logged"
            assert app.session is not None
            log_file = Path(app.session.scratch_dir(), "mcp", "host.stderr.log")
            return first, log_file.read_text()

    first, recorded = run(scenario)
    assert [(m.level, m.logger) for m in first] == [
        ("info", "mcp:host/fixture"), ("warning", "mcp:host/fixture"),
        ("error", "mcp:host/fixture")]
    assert first[2].data == {"third": "an error", "code": 7}
    assert [m.level for m in got] == ["error"]  # below the level the client set: not sent
    assert recorded.count("[mcp log warning] fixture:") == 2  # recorded whatever is sent


def test_a_2026_client_gets_the_log_messages_it_opts_in_to(tmp_path: Path) -> None:
    app = CallgateMCP(_host(), tmp_path)
    got: list[types.LoggingMessageNotificationParams] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        got.append(params)

    async def scenario() -> None:
        async with Client(app.server, mode="auto", logging_callback=on_log,
                          log_level="warning") as client:
            r = await client.call_tool("use_capability", _call("chatty"))
            assert text_of(r) == "logged"

    run(scenario)
    assert [m.level for m in got] == ["warning", "error"]


def test_a_servers_roots_list_is_the_workspace(tmp_path: Path) -> None:
    app = CallgateMCP(_host(), tmp_path)

    async def scenario() -> str:
        async with Client(app.server) as client:
            return text_of(await client.call_tool("use_capability", _call("roots")))

    assert json.loads(run(scenario)) == [tmp_path.resolve().as_uri()]


def test_over_http_the_elicitation_travels_on_the_calling_requests_own_stream(
        tmp_path: Path) -> None:
    """Bound to the calling request: the server's question arrives on the POST stream of the
    ``tools/call`` that caused it (not the session's GET stream), and its answer goes back."""
    import httpx2

    from .http_support import INITIALIZE, Served

    ws = tmp_path / "ws"
    ws.mkdir()
    config = tmp_path / "callgate.toml"
    config.write_text(f'[mcp_servers.host]\ncommand = {json.dumps(sys.executable)}\n'
                      f'args = [{json.dumps(HOST_FIXTURE)}]\n'
                      '[permissions]\nallow = ["use_capability"]\n')
    base = {"content-type": "application/json",
            "accept": "application/json, text/event-stream"}

    async def scenario(url: str) -> list[dict[str, Any]]:
        seen: list[dict[str, Any]] = []
        async with httpx2.AsyncClient(timeout=60) as http:
            init = {**INITIALIZE, "params": {**INITIALIZE["params"],
                                             "protocolVersion": "2025-11-25",
                                             "capabilities": {"elicitation": {}}}}
            r = await http.post(url, json=init, headers=base)
            headers = {**base, "mcp-session-id": r.headers["mcp-session-id"],
                       "mcp-protocol-version": "2025-11-25"}
            await http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                            headers=headers)
            call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
                "name": "use_capability",
                "arguments": _call("ask_user", question="Which colour?")}}
            async with http.stream("POST", url, json=call, headers=headers) as stream:
                async for line in stream.aiter_lines():
                    if not line.startswith("data:") or not line[5:].strip():
                        continue
                    message = json.loads(line[5:])
                    seen.append(message)
                    if message.get("method") == "elicitation/create":
                        answer = {"jsonrpc": "2.0", "id": message["id"], "result": {
                            "action": "accept", "content": {"answer": "green"}}}
                        r = await http.post(url, json=answer, headers=headers)
                        assert r.status_code == 202, r.text
                    if message.get("id") == 7:
                        break
        return seen

    with Served(["--http", "127.0.0.1:0", "--workspace", str(ws), "--config",
                 str(config)]) as served:
        seen = run(lambda: scenario(served.url))
    asks = [m for m in seen if m.get("method") == "elicitation/create"]
    assert len(asks) == 1 and "Which colour?" in asks[0]["params"]["message"]
    final = seen[-1]
    assert final["id"] == 7 and "accepted: green" in json.dumps(final["result"])


# --- the workspace from the client's roots ----------------------------------------------------


def _roots_app(tmp_path: Path) -> CallgateMCP:
    def boot(workspace: str | None) -> Host:
        return Host.boot({}, plugins=[callgate_files, ElicitationApprover()],
                         entrypoints=False, workspace=workspace)

    return CallgateMCP(boot(None), None, workspace_from_roots=boot)


def _roots(*paths: Path) -> Any:
    async def listed(ctx: Any) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri=p.as_uri()) for p in paths])
    return listed


def test_the_session_works_in_the_clients_root_and_follows_it(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    for folder in (one, two):
        folder.mkdir()
        (folder / "here.txt").write_text(f"I am {folder.name}\n")
    current = [one]

    async def roots(ctx: Any) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri=current[0].as_uri())])

    app = _roots_app(tmp_path)

    async def scenario() -> list[str]:
        out = []
        async with Client(app.server, mode="legacy", list_roots_callback=roots) as client:
            out.append(text_of(await client.call_tool("read_file", {"path": "here.txt"})))
            current[0] = two
            out.append(text_of(await client.call_tool("read_file", {"path": "here.txt"})))
            with warnings.catch_warnings():  # roots are deprecated in 2026-07-28
                warnings.simplefilter("ignore")
                await client.send_roots_list_changed()  # read again before the next batch
            out.append(text_of(await client.call_tool("read_file", {"path": "here.txt"})))
            r = await client.call_tool("read_file", {"path": str(one / "here.txt")})
            assert r.is_error, text_of(r)  # the old root is outside the workspace now
        return out

    first, unchanged, moved = run(scenario)
    assert "I am one" in first and "I am one" in unchanged and "I am two" in moved


@pytest.mark.parametrize("listed, problem", [
    ((), "lists no root"), (("a", "b"), "lists 2 roots")])
def test_no_root_or_several_are_refused_with_a_clear_error(
        tmp_path: Path, listed: tuple[str, ...], problem: str) -> None:
    folders = []
    for name in listed:
        (tmp_path / name).mkdir()
        folders.append(tmp_path / name)
    app = _roots_app(tmp_path)

    async def scenario() -> tuple[str, str]:
        async with Client(app.server, mode="legacy",
                          list_roots_callback=_roots(*folders)) as client:
            r = await client.call_tool("read_file", {"path": "x"})
            assert r.is_error
            try:
                await client.list_tools()
            except Exception as exc:
                return text_of(r), str(exc)
            return text_of(r), "listed"

    called, listing = run(scenario)
    assert problem in called and "nothing was run" in called
    assert problem in listing
    assert app.session is None  # nothing opened


def test_the_cli_flag_is_for_stdio_only(tmp_path: Path) -> None:
    from .http_support import run_cli

    r = run_cli(["--http", "127.0.0.1:0", "--workspace-from-roots"])
    assert r.returncode == 2 and "is for stdio" in r.stderr
    r = run_cli(["--workspace", str(tmp_path), "--workspace-from-roots"])
    assert r.returncode == 2 and "not both" in r.stderr


def test_serve_workspace_from_roots_over_stdio(tmp_path: Path) -> None:
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    from .toolkit import child_env

    project = tmp_path / "project"
    project.mkdir()
    (project / "here.txt").write_text("the project\n")
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "callgate_cli", "serve", "--workspace-from-roots"],
        env=child_env())

    async def scenario() -> str:
        async with stdio_client(params) as (read, write), \
                ClientSession(read, write, list_roots_callback=_roots(project)) as client:
            await client.initialize()
            return text_of(await client.call_tool("read_file", {"path": "here.txt"}))

    assert "the project" in run(scenario)
