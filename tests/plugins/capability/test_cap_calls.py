"""Calling MCP tools: validated against the live schema, gated by hints and rules (§4, §5)."""

from __future__ import annotations

import json
import shutil
import sys
import time

from .helpers import (
    FIXTURE,
    Approver,
    boot,
    calls_of,
    doc,
    fixture_server,
    git_server,
    make_repo,
    mcp_children,
    time_server,
    uc,
)

TOKYO = {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}


def _echo(s, args, **kw):
    return uc(s, action="call", capability_id="mcp-tool:fixture/echo", arguments=args, **kw)


def test_convert_time_through_a_deferred_call_dispatches_once(callgate_session, tmp_path):
    """§9.11"""
    s = boot(callgate_session, tmp_path, {"time": time_server()})
    r = uc(s, action="call", capability_id="mcp-tool:time/convert_time", arguments=TOKYO)
    assert not r.is_error, r.text
    assert "21:00" in r.text
    assert s.sync.counters()["remote_dispatches"] == 1
    now = uc(s, action="call", capability_id="mcp-tool:time/get_current_time",
             arguments={"timezone": "UTC"})
    assert '"timezone": "UTC"' in now.text
    assert s.sync.counters()["remote_dispatches"] == 2


def test_invalid_arguments_to_a_connected_tool_are_never_sent(callgate_session, tmp_path):
    """§9.12"""
    s = boot(callgate_session, tmp_path, {"fixture": fixture_server(tmp_path)})
    doc(uc(s, action="call", capability_id="mcp-server:fixture"))
    r = _echo(s, {})
    assert r.error.kind == "invalid_arguments"
    assert "required properties: text" in r.text
    assert "use_capability.arguments" in r.text
    assert r.error.signature.startswith("argument_validation:mcp__fixture__echo:")
    assert calls_of(tmp_path) == []
    counters = s.sync.counters()
    assert counters["remote_dispatches"] == 0
    assert counters["argument_failures"] == 1 and counters["argument_validations"] == 2
    assert _echo(s, {"text": "hi"}).text == "hi"
    assert calls_of(tmp_path) == [{"name": "echo", "arguments": {"text": "hi"}}]


def _cache_variant_one(callgate_session, tmp_path, variant):
    """Connect once with variant 1 so the cache holds it; then switch the live variant."""
    variant.write_text("1")
    first = boot(callgate_session, tmp_path, {"fixture": fixture_server(
        tmp_path, "--variant", str(variant))})
    doc(uc(first, action="call", capability_id="mcp-server:fixture"))
    first.close()
    [cache] = (tmp_path / "cache" / "mcp").glob("*.json")
    return first, cache, cache.read_bytes()


def test_deferred_call_validates_against_the_live_schema_not_the_cache(
        callgate_session, tmp_path):
    """§9.13, §9.14"""
    variant = tmp_path / "variant"
    first, cache, cached_bytes = _cache_variant_one(callgate_session, tmp_path, variant)
    variant.write_text("2")
    s = callgate_session(host=first.host, workspace=first.workspace)
    r = _echo(s, {"text": "hi"})
    assert r.error.kind == "invalid_arguments"
    assert "message" in r.text
    assert "use_capability.arguments" in r.text
    assert calls_of(tmp_path) == []
    assert s.sync.counters()["remote_dispatches"] == 0
    s.close()
    # same setup again (cache says variant 1, server not connected): the right input works
    cache.write_bytes(cached_bytes)
    again = callgate_session(host=first.host, workspace=first.workspace)
    ok = _echo(again, {"message": "hi"})
    assert not ok.is_error, ok.text
    assert ok.text == "hi"
    assert again.sync.counters()["remote_dispatches"] == 1
    assert calls_of(tmp_path) == [{"name": "echo", "arguments": {"message": "hi"}}]


def test_hints_that_became_less_safe_refuse_the_call_then_ask(callgate_session, tmp_path):
    """§9.23"""
    variant = tmp_path / "variant"
    first, _cache, _ = _cache_variant_one(callgate_session, tmp_path, variant)
    variant.write_text("3")
    approver = Approver()
    first.host.pm.register(approver, name="captest_approver")
    s = callgate_session(host=first.host, workspace=first.workspace)
    r = _echo(s, {"text": "hi"})
    assert r.error.kind == "unavailable"
    assert 'MCP tool "echo" changed its safety hints after approval; nothing was called; call ' \
           "it again" in r.text
    assert approver.asked == []
    assert calls_of(tmp_path) == []
    second = _echo(s, {"text": "hi"})
    assert approver.asked == ["mcp__fixture__echo"]
    assert second.text == "hi"
    assert calls_of(tmp_path) == [{"name": "echo", "arguments": {"text": "hi"}}]


