"""Annotations and content fidelity of ``callgate serve`` (issue 23, item 5).

Driven by the ``mcp`` SDK's own ``Client`` against the server in process; the proxied MCP
server is the real fixture server (a stdio child), reached through ``use_capability``.
"""

from __future__ import annotations

import base64
import sys
from pathlib import Path
from typing import Any

import callgate_capability
import callgate_files
import callgate_shell
import callgate_web
import mcp_types as types
from callgate import Host
from callgate_mcp_serve import CallgateMCP, ElicitationApprover
from mcp import Client

from .test_server import run

FIXTURE = str(Path(__file__).resolve().parents[2] / "fixtures" / "mcp_fixture_server.py")


def _host(tmp_path: Path, **tables: Any) -> Host:
    config = {"mcp_servers": {"fixture": {"command": sys.executable,
                                          "args": [FIXTURE, "--calls",
                                                   str(tmp_path / "calls.jsonl"),
                                                   "--mixed"]}},
              **tables}
    return Host.boot(config, plugins=[callgate_capability, callgate_files, callgate_shell,
                                      callgate_web, ElicitationApprover()],
                     entrypoints=False, surface="full")


def test_every_tool_has_all_five_annotations_and_use_capability_is_not_destructive(
        tmp_path: Path) -> None:
    app = CallgateMCP(_host(tmp_path), tmp_path)

    async def scenario() -> list[types.Tool]:
        async with Client(app.server) as client:
            return (await client.list_tools()).tools

    tools = {t.name: t for t in run(scenario)}
    for tool in tools.values():
        a = tool.annotations
        assert a is not None and a.title and tool.title == a.title, tool.name
        assert None not in (a.read_only_hint, a.destructive_hint, a.idempotent_hint,
                            a.open_world_hint), tool.name
    def hints(name: str) -> tuple[bool | None, ...]:
        a = tools[name].annotations
        assert a is not None
        return a.read_only_hint, a.destructive_hint, a.idempotent_hint, a.open_world_hint
    assert tools["read_file"].title == "Read file"
    assert hints("read_file") == (True, False, True, False)
    assert hints("bash") == (False, True, False, False)
    assert hints("use_capability") == (False, False, False, True)  # lookups never prompt
    if "web_fetch" in tools:
        assert hints("web_fetch") == (True, False, True, True)


def test_a_destructive_mcp_target_is_still_gated_per_call(tmp_path: Path) -> None:
    host = _host(tmp_path)  # default permissions: a destructive MCP tool asks
    app = CallgateMCP(host, tmp_path)

    async def scenario() -> tuple[types.CallToolResult, types.CallToolResult]:
        async with Client(app.server) as client:  # no elicitation: asks fall back to deny
            looked = await client.call_tool("use_capability", {  # connects, asks nobody
                "action": "call", "capability_id": "mcp-tool:fixture/structured"})
            wiped = await client.call_tool("use_capability", {
                "action": "call", "capability_id": "mcp-tool:fixture/wipe"})
            return looked, wiped

    looked, wiped = run(scenario)
    assert not looked.is_error
    assert wiped.is_error and (wiped.meta or {})["callgate/error"]["kind"] == "blocked", \
        wiped.content


def test_proxied_blocks_arrive_in_order_with_resources_audio_and_structured_content(
        tmp_path: Path) -> None:
    app = CallgateMCP(_host(tmp_path), tmp_path)

    async def scenario() -> types.CallToolResult:
        async with Client(app.server) as client:
            return await client.call_tool("use_capability", {
                "action": "call", "capability_id": "mcp-tool:fixture/mixed"})

    r = run(scenario)
    assert not r.is_error, r.content
    kinds = [b.type for b in r.content]
    assert kinds == ["text", "image", "resource", "resource", "resource_link", "audio", "text"]
    first, image, note, blob, link, audio, last = r.content
    assert isinstance(first, types.TextContent) and first.text == "first"
    assert isinstance(image, types.ImageContent)
    assert base64.b64decode(image.data).startswith(b"\x89PNG")
    assert isinstance(note, types.EmbeddedResource)
    assert isinstance(note.resource, types.TextResourceContents)
    assert note.resource.text == "the note's text" and str(note.resource.uri) == "demo://notes/1"
    assert isinstance(blob, types.EmbeddedResource)
    assert isinstance(blob.resource, types.BlobResourceContents)
    assert base64.b64decode(blob.resource.blob) == b"\x00\x01\x02"
    assert isinstance(link, types.ResourceLink) and str(link.uri) == "demo://readme"
    assert isinstance(audio, types.AudioContent) and audio.mime_type == "audio/wav"
    assert isinstance(last, types.TextContent) and last.text == "last"
    assert r.structured_content == {"kinds": 7, "ok": True}


def test_a_child_servers_progress_reaches_the_client(tmp_path: Path) -> None:
    app = CallgateMCP(_host(tmp_path), tmp_path)
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        seen.append((done, total, message))

    async def scenario() -> types.CallToolResult:
        async with Client(app.server) as client:
            return await client.call_tool("use_capability", {
                "action": "call", "capability_id": "mcp-tool:fixture/slow",
                "arguments": {"seconds": 1}}, progress_callback=on_progress)

    r = run(scenario)
    assert not r.is_error, r.content
    assert seen == [(float(i), 4.0, f"step {i} of 4") for i in range(1, 5)]
