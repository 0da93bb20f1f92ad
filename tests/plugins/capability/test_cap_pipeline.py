"""A proxy call is one call to the pipeline: the target's hooks and gates, the outer
call's counters, shaping and storm breaker (host.md §3, capability.md §4)."""

from __future__ import annotations

import json

from callgate import hookimpl
from callgate.hookspecs import Refuse, Replace
from callgate_capability import MCP_SERVERS

from .helpers import boot, calls_of, doc, fixture_server, mcp_children, uc


class Hooks:
    """Records what pre-tool-use hooks see; refuses ``write_file``, rewrites ``echo``."""

    __name__ = "captest_hooks"

    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []

    @hookimpl
    def callgate_pre_tool_use(self, call, tool, session):
        self.seen.append((call.name, tool.name))
        if call.name == "write_file":
            return Refuse("writes are frozen")
        if call.name == "mcp__fixture__echo" and call.arguments.get("text") == "rewrite":
            return Replace({"text": "rewritten"})
        return None


def test_target_hooks_see_the_target_and_counters_see_one_call(callgate_session, tmp_path):
    hooks = Hooks()
    s = boot(callgate_session, tmp_path, {"fixture": fixture_server(tmp_path)},
             plugins=(hooks,), files={"a.txt": "needle\n"})
    before = s.sync.counters()["argument_validations"]
    assert uc(s, action="call", capability_id="tool:grep",
              arguments={"pattern": "needle"}).text == "a.txt:1:needle"
    assert s.sync.counters()["argument_validations"] == before + 1
    assert hooks.seen[-1] == ("grep", "grep")
    refused = uc(s, action="call", capability_id="tool:write_file",
                 arguments={"path": "b.txt", "content": "x"})
    assert refused.error.kind == "blocked"
    assert refused.error.signature == "hook:captest_hooks"
    assert not (s.workspace / "b.txt").exists()
    echoed = uc(s, action="call", capability_id="mcp-tool:fixture/echo",
                arguments={"text": "rewrite"})
    assert echoed.text == "rewritten"
    assert calls_of(tmp_path) == [{"name": "echo", "arguments": {"text": "rewritten"}}]
    assert ("mcp__fixture__echo", "mcp__fixture__echo") in hooks.seen
    # list/search/inspect/decline run as use_capability itself
    uc(s, action="list")
    assert hooks.seen[-1] == ("use_capability", "use_capability")


def test_a_visible_tool_is_callable_through_the_proxy_and_its_result_unchanged(
        callgate_session, tmp_path):
    s = boot(callgate_session, tmp_path)
    direct = s.call("write_file", {"path": "d.txt", "content": "1"})
    proxied = uc(s, action="call", capability_id="tool:write_file",
                 arguments={"path": "p.txt", "content": "2"})
    assert (direct.text, proxied.text) == ("wrote d.txt", "wrote p.txt")
    assert (s.workspace / "p.txt").read_text() == "2"
    assert proxied.name == "use_capability" and proxied.error is None


def test_the_storm_breaker_counts_repeated_failing_proxy_calls(callgate_session, tmp_path):
    s = boot(callgate_session, tmp_path)
    results = [uc(s, action="call", capability_id="tool:grep", arguments={})
               for _ in range(3)]
    assert all(r.error.kind == "invalid_arguments" for r in results)
    assert results[0].error.signature == results[2].error.signature
    assert results[0].error.signature.startswith("argument_validation:grep:")
    assert s.sync.counters()["storm_hints"] == 1
    assert len(results[2].text) > len(results[1].text)  # the convergence hint was appended


def test_connect_takes_no_arguments(callgate_session, tmp_path):
    s = boot(callgate_session, tmp_path, {"fixture": fixture_server(tmp_path)})
    r = uc(s, action="call", capability_id="mcp-server:fixture", arguments={"force": True})
    assert r.error.kind == "invalid_arguments"
    assert "use_capability.arguments" in r.text
    assert mcp_children() == {}


def test_concurrent_calls_share_one_start(callgate_session, tmp_path):
    first = boot(callgate_session, tmp_path, {"fixture": fixture_server(tmp_path)},
                 session_dir=tmp_path / "one")
    doc(uc(first, action="call", capability_id="mcp-server:fixture"))  # caches read-only pid
    first.close()
    s = callgate_session(host=first.host, workspace=first.workspace,
                         session_dir=tmp_path / "two")
    call = {"name": "use_capability", "arguments": {
        "action": "call", "capability_id": "mcp-tool:fixture/pid"}}
    a, b, c = s.run(call, call, call)
    assert a.text.isdigit() and a.text == b.text == c.text
    assert len(mcp_children()) == 1


def test_a_large_server_directory_is_bounded(callgate_session, tmp_path):
    s = boot(callgate_session, tmp_path, {"fixture": fixture_server(tmp_path)})
    servers = s.sync.extension(MCP_SERVERS)
    from callgate_capability._cache import McpToolInfo

    tools = [McpToolInfo(f"tool_{i:03d}", "A long summary line " * 10,
                         {"type": "object", "properties": {}},
                         {"readOnlyHint": True}) for i in range(400)]
    servers.cache.save(servers.config("fixture").identity, "fixture", {}, tools)
    r = uc(s, action="inspect", capability_id="mcp-server:fixture")
    assert len(r.text.encode()) <= 16 * 1024
    shown = json.loads(r.text)
    assert shown["source"] == "cache"
    assert "summary" not in shown["tools"][0]
    assert shown["more"] == 400 - len(shown["tools"]) > 0
    assert shown["tools"][0]["id"] == "mcp-tool:fixture/tool_000"
    assert mcp_children() == {}