def test_a_schema_that_does_not_compile_sends_nothing(callgate_session, tmp_path):
    """§9.34"""
    variant = tmp_path / "variant"
    variant.write_text("4")
    s = boot(callgate_session, tmp_path, {"fixture": fixture_server(
        tmp_path, "--variant", str(variant))})
    doc(uc(s, action="call", capability_id="mcp-server:fixture"))
    r = _echo(s, {"text": "hi"})
    assert r.error.kind == "config_error"
    assert r.error.signature.startswith("argument_validation:mcp__fixture__echo:")
    assert r.error.signature.endswith(":schema")
    assert 'MCP tool "echo" on "fixture" has an input schema that does not compile (' in r.text
    assert "this is a server problem, not the arguments" in r.text
    assert calls_of(tmp_path) == []
    counters = s.sync.counters()
    assert counters["skipped"] == 1 and counters["remote_dispatches"] == 0
    assert counters["argument_failures"] == 0
    shown = doc(uc(s, action="inspect", capability_id="mcp-tool:fixture/echo"))
    assert "schema_error" in shown and "5" in shown["schema_error"]
    # the other tools of that server still work
    assert uc(s, action="call", capability_id="mcp-tool:fixture/write_note",
              arguments={"text": "x"}).text == "noted"


def test_a_deferred_call_meets_the_broken_schema_after_connecting(callgate_session, tmp_path):
    variant = tmp_path / "variant"
    first, _cache, _ = _cache_variant_one(callgate_session, tmp_path, variant)
    variant.write_text("4")
    s = callgate_session(host=first.host, workspace=first.workspace)
    r = _echo(s, {"text": "hi"})
    assert r.error.kind == "config_error"
    assert r.error.signature.endswith(":schema")
    assert calls_of(tmp_path) == []
    assert s.sync.counters()["skipped"] == 1


def test_git_hints_decide_who_asks(callgate_session, tmp_path):
    """§9.21"""
    repo = make_repo(tmp_path / "repo")
    (repo / "b.txt").write_text("two\n")
    approver = Approver(allow=False)
    s = boot(callgate_session, tmp_path, {"git": git_server(repo)}, plugins=(approver,))
    rp = {"repo_path": str(repo)}
    status = uc(s, action="call", capability_id="mcp-tool:git/git_status", arguments=rp)
    assert not status.is_error, status.text
    assert "b.txt" in status.text
    add = uc(s, action="call", capability_id="mcp-tool:git/git_add",
             arguments={**rp, "files": ["b.txt"]})
    assert not add.is_error, add.text
    commit = uc(s, action="call", capability_id="mcp-tool:git/git_commit",
                arguments={**rp, "message": "second"})
    assert not commit.is_error, commit.text
    assert approver.asked == []
    reset = uc(s, action="call", capability_id="mcp-tool:git/git_reset", arguments=rp)
    assert approver.asked == ["mcp__git__git_reset"]
    assert reset.error.kind == "blocked"
    s.close()

    untrusted = Approver(allow=False)
    u = boot(callgate_session, tmp_path / "u", {"git": git_server(repo, trusted=False)},
             plugins=(untrusted,),
             tables={"permissions": {"mode": "ask", "allow": ["mcp_connect__git"]}})
    doc(uc(u, action="call", capability_id="mcp-server:git"))
    assert untrusted.asked == []
    r = uc(u, action="call", capability_id="mcp-tool:git/git_commit",
           arguments={**rp, "message": "third"})
    assert untrusted.asked == ["mcp__git__git_commit"]
    assert r.error.kind == "blocked"
    # an untrusted server's readOnlyHint relaxes nothing (issue 16): its status call asks too
    status = uc(u, action="call", capability_id="mcp-tool:git/git_status", arguments=rp)
    assert status.error.kind == "blocked"
    assert untrusted.asked == ["mcp__git__git_commit", "mcp__git__git_status"]


