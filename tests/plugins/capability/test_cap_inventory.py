"""list / search / inspect / decline: only what is callable, never a process (§1, §3, §4)."""

from __future__ import annotations

import json

from callgate_capability import CAPABILITY_DECLINES

from .helpers import (
    boot,
    doc,
    fixture_server,
    git_server,
    make_repo,
    mcp_children,
    time_server,
    uc,
)


def _three(tmp_path, **fixture_table):
    return {"time": time_server(), "git": git_server(make_repo(tmp_path / "repo")),
            "fixture": fixture_server(tmp_path, **fixture_table)}


def test_list_with_three_servers_starts_nothing_and_all_are_configured(
        callgate_session, tmp_path):
    """§9.5"""
    s = boot(callgate_session, tmp_path, _three(tmp_path))
    before = mcp_children()
    r = uc(s, action="list")
    listing = doc(r)
    assert mcp_children() == before == {}
    assert [x["id"] for x in listing["servers"]] == [
        "mcp-server:fixture", "mcp-server:git", "mcp-server:time"]
    assert {x["status"] for x in listing["servers"]} == {"configured"}
    assert all(x["cached_tools"] is None and x["auto_start"] is False
               for x in listing["servers"])
    assert listing["tools"] == [{"id": "tool:grep", "read_only": True},
                                {"id": "tool:repeat", "read_only": True}]
    assert listing["session"] == ["session:tool_result"]
    assert listing["omitted"] == {"denied": 0, "disabled": 0}
    # compact JSON, keys sorted
    assert r.text == json.dumps(listing, sort_keys=True, separators=(",", ":"))
    assert not (tmp_path / "cache").exists()


def test_disabled_server_is_omitted_and_unavailable(callgate_session, tmp_path):
    """§9.6"""
    s = boot(callgate_session, tmp_path, _three(tmp_path, enabled=False))
    listing = doc(uc(s, action="list"))
    assert "mcp-server:fixture" not in [x["id"] for x in listing["servers"]]
    assert listing["omitted"]["disabled"] == 1
    found = doc(uc(s, action="search", query="fixture"))
    assert all("fixture" not in hit["id"] for hit in found["results"])
    r = uc(s, action="call", capability_id="mcp-server:fixture")
    assert r.error.kind == "unavailable"
    assert r.text.startswith("capability unavailable: ")
    assert "disabled" in r.text
    assert uc(s, action="inspect", capability_id="mcp-server:fixture").error.kind == \
        "unavailable"
    assert mcp_children() == {}
    assert not (tmp_path / "calls.jsonl").exists()


def test_new_session_inspects_a_server_from_its_cache_without_starting_it(
        callgate_session, tmp_path):
    """§9.9 (after §9.8 cached it)"""
    first = boot(callgate_session, tmp_path, {"time": time_server()})
    assert doc(uc(first, action="call", capability_id="mcp-server:time"))["source"] == "live"
    first.close()
    assert mcp_children() == {}
    second = callgate_session(host=first.host, workspace=first.workspace)
    r = doc(uc(second, action="inspect", capability_id="mcp-server:time"))
    assert r["source"] == "cache"
    assert r["network_call"] is False
    assert r["status"] == "configured"
    assert [t["id"] for t in r["tools"]] == ["mcp-tool:time/convert_time",
                                            "mcp-tool:time/get_current_time"]
    assert all(t["read_only"] and not t["destructive"] for t in r["tools"])
    assert r["permission_name"] == "mcp_connect__time"
    tool = doc(uc(second, action="inspect", capability_id="mcp-tool:time/convert_time"))
    assert tool["source"] == "cache"
    assert tool["call_example"] == {
        "action": "call", "capability_id": "mcp-tool:time/convert_time",
        "arguments": {"source_timezone": "<string>", "target_timezone": "<string>",
                      "time": "<string>"}}
    assert tool["permission_name"] == "mcp__time__convert_time"
    assert doc(uc(second, action="list"))["servers"][0]["cached_tools"] == 2
    assert mcp_children() == {}


def test_inspect_without_cache_says_source_none_and_how_to_connect(callgate_session, tmp_path):
    """§9.10"""
    s = boot(callgate_session, tmp_path, {"git": git_server(make_repo(tmp_path / "repo"))})
    r = doc(uc(s, action="inspect", capability_id="mcp-server:git"))
    assert r["source"] == "none"
    assert r["tools"] == []
    assert r["hint"] == "call mcp-server:git to connect and list its tools"
    assert r["network_call"] is False
    missing = uc(s, action="inspect", capability_id="mcp-tool:git/git_status")
    assert missing.error.kind == "unavailable"
    assert 'MCP tool "git_status" on "git" is not known yet; call mcp-server:git first' \
        in missing.text
    assert mcp_children() == {}


def test_search_ranks_cached_time_tools_first_and_needs_a_query(callgate_session, tmp_path):
    """§9.25"""
    s = boot(callgate_session, tmp_path, {"time": time_server(),
                                          "fixture": fixture_server(tmp_path)})
    uc(s, action="call", capability_id="mcp-server:time")
    s.close()
    fresh = callgate_session(host=s.host, workspace=s.workspace)
    found = doc(uc(fresh, action="search", query="Timezone"))
    top = [hit["id"] for hit in found["results"][:2]]
    assert sorted(top) == ["mcp-tool:time/convert_time", "mcp-tool:time/get_current_time"]
    hit = found["results"][0]
    assert hit["source"] == "cache" and hit["kind"] == "mcp-tool"
    assert set(hit) == {"id", "kind", "name", "description", "read_only", "argument_names",
                        "destructive", "status", "source"}
    assert mcp_children() == {}
    failures = fresh.sync.counters()["argument_failures"]
    r = uc(fresh, action="search")
    assert r.error.kind == "invalid_arguments"
    assert "required properties: query" in r.text
    assert r.error.signature.startswith("argument_validation:use_capability:")
    assert r.error.signature.endswith(":required")
    assert fresh.sync.counters()["argument_failures"] == failures + 1


