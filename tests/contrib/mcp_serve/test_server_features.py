"""The server features a client expects (issue 34, item 6), through the SDK's own client:
``logging/setLevel`` and ``notifications/message`` (callgate's own warnings during a call),
``completion/complete`` for prompt arguments and the result template, an invalid ``cursor``
answered with -32602, and OAuth protected-resource metadata when tokens are configured.
"""

from __future__ import annotations

import logging
import warnings
from pathlib import Path
from typing import Any

import httpx2
import mcp_types as types
import pytest
from callgate import Host, ToolSpec, hookimpl
from callgate_mcp_serve import CallgateMCP, ElicitationApprover
from mcp import Client
from mcp.shared.exceptions import MCPError

from .http_support import INITIALIZE, Served, post
from .test_server import run, text_of
from .toolkit import Toolkit


class Warner:
    """A tool that logs a warning on callgate's logger while it runs."""

    @hookimpl
    def callgate_register_tools(self, registry: Any) -> None:
        def warn(ctx: Any, args: dict[str, Any]) -> str:
            logging.getLogger("callgate.warner").warning("the disk is %s full", args["how"])
            return "warned"

        registry.add(ToolSpec(name="warn", description="Log a warning.", read_only=True,
                              visibility="surface", execute=warn,
                              schema={"type": "object", "properties": {
                                  "how": {"type": "string"}}, "required": ["how"]}))


def _app(ws: Path) -> CallgateMCP:
    host = Host.boot({}, plugins=[Toolkit(), Warner(), ElicitationApprover()],
                     entrypoints=False)
    return CallgateMCP(host, ws)


def test_callgates_warnings_during_a_call_reach_the_client_above_its_level(
        tmp_path: Path) -> None:
    got: list[types.LoggingMessageNotificationParams] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        got.append(params)

    async def scenario() -> None:
        async with Client(_app(tmp_path).server, mode="legacy",
                          logging_callback=on_log) as client:
            assert client.server_capabilities.logging is not None
            assert text_of(await client.call_tool("warn", {"how": "90%"})) == "warned"
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                assert await client.set_logging_level("error") == types.EmptyResult()
            assert text_of(await client.call_tool("warn", {"how": "95%"})) == "warned"

    run(scenario)
    assert [(m.level, m.logger, m.data) for m in got] == [
        ("warning", "callgate.warner", "the disk is 90% full")]


def test_completion_offers_workspace_paths_for_a_prompts_argument(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "src" / "pkg").mkdir(parents=True)
    (ws / "src" / "main.py").write_text("")
    (ws / "src" / "manual.md").write_text("")
    (ws / "src" / ".hidden").write_text("")
    (tmp_path / "outside.txt").write_text("")
    prompt = types.PromptReference(name="review")

    async def scenario() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with Client(_app(ws).server) as client:
            assert client.server_capabilities.completions is not None
            for key, value in [("ma", "focus on src/ma"), ("dir", "src/"), ("dot", "src/."),
                               ("out", "../out"), ("abs", "/etc/pass")]:
                result = await client.complete(prompt, {"name": "arguments", "value": value})
                out[key] = result.completion.values
            r = await client.call_tool("peek", {"path": "src/main.py"})
            assert not r.is_error
            listed = await client.list_resources()
            ref = listed.resources[0].name
            result = await client.complete(
                types.ResourceTemplateReference(uri="callgate://result/{ref}"),
                {"name": "ref", "value": ref[:6]})
            out["refs"] = (ref, result.completion.values)
            result = await client.complete(
                types.PromptReference(name="unknown"), {"name": "other", "value": "x"})
            out["other"] = result.completion.values
        return out

    out = run(scenario)
    assert out["ma"] == ["focus on src/main.py", "focus on src/manual.md"]
    assert out["dir"] == ["src/main.py", "src/manual.md", "src/pkg/"]
    assert out["dot"] == ["src/.hidden"]
    assert out["out"] == [] and out["abs"] == []  # never outside the workspace
    ref, refs = out["refs"]
    assert ref in refs
    assert out["other"] == []


@pytest.mark.parametrize("method", ["tools", "prompts_absent", "resources", "templates"])
def test_an_invalid_cursor_is_invalid_params(tmp_path: Path, method: str) -> None:
    async def scenario() -> Any:
        async with Client(_app(tmp_path).server, mode="legacy") as client:
            session = client.session
            params = types.PaginatedRequestParams(cursor="not-a-cursor")
            if method == "tools":
                return await session.list_tools(params=params)
            if method == "resources":
                return await session.list_resources(params=params)
            if method == "templates":
                return await session.list_resource_templates(params=params)
            return await session.list_prompts(params=params)

    with pytest.raises(MCPError) as raised:
        run(scenario)
    if method == "prompts_absent":  # no commands plugin: no prompts at all
        assert raised.value.error.code == types.METHOD_NOT_FOUND
    else:
        assert raised.value.error.code == types.INVALID_PARAMS
        assert "cursor" in raised.value.error.message


def test_protected_resource_metadata_is_served_when_tokens_are_configured(
        tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    tokens = tmp_path / "tokens"
    tokens.write_text("a-token-for-the-metadata-test-123\n")
    with Served(["--http", "127.0.0.1:0", "--workspace", str(ws),
                 "--token-file", str(tokens)]) as served:
        base = served.url.removesuffix("/mcp")
        for path in ("/.well-known/oauth-protected-resource",
                     "/.well-known/oauth-protected-resource/mcp"):
            r = httpx2.get(base + path, timeout=10)
            assert r.status_code == 200, r.text
            assert r.json() == {"resource": served.url, "bearer_methods_supported": ["header"],
                                "resource_name": "callgate"}
        r = post(served.url, INITIALIZE)
        assert r.status_code == 401
        assert (f'resource_metadata="{base}/.well-known/oauth-protected-resource/mcp"'
                in r.headers["www-authenticate"])
        r = httpx2.get(base + "/.well-known/oauth-protected-resource", timeout=10,
                       headers={"host": "evil.example"})
        assert r.status_code == 421  # DNS rebinding: an unknown Host gets nothing
    with Served(["--http", "127.0.0.1:0", "--workspace", str(ws)]) as open_server:
        base = open_server.url.removesuffix("/mcp")
        assert httpx2.get(base + "/.well-known/oauth-protected-resource",
                          timeout=10).status_code == 404