def test_rules_match_mcp_names_exactly(callgate_session, tmp_path):
    """§9.22"""
    repo = make_repo(tmp_path / "repo")
    glob = boot(callgate_session, tmp_path, {"git": git_server(repo)},
                tables={"permissions": {"deny": ["mcp__git__*"]}})
    rp = {"repo_path": str(repo)}
    assert not uc(glob, action="call", capability_id="mcp-tool:git/git_status",
                  arguments=rp).is_error
    glob.close()
    exact = boot(callgate_session, tmp_path / "e", {"git": git_server(repo)},
                 tables={"permissions": {"deny": ["mcp__git__git_status"]}})
    # the cache is per test directory; connect so search has the live tools
    doc(uc(exact, action="call", capability_id="mcp-server:git"))
    r = uc(exact, action="call", capability_id="mcp-tool:git/git_status", arguments=rp)
    assert r.error.kind == "blocked"
    assert r.error.signature == "deny:mcp__git__git_status"
    found = doc(uc(exact, action="search", query="git status", limit=8))
    ids = [h["id"] for h in found["results"]]
    assert "mcp-tool:git/git_status" not in ids and "mcp-tool:git/git_diff" in " ".join(ids)
    directory = doc(uc(exact, action="inspect", capability_id="mcp-server:git"))
    assert "mcp-tool:git/git_status" not in [t["id"] for t in directory["tools"]]
    assert uc(exact, action="inspect", capability_id="mcp-tool:git/git_status").error.kind == \
        "unavailable"


def test_plan_mode_lets_reads_through_and_blocks_writers(callgate_session, tmp_path):
    """§9.33"""
    tools_ran = []
    s = boot(callgate_session, tmp_path, {"fixture": fixture_server(tmp_path),
                                          "other": fixture_server(tmp_path)},
             files={"a.txt": "needle\n"})
    doc(uc(s, action="call", capability_id="mcp-server:fixture"))
    s.sync.set_mode("plan")
    assert uc(s, action="call", capability_id="tool:grep", arguments={"pattern": "needle"}
              ).text == "a.txt:1:needle"
    assert doc(uc(s, action="inspect", capability_id="tool:write_file"))["read_only"] is False
    w = uc(s, action="call", capability_id="tool:write_file",
           arguments={"path": "new.txt", "content": "x"})
    assert w.error.kind == "blocked" and w.error.signature == "mode:plan"
    assert not (s.workspace / "new.txt").exists()
    connect = uc(s, action="call", capability_id="mcp-server:other")
    assert connect.error.kind == "blocked" and "plan mode" in connect.text
    assert len(mcp_children()) == 1
    assert _echo(s, {"text": "plan"}).text == "plan"
    note = uc(s, action="call", capability_id="mcp-tool:fixture/write_note",
              arguments={"text": "x"})
    assert note.error.kind == "blocked"
    assert calls_of(tmp_path) == [{"name": "echo", "arguments": {"text": "plan"}}]
    # an already connected server's directory is read-only
    assert doc(uc(s, action="call", capability_id="mcp-server:fixture"))["source"] == "live"
    assert tools_ran == []


def test_destructive_tools_ask_and_deny_mode_refuses_them(callgate_session, tmp_path):
    approver = Approver(allow=True)
    s = boot(callgate_session, tmp_path, {"fixture": fixture_server(tmp_path)},
             plugins=(approver,))
    assert uc(s, action="call", capability_id="mcp-tool:fixture/write_note",
              arguments={"text": "x"}).text == "noted"
    assert approver.asked == []
    assert uc(s, action="call", capability_id="mcp-tool:fixture/wipe").text == "wiped"
    assert approver.asked == ["mcp__fixture__wipe"]
    s.close()
    d = boot(callgate_session, tmp_path / "d", {"fixture": fixture_server(tmp_path)},
             plugins=(Approver(),), tables={"permissions": {"mode": "deny"}})
    assert uc(d, action="call", capability_id="mcp-tool:fixture/wipe").error.kind == "blocked"


def test_results_carry_text_images_resources_structured_content_and_errors(
        callgate_session, tmp_path):
    s = boot(callgate_session, tmp_path, {"fixture": fixture_server(tmp_path)})
    pic = uc(s, action="call", capability_id="mcp-tool:fixture/picture")
    assert pic.text == "a picture\n[resource link file:///tmp/note.txt note text/plain]"
    [image] = pic.images
    assert image.media_type == "image/png" and image.data.startswith(b"\x89PNG")
    structured = uc(s, action="call", capability_id="mcp-tool:fixture/structured")
    assert structured.text == '{"answer":42}'
    failed = uc(s, action="call", capability_id="mcp-tool:fixture/fail")
    assert failed.error.kind == "tool_error"
    assert failed.text == 'MCP tool "fail" on "fixture" reported an error:\nthe fixture refused'
    unknown = uc(s, action="call", capability_id="mcp-tool:fixture/nope")
    assert unknown.error.kind == "unavailable"
    assert 'MCP tool "nope" is not offered by server "fixture"' in unknown.text


