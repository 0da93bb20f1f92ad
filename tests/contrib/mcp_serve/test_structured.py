"""``structuredContent`` through ``callgate serve`` (issue 34, items 2 and 6), driven by the
SDK's own ``Client`` (which checks every result against the tool's ``outputSchema``).

- A proxied SDK server puts its whole string result in ``structuredContent``; when the host
  truncates the text, the data is clipped to the same budget around the same marker, never
  sent whole.
- callgate's own tools whose result is data declare an ``outputSchema`` and answer with
  ``structuredContent`` valid against it, while the text the model reads is unchanged.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import callgate_capability
import callgate_files
import callgate_memory
import callgate_search
import callgate_sessions
import callgate_shell
import mcp_types as types
from callgate import Host, hookimpl
from callgate_mcp_serve import CallgateMCP, ElicitationApprover
from callgate_mcp_serve._structured import clip
from mcp import Client

from .test_server import run, text_of

HOST_FIXTURE = str(Path(__file__).resolve().parents[2] / "fixtures" /
                   "mcp_host_fixture_server.py")
MARKER = "…[truncated "


def _host(tmp_path: Path, **tables: Any) -> Host:
    config = {"mcp_servers": {"host": {"command": sys.executable, "args": [HOST_FIXTURE]}},
              "permissions": {"allow": ["mcp__host__*", "use_capability"]}, **tables}
    return Host.boot(config, plugins=[callgate_capability, callgate_files, callgate_shell,
                                      callgate_search, callgate_sessions, callgate_memory,
                                      ElicitationApprover()],
                     entrypoints=False, surface="full")


def _size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


def test_a_proxied_result_the_host_truncated_has_its_data_clipped_the_same_way(
        tmp_path: Path) -> None:
    app = CallgateMCP(_host(tmp_path), tmp_path)

    async def scenario() -> tuple[types.CallToolResult, types.CallToolResult]:
        async with Client(app.server) as client:
            small = await client.call_tool("use_capability", {
                "action": "call", "capability_id": "mcp-tool:host/big",
                "arguments": {"chars": 100}})
            large = await client.call_tool("use_capability", {
                "action": "call", "capability_id": "mcp-tool:host/big",
                "arguments": {"chars": 64 * 1024}})
            return small, large

    small, large = run(scenario)
    assert not small.is_error and small.structured_content is not None
    assert len(small.structured_content["result"]) == 100  # untouched: sent as it came
    assert not large.is_error, text_of(large)
    text = text_of(large)
    assert len(text) <= 30_000 and MARKER in text
    marker = text[text.index(MARKER):text.index("]…", text.index(MARKER)) + 2]
    data = large.structured_content
    assert data is not None and set(data) == {"result"}
    assert _size(data) <= 30_000, "the data went out whole"
    assert marker in data["result"]  # the same marker, naming the result_ref to page
    assert data["result"].startswith("0000000 0000001")
    assert marker in (large.meta or {})["callgate/structuredContent"]


def test_callgate_tools_whose_result_is_data_declare_and_send_it(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "a.py").write_text("import os\nprint('needle')\n")
    (ws / "notes.txt").write_text("a needle here\n")
    app = CallgateMCP(_host(tmp_path), ws)
    declared = {"ls", "glob", "grep", "job_output", "list_sessions", "memory",
                "use_capability"}

    async def scenario() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with Client(app.server) as client:  # validates each result's data
            tools = {t.name: t for t in (await client.list_tools()).tools}
            out["schemas"] = {n for n, t in tools.items() if t.output_schema is not None}
            calls = {
                "ls": ("ls", {"path": "."}),
                "glob": ("glob", {"pattern": "**/*.py"}),
                "grep": ("grep", {"pattern": "needle"}),
                "jobs": ("job_output", {}),
                "sessions": ("list_sessions", {}),
                "memory": ("memory", {"operation": "list"}),
                "list": ("use_capability", {"action": "list"}),
                "search": ("use_capability", {"action": "search", "query": "files"}),
                "read": ("read_file", {"path": "notes.txt"}),
                "inspect": ("use_capability", {"action": "inspect",
                                               "capability_id": "session:tool_result"}),
            }
            for key, (name, arguments) in calls.items():
                r = await client.call_tool(name, arguments)
                assert not r.is_error, (key, text_of(r))
                out[key] = r
            r = await client.call_tool("bash", {"command": "echo hi", "run_in_background": True})
            job = (r.meta or {}).get("job_id") or text_of(r).split("background job ")[1][:6]
            r = await client.call_tool("job_output", {"job_id": job, "wait": True})
            assert not r.is_error, text_of(r)
            out["job"] = r
        return out

    out = run(scenario)
    assert declared <= out["schemas"]
    assert "read_file" not in out["schemas"]  # text, not data
    assert out["read"].structured_content is None
    ls = out["ls"].structured_content
    assert {"path": "notes.txt", "type": "file", "size": 14} in ls["entries"]
    assert {"path": "src", "type": "directory"} in ls["entries"]
    assert "notes.txt\t14" in text_of(out["ls"])  # the text as the contract has it
    assert out["glob"].structured_content["files"] == ["src/a.py"]
    matches = out["grep"].structured_content["matches"]
    assert {"path": "notes.txt", "line": 1, "text": "a needle here"} in matches
    assert out["jobs"].structured_content == {"jobs": []}
    assert out["job"].structured_content["output"] == "hi\n"
    sessions = out["sessions"].structured_content["sessions"]
    assert any(s["current"] for s in sessions)
    assert out["memory"].structured_content == {"operation": "list", "facts": []}
    listed = out["list"].structured_content
    assert listed["servers"][0]["id"] == "mcp-server:host"
    assert json.loads(text_of(out["list"])) == listed
    assert "results" in out["search"].structured_content
    assert out["inspect"].structured_content == {}  # declared, no data: an empty object


class Redactor:
    """A ``callgate_shape_result`` that rewrites proxied results' text."""

    @hookimpl
    def callgate_shape_result(self, call: Any, tool: Any, result: Any, session: Any) -> Any:
        if result.meta.get("server") == "host":
            return result.with_text(result.text.replace("0000001", "[redacted]"))
        return None