def test_search_scores_names_above_descriptions_and_honours_limit(callgate_session, tmp_path):
    s = boot(callgate_session, tmp_path)
    found = doc(uc(s, action="search", query="repeat text", limit=1))
    assert [h["id"] for h in found["results"]] == ["tool:repeat"]
    assert found["results"][0]["argument_names"] == ["text", "times"]
    none = doc(uc(s, action="search", query="zzqx"))
    assert none["results"] == [] and "list" in none["hint"]
    paging = doc(uc(s, action="search", query="result page"))
    assert paging["results"][0]["id"] == "session:tool_result"


def test_bad_ids_are_validation_errors_and_unknown_ids_are_unavailable(
        callgate_session, tmp_path):
    """§9.26"""
    s = boot(callgate_session, tmp_path)
    r = uc(s, action="call", capability_id="web:fetch")
    assert r.error.kind == "invalid_arguments"
    assert "- /capability_id: pattern; expected one of the forms tool:<name>, " \
           "mcp-server:<server>, mcp-tool:<server>/<tool>, session:tool_result" in r.text
    failures = s.sync.counters()["argument_failures"]
    r = uc(s, action="call", capability_id="tool:nope")
    assert r.error.kind == "unavailable"
    assert r.text.startswith('capability unavailable: tool "nope" is not registered in this '
                             "session")
    assert r.error.signature == "unavailable:tool:nope"
    assert s.sync.counters()["argument_failures"] == failures
    near = uc(s, action="inspect", capability_id="tool:grepp")
    assert "; did you mean tool:grep" in near.text
    for bad in ("mcp-tool:fixture", "mcp-tool:/echo", "tool:"):
        assert uc(s, action="inspect", capability_id=bad).error.kind == "invalid_arguments"
    assert uc(s, action="call", capability_id="mcp-server:nope").error.kind == "unavailable"
    assert uc(s, action="call", capability_id="tool:use_capability").error.kind == \
        "unavailable"


def test_decline_records_the_reason_and_needs_a_real_one(callgate_session, tmp_path):
    """§9.27"""
    s = boot(callgate_session, tmp_path)
    r = uc(s, action="decline", capability_id="tool:grep", reason="not needed")
    assert r.text == "declined capability tool:grep: not needed"
    assert s.sync.extension(CAPABILITY_DECLINES) == [("tool:grep", "not needed")]
    assert uc(s, action="decline", capability_id="mcp-server:never-configured",
              reason="no").text == "declined capability mcp-server:never-configured: no"
    blank = uc(s, action="decline", capability_id="tool:grep", reason="   ")
    assert blank.error.kind == "invalid_arguments"
    assert "/reason" in blank.text
    missing = uc(s, action="decline", capability_id="tool:grep")
    assert "required properties: reason" in missing.text
    assert len(s.sync.extension(CAPABILITY_DECLINES)) == 2


def test_envelope_errors_are_structured_and_leave_the_session_usable(
        callgate_session, tmp_path):
    s = boot(callgate_session, tmp_path)
    unknown = uc(s, action="fetch")
    assert unknown.error.kind == "invalid_arguments"
    assert "/action: enum" in unknown.text
    assert uc(s, action="List").error.kind == "invalid_arguments"
    no_id = uc(s, action="inspect")
    assert "required properties: capability_id" in no_id.text
    not_object = uc(s, action="call", capability_id="tool:grep", arguments="pattern=x")
    assert "/arguments: type; expected type object" in not_object.text
    inner = uc(s, action="call", capability_id="tool:grep", arguments={"patern": "x"})
    assert inner.error.kind == "invalid_arguments"
    assert "use_capability.arguments" in inner.text
    assert inner.error.signature.startswith("argument_validation:grep:")
    assert uc(s, action="list").is_error is False


def test_inspect_tool_shows_schema_fingerprint_and_call_example(callgate_session, tmp_path):
    s = boot(callgate_session, tmp_path)
    r = doc(uc(s, action="inspect", capability_id="tool:repeat"))
    assert r["kind"] == "tool" and r["read_only"] is True and r["network_call"] is False
    assert r["call_example"] == {"action": "call", "capability_id": "tool:repeat",
                                 "arguments": {"text": "<string>", "times": 0}}
    assert len(r["schema_fingerprint"]) == 16
    example = r["call_example"]
    ran = s.call("use_capability", {**example, "arguments": {"text": "ab", "times": 2}})
    assert ran.text == "abab"
    page = doc(uc(s, action="inspect", capability_id="session:tool_result"))
    assert page["kind"] == "session" and page["read_only"] is True
    assert page["call_example"]["arguments"] == {"tool_call_id": "<string>"}


def test_a_denied_hidden_tool_is_omitted_and_its_call_blocked(callgate_session, tmp_path):
    s = boot(callgate_session, tmp_path, tables={"permissions": {"deny": ["repeat"]}})
    listing = doc(uc(s, action="list"))
    assert listing["tools"] == [{"id": "tool:grep", "read_only": True}]
    assert listing["omitted"] == {"denied": 1, "disabled": 0}
    assert all(h["id"] != "tool:repeat"
               for h in doc(uc(s, action="search", query="repeat"))["results"])
    assert uc(s, action="inspect", capability_id="tool:repeat").error.kind == "unavailable"
    r = uc(s, action="call", capability_id="tool:repeat", arguments={"text": "a", "times": 1})
    assert r.error.kind == "blocked" and r.error.signature == "deny:repeat"