def test_a_server_crashing_mid_call_fails_that_call_and_the_next_reconnects(
        callgate_session, tmp_path):
    s = boot(callgate_session, tmp_path, {"fixture": fixture_server(tmp_path)})
    pid = int(uc(s, action="call", capability_id="mcp-tool:fixture/pid").text)
    r = uc(s, action="call", capability_id="mcp-tool:fixture/crash")
    assert r.error.kind == "tool_error"
    assert 'MCP server "fixture" failed during the call: exited with code 5' in r.text
    assert "fixture: crashing on purpose" in r.text
    assert doc(uc(s, action="list"))["servers"][0]["status"] == "failed"
    again = int(uc(s, action="call", capability_id="mcp-tool:fixture/pid").text)
    assert again != pid
    assert s.sync.counters()["remote_dispatches"] == 3


def test_a_slow_answer_times_out_and_counts_as_dispatched(callgate_session, tmp_path):
    s = boot(callgate_session, tmp_path, {"fixture": fixture_server(tmp_path,
                                                                   call_timeout_s=1)})
    # the tool would answer after 60 s: a timeout answer proves the 1 s limit (no wall-clock
    # bound here: server start-up under load is not what this test measures)
    r = uc(s, action="call", capability_id="mcp-tool:fixture/slow", arguments={"seconds": 60})
    assert r.error.kind == "timeout"
    assert r.text == 'MCP tool "slow" on "fixture" did not answer within 1 s'
    assert s.sync.counters()["remote_dispatches"] == 1
    assert uc(s, action="call", capability_id="mcp-tool:fixture/echo",
              arguments={"text": "still here"}).text == "still here"


def test_read_only_calls_of_one_batch_run_concurrently(callgate_session, tmp_path):
    s = boot(callgate_session, tmp_path, {"fixture": fixture_server(tmp_path)})
    doc(uc(s, action="call", capability_id="mcp-server:fixture"))
    batch = [{"name": "use_capability", "arguments": {
        "action": "call", "capability_id": "mcp-tool:fixture/slow", "arguments": {"seconds": 1}}}
        for _ in range(3)]
    started = time.monotonic()
    results = s.run(*batch)
    assert [r.text for r in results] == ["slow answer"] * 3
    assert time.monotonic() - started < 2.8


def test_a_listing_in_pages_is_followed_to_the_end(callgate_session, tmp_path):
    s = boot(callgate_session, tmp_path, {"fixture": fixture_server(tmp_path, "--pages", "4")})
    directory = doc(uc(s, action="call", capability_id="mcp-server:fixture"))
    assert len(directory["tools"]) == 10


def test_stderr_log_lives_in_the_session_dir(callgate_session, tmp_path):
    s = boot(callgate_session, tmp_path, {"fixture": fixture_server(tmp_path)},
             session_dir=tmp_path / "sess")
    doc(uc(s, action="call", capability_id="mcp-server:fixture"))
    assert (tmp_path / "sess" / "mcp" / "fixture.stderr.log").exists()
    assert shutil.which("git") is not None
    assert json.loads(json.dumps({"ok": True}))["ok"]


def test_mixed_results_keep_block_order_resource_text_and_structured_content(
        callgate_session, tmp_path):
    s = boot(callgate_session, tmp_path, {"fixture": fixture_server(tmp_path, "--mixed")})
    r = uc(s, action="call", capability_id="mcp-tool:fixture/mixed")
    assert not r.is_error, r.text
    kinds = [type(b).__name__ for b in r.content]
    assert kinds == ["TextBlock", "ImageBlock", *["TextBlock"] * 5]
    assert r.content[0].text == "first" and r.content[-1].text == "last"
    assert r.content[2].text == "[resource demo://notes/1 text/plain]\nthe note's text"
    assert r.content[3].text == ("[resource demo://blobs/1 application/octet-stream] "
                                 "(3 bytes of binary data)")
    assert r.content[4].text == "[resource link demo://readme readme text/markdown]"
    assert r.content[5].text == "[audio audio/wav, 12 bytes]"
    assert r.meta["structured_content"] == {"kinds": 7, "ok": True}
    assert [b["type"] for b in r.meta["mcp_content"]] == [
        "text", "image", "resource", "resource", "resource_link", "audio", "text"]


