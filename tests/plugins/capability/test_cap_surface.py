"""The fixed surface: use_capability never changes; hidden tools stay reachable (§1-§3)."""

from __future__ import annotations

import json
import sys

import callgate_capability
import callgate_providers as providers
import pytest
from callgate import Host
from callgate.host import BootError

from .helpers import (
    PROVIDERS,
    ToolsPlugin,
    boot,
    config,
    doc,
    fixture_server,
    git_server,
    make_repo,
    mcp_children,
    time_server,
    uc,
)


def _surfaces(host_or_session):
    return {p: json.dumps(providers.surface(host_or_session, p), sort_keys=True) for p in PROVIDERS}


def test_surface_is_byte_identical_with_or_without_servers_and_after_connecting_all(
        callgate_session, tmp_path):
    """§9.1"""
    bare = boot(callgate_session, tmp_path / "a")
    servers = {"time": time_server(), "git": git_server(make_repo(tmp_path / "repo")),
               "fixture": fixture_server(tmp_path)}
    s = boot(callgate_session, tmp_path, servers)
    assert _surfaces(bare.host) == _surfaces(s.host)
    [entry] = [e for e in providers.surface(s.host) if e["name"] == "use_capability"]
    [bare_entry] = [e for e in providers.surface(bare.host)
                    if e["name"] == "use_capability"]
    assert json.dumps(entry, sort_keys=True) == json.dumps(bare_entry, sort_keys=True)
    before = _surfaces(s.sync)
    for name in ("time", "git", "fixture"):
        r = uc(s, action="call", capability_id=f"mcp-server:{name}")
        assert doc(r)["status"] == "connected"
    assert _surfaces(s.sync) == before
    assert len(mcp_children()) == 3


def test_lean_surface_holds_surface_tools_and_hidden_grep_works_through_the_proxy(
        callgate_session, tmp_path):
    """§9.2"""
    s = boot(callgate_session, tmp_path, files={"notes.txt": "alpha\nneedle here\n"})
    assert s.sync.tool_names() == ["write_file", "use_capability"]
    assert "grep" not in [t["name"] for t in providers.surface(s.sync)]
    r = uc(s, action="call", capability_id="tool:grep", arguments={"pattern": "needle"})
    assert not r.is_error, r.text
    assert r.text == "notes.txt:2:needle here"


def test_show_makes_grep_visible_and_hiding_use_capability_fails_boot(
        callgate_session, tmp_path):
    """§9.3"""
    s = boot(callgate_session, tmp_path, tables={"surface": {"show": ["grep"]}})
    assert "grep" in s.sync.tool_names()
    with pytest.raises(BootError, match="use_capability"):
        Host.boot(config(tmp_path, surface={"hide": ["use_capability"]}),
                  plugins=[callgate_capability, ToolsPlugin()], entrypoints=False)


def test_direct_call_to_hidden_grep_is_unavailable_and_names_the_capability_id(
        callgate_session, tmp_path):
    """§9.4"""
    tools = ToolsPlugin()
    s = boot(callgate_session, tmp_path, plugins=(tools,))
    r = s.call("grep", {"pattern": "x"})
    assert r.error.kind == "unavailable"
    assert 'capability_id "tool:grep"' in r.text
    assert r.meta["executed"] is False
    assert s.sync.counters()["argument_validations"] == 0


def test_without_the_mcp_sdk_servers_are_unavailable_but_tools_still_work(
        callgate_session, tmp_path, monkeypatch):
    """§9.32"""
    monkeypatch.setitem(sys.modules, "mcp", None)
    s = boot(callgate_session, tmp_path, {"fixture": fixture_server(tmp_path)},
             files={"a.txt": "needle\n"})
    r = uc(s, action="call", capability_id="mcp-server:fixture")
    assert r.error.kind == "unavailable"
    assert "MCP support is not installed (callgate-capability[mcp])" in r.text
    listing = doc(uc(s, action="list"))
    assert listing["servers"] == []
    assert not (tmp_path / "calls.jsonl").exists()
    assert mcp_children() == {}
    ok = uc(s, action="call", capability_id="tool:grep", arguments={"pattern": "needle"})
    assert ok.text == "a.txt:1:needle"


def test_use_capability_contract_flag_is_false_but_its_actions_are_read_only(
        callgate_session, tmp_path):
    s = boot(callgate_session, tmp_path)
    spec = s.sync.available_tools()["use_capability"]
    assert spec.contract_read_only is False
    assert spec.visibility == "surface"
    for action in ("list", "search", "inspect", "decline"):
        assert spec.is_read_only({"action": action}) is True
    assert spec.is_read_only({"action": "call", "capability_id": "tool:grep"}) is False