def test_a_proxied_result_whose_text_a_plugin_changed_loses_its_data(tmp_path: Path) -> None:
    host = Host.boot({"mcp_servers": {"host": {"command": sys.executable,
                                                "args": [HOST_FIXTURE]}},
                      "permissions": {"allow": ["mcp__host__*"]}},
                     plugins=[callgate_capability, Redactor(), ElicitationApprover()],
                     entrypoints=False)
    app = CallgateMCP(host, tmp_path)

    async def scenario() -> types.CallToolResult:
        async with Client(app.server) as client:
            return await client.call_tool("use_capability", {
                "action": "call", "capability_id": "mcp-tool:host/big",
                "arguments": {"chars": 100}})

    r = run(scenario)
    assert not r.is_error and "[redacted]" in text_of(r)
    assert r.structured_content == {}  # not the server's data, which shows what was redacted
    assert (r.meta or {})["callgate/structuredContent"].startswith("dropped")


def test_clip_keeps_keys_and_fits_the_budget() -> None:
    value = {"entries": [{"path": f"f{i}", "size": i} for i in range(4000)],
             "note": "n" * 50_000, "truncated": False}
    clipped = clip(value, 20_000, "…[truncated x]…")
    assert clipped is not None and set(clipped) == set(value)
    assert _size(clipped) <= 20_000 and clipped["truncated"] is False
    assert clipped["entries"] == value["entries"][:len(clipped["entries"])]
    assert "…[truncated x]…" in clipped["note"]
    assert clip({"a": 1}, 20_000) == {"a": 1}