def test_a_server_dying_behind_a_wrapper_is_noticed_at_once(callgate_session, tmp_path):
    """``bash -c "server | tee log"``: the server's death is seen by watching the process
    group, not at the call timeout."""
    wrapped = " ".join([sys.executable, FIXTURE, "--calls", str(tmp_path / "calls.jsonl")])
    # the subshell keeps the pipe to callgate open after the server died
    table = {"command": "bash",
             "args": ["-c", f"({wrapped}; sleep 60) | tee {tmp_path / 'tee.log'}"],
             "call_timeout_s": 30}
    s = boot(callgate_session, tmp_path, {"fixture": table})
    assert not uc(s, action="call", capability_id="mcp-tool:fixture/structured").is_error
    started = time.monotonic()
    r = uc(s, action="call", capability_id="mcp-tool:fixture/crash")
    assert time.monotonic() - started < 5
    assert r.error.kind == "tool_error" and r.error.signature == "mcp_server_failed:fixture"


def _child_env(callgate_session, tmp_path, **table):
    fixture = " ".join([sys.executable, FIXTURE, "--calls", str(tmp_path / "calls.jsonl")])
    dump = tmp_path / "child.env"
    server = {"command": "bash", "args": ["-c", f"env > {dump}; exec {fixture}"], **table}
    s = boot(callgate_session, tmp_path, {"fixture": server})
    assert not uc(s, action="call", capability_id="mcp-tool:fixture/structured").is_error
    s.close()
    return dict(line.split("=", 1) for line in dump.read_text().splitlines() if "=" in line)


def test_certificate_and_proxy_variables_pass_through_by_default(
        callgate_session, tmp_path, monkeypatch):
    monkeypatch.setenv("SSL_CERT_FILE", "/etc/ssl/custom.pem")
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.invalid:3128")
    monkeypatch.setenv("CALLGATE_TEST_SECRET", "do-not-pass")
    env = _child_env(callgate_session, tmp_path)
    assert env["SSL_CERT_FILE"] == "/etc/ssl/custom.pem"
    assert env["HTTPS_PROXY"] == "http://proxy.invalid:3128"
    assert "CALLGATE_TEST_SECRET" not in env  # only the listed names


def test_env_passthrough_is_configurable_and_env_wins(callgate_session, tmp_path, monkeypatch):
    monkeypatch.setenv("SSL_CERT_FILE", "/etc/ssl/custom.pem")
    monkeypatch.setenv("CALLGATE_TEST_TOKEN", "from-host")
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.invalid:3128")
    env = _child_env(callgate_session, tmp_path,
                     env_passthrough=["CALLGATE_TEST_TOKEN", "HTTPS_PROXY"],
                     env={"HTTPS_PROXY": "http://other.invalid:1"})
    assert env["CALLGATE_TEST_TOKEN"] == "from-host"
    assert env["HTTPS_PROXY"] == "http://other.invalid:1"
    assert "SSL_CERT_FILE" not in env  # the list replaces the default


def test_an_ordinary_child_takes_the_trusted_mcp_path(callgate_session, tmp_path):
    """Issue 36.10 (the contract's Unified Boot Surface): an ordinary writer-capable
    subagent calls a live, trusted server's destructive tool on live authorization plus
    explicit deny rules only, never the parent's ask fallback; a strict child still may
    not, and a deny rule still refuses."""
    from callgate import ChildProfile

    approver = Approver(allow=False)
    s = boot(callgate_session, tmp_path, {"fixture": fixture_server(tmp_path)},
             plugins=(approver,))
    assert not uc(s, action="call", capability_id="mcp-server:fixture").is_error  # live
    child = s.child()
    assert uc(child, action="call", capability_id="mcp-tool:fixture/wipe").text == "wiped"
    assert approver.asked == []
    # the parent itself still asks for a destructive tool
    assert uc(s, action="call", capability_id="mcp-tool:fixture/wipe").is_error
    assert approver.asked == ["mcp__fixture__wipe"]
    strict = s.child(ChildProfile(name="explore", read_only=True))
    assert uc(strict, action="call", capability_id="mcp-tool:fixture/wipe").error.kind == \
        "blocked"
    d = boot(callgate_session, tmp_path / "d", {"fixture": fixture_server(tmp_path)},
             plugins=(Approver(),),
             tables={"permissions": {"deny": ["mcp__fixture__wipe"]}})
    assert not uc(d, action="call", capability_id="mcp-server:fixture").is_error
    assert uc(d.child(), action="call", capability_id="mcp-tool:fixture/wipe").error.kind == \
        "blocked"
