"""Connecting MCP servers: gated, lazy, per session, stopped with the session (§5)."""

from __future__ import annotations

import json
import time

from callgate import Decision
from callgate_capability import MCP_SERVERS

from .helpers import (
    Approver,
    boot,
    calls_of,
    doc,
    fixture_server,
    gone,
    mcp_children,
    time_server,
    uc,
)


def test_denied_connect_is_blocked_and_spawns_nothing(callgate_session, tmp_path):
    """§9.7"""
    s = boot(callgate_session, tmp_path, {"fixture": fixture_server(tmp_path)},
             tables={"permissions": {"deny": ["mcp_connect__fixture"]}})
    r = uc(s, action="call", capability_id="mcp-server:fixture")
    assert r.error.kind == "blocked"
    assert r.error.signature == "deny:mcp_connect__fixture"
    assert "mcp_connect__fixture" in r.text
    deferred = uc(s, action="call", capability_id="mcp-tool:fixture/echo",
                  arguments={"text": "hi"})
    assert deferred.error.kind == "blocked"
    assert deferred.error.signature == "deny:mcp_connect__fixture"
    assert mcp_children() == {}
    assert not (tmp_path / "calls.jsonl").exists()
    listing = doc(uc(s, action="list"))
    assert listing["servers"] == [] and listing["omitted"]["denied"] == 1
    assert uc(s, action="inspect", capability_id="mcp-server:fixture").error.kind == \
        "unavailable"
    assert s.sync.counters()["remote_dispatches"] == 0


def test_connecting_time_lists_read_only_tools_and_writes_the_cache(callgate_session, tmp_path):
    """§9.8"""
    s = boot(callgate_session, tmp_path, {"time": time_server(env={"TZ_HINT": "UTC"})})
    r = doc(uc(s, action="call", capability_id="mcp-server:time"))
    assert r["source"] == "live" and r["status"] == "connected"
    assert {t["id"]: t["read_only"] for t in r["tools"]} == {
        "mcp-tool:time/convert_time": True, "mcp-tool:time/get_current_time": True}
    files = list((tmp_path / "cache" / "mcp").glob("*.json"))
    assert len(files) == 1
    cached = json.loads(files[0].read_text())
    assert cached["version"] == 1 and cached["server"] == "time"
    assert sorted(t["name"] for t in cached["tools"]) == ["convert_time", "get_current_time"]
    assert all(t["annotations"]["readOnlyHint"] is True for t in cached["tools"])
    assert set(cached) == {"version", "server", "saved_at", "server_info", "tools"}
    config = s.sync.extension(MCP_SERVERS).config("time")
    assert files[0].stem == config.identity
    assert "UTC" not in json.dumps(cached["server_info"])
    # a second call returns the live directory without a new process
    pid = s.sync.extension(MCP_SERVERS).pid("time")
    again = doc(uc(s, action="call", capability_id="mcp-server:time"))
    assert again["source"] == "live" and s.sync.extension(MCP_SERVERS).pid("time") == pid


def test_env_values_come_from_the_host_and_never_reach_the_cache(
        callgate_session, tmp_path, monkeypatch):
    monkeypatch.setenv("CAPTEST_SECRET", "s3cr3t-value")
    s = boot(callgate_session, tmp_path,
             {"fixture": fixture_server(tmp_path, env={"TOKEN": "${CAPTEST_SECRET}"})})
    doc(uc(s, action="call", capability_id="mcp-server:fixture"))
    [cache] = (tmp_path / "cache" / "mcp").glob("*.json")
    assert "s3cr3t" not in cache.read_text()
    missing = boot(callgate_session, tmp_path / "m",
                   {"fixture": fixture_server(tmp_path, env={"TOKEN": "${CAPTEST_MISSING}"})})
    r = uc(missing, action="call", capability_id="mcp-server:fixture")
    assert r.error.kind == "tool_error"
    assert 'MCP server "fixture" failed to start: env TOKEN uses ${CAPTEST_MISSING}, which is ' \
           "not set" in r.text


def test_pid_is_reused_across_batches_and_gone_after_close(callgate_session, tmp_path):
    """§9.15"""
    s = boot(callgate_session, tmp_path, {"fixture": fixture_server(tmp_path)})
    first = uc(s, action="call", capability_id="mcp-tool:fixture/pid")
    second = uc(s, action="call", capability_id="mcp-tool:fixture/pid")
    assert not first.is_error, first.text
    assert first.text == second.text
    pid = int(first.text)
    assert pid in mcp_children()
    s.close()
    assert gone(pid, within=10)
    assert mcp_children() == {}


def test_two_sessions_never_share_a_child(callgate_session, tmp_path):
    """§9.16"""
    a = boot(callgate_session, tmp_path, {"fixture": fixture_server(tmp_path)})
    b = callgate_session(host=a.host, workspace=a.workspace)
    pid_a = uc(a, action="call", capability_id="mcp-tool:fixture/pid").text
    pid_b = uc(b, action="call", capability_id="mcp-tool:fixture/pid").text
    assert pid_a.isdigit() and pid_b.isdigit() and pid_a != pid_b
    a.close()
    assert gone(int(pid_a))
    assert uc(b, action="call", capability_id="mcp-tool:fixture/pid").text == pid_b
    b.close()
    assert gone(int(pid_b))


def test_failed_start_reports_exit_code_and_stderr_then_retries(callgate_session, tmp_path):
    """§9.17"""
    session_dir = tmp_path / "sess"
    s = boot(callgate_session, tmp_path,
             {"fixture": fixture_server(tmp_path, "--fail-start", "boom")},
             session_dir=session_dir)
    r = uc(s, action="call", capability_id="mcp-server:fixture")
    assert r.error.kind == "tool_error"
    assert r.text.startswith('MCP server "fixture" failed to start: exited with code 3\n'
                             "stderr (last lines):\n")
    assert r.text.rstrip().endswith("boom")
    listing = doc(uc(s, action="list"))
    assert listing["servers"][0]["status"] == "failed"
    again = uc(s, action="call", capability_id="mcp-server:fixture")
    assert "exited with code 3" in again.text
    log = (session_dir / "mcp" / "fixture.stderr.log").read_text()
    assert log.count("boom") == 2  # the second call spawned the server again
    assert again.text.count("boom") == 1  # each answer shows its own attempt's stderr
    assert mcp_children() == {}


def test_startup_timeout_kills_the_child_and_says_so(callgate_session, tmp_path):
    """§9.18"""
    s = boot(callgate_session, tmp_path,
             {"fixture": fixture_server(tmp_path, "--sleep", "5", startup_timeout_s=1)})
    started = time.monotonic()
    r = uc(s, action="call", capability_id="mcp-server:fixture")
    elapsed = time.monotonic() - started
    assert "did not finish starting within 1 s" in r.text
    assert "stderr (last lines):\n(no stderr output)" in r.text
    assert elapsed < 4
    assert mcp_children() == {}
    assert doc(uc(s, action="list"))["servers"][0]["status"] == "failed"


def test_missing_command_is_named(callgate_session, tmp_path):
    """§9.19"""
    s = boot(callgate_session, tmp_path, {"nope": {"command": "no-such-binary-xyz"}})
    r = uc(s, action="call", capability_id="mcp-server:nope")
    assert r.error.kind == "tool_error"
    assert 'MCP server "nope" failed to start: command "no-such-binary-xyz" was not found' \
        in r.text
    assert uc(s, action="list").is_error is False


def test_server_disabled_during_approval_is_not_started(callgate_session, tmp_path):
    """§9.20"""
    def disable(call, session):
        session.extension(MCP_SERVERS).set_enabled("fixture", False)

    approver = Approver(on_ask=disable)
    s = boot(callgate_session, tmp_path, {"fixture": fixture_server(tmp_path)},
             plugins=(approver,), tables={"permissions": {"ask": ["mcp_connect__fixture"]}},
             session_dir=tmp_path / "sess")
    r = uc(s, action="call", capability_id="mcp-server:fixture")
    assert approver.asked == ["mcp_connect__fixture"]
    assert r.error.kind == "unavailable"
    assert 'MCP server "fixture" was disabled after the call was approved; nothing was ' \
           "started" in r.text
    assert r.meta["executed"] is False
    assert mcp_children() == {}
    assert not (tmp_path / "sess" / "mcp").exists()


def test_config_change_or_new_deny_after_approval_starts_nothing(callgate_session, tmp_path):
    def change_once(call, session):
        servers = session.extension(MCP_SERVERS)
        if "--pages" not in servers.config("fixture").args:
            servers.reconfigure("fixture", args=[*servers.config("fixture").args, "--pages", "2"])

    s = boot(callgate_session, tmp_path, {"fixture": fixture_server(tmp_path)},
             plugins=(Approver(on_ask=change_once),),
             tables={"permissions": {"ask": ["mcp_connect__fixture"]}})
    r = uc(s, action="call", capability_id="mcp-server:fixture")
    assert "configuration changed after resolution; call again" in r.text
    assert r.error.kind == "unavailable"
    assert mcp_children() == {}
    # the next call resolves against the new settings (a listing in two pages)
    ok = doc(uc(s, action="call", capability_id="mcp-server:fixture"))
    assert len(ok["tools"]) == 10
    s.close()

    def deny_now(call, session):
        # the user adds deny = ["mcp_connect__fixture"] while the prompt is open
        engine = session.host.permissions
        decide, by_name = engine.decide, engine.denied_by_name

        def denying(name, spec, arguments, sess=None):
            if name == "mcp_connect__fixture":
                return Decision("deny", "mcp_connect__fixture")
            return decide(name, spec, arguments, sess)

        def denied_by_name(name, spec=None):
            return "mcp_connect__fixture" if name == "mcp_connect__fixture" else \
                by_name(name, spec)

        engine.decide, engine.denied_by_name = denying, denied_by_name

    d = boot(callgate_session, tmp_path / "d", {"fixture": fixture_server(tmp_path)},
             plugins=(Approver(on_ask=deny_now),),
             tables={"permissions": {"ask": ["mcp_connect__fixture"]}})
    r = uc(d, action="call", capability_id="mcp-server:fixture")
    assert r.error.kind == "unavailable"
    assert "mcp_connect__fixture is now denied by rule mcp_connect__fixture; nothing was " \
           "started" in r.text
    assert mcp_children() == {}


def test_trusted_connect_under_ask_mode_needs_no_prompt_but_untrusted_does(
        callgate_session, tmp_path):
    approver = Approver(allow=False)
    s = boot(callgate_session, tmp_path, {"fixture": fixture_server(tmp_path),
                                          "other": fixture_server(tmp_path, trusted=False)},
             plugins=(approver,), tables={"permissions": {"mode": "ask"}})
    assert doc(uc(s, action="call", capability_id="mcp-server:fixture"))["status"] == \
        "connected"
    assert approver.asked == []
    r = uc(s, action="call", capability_id="mcp-server:other")
    assert approver.asked == ["mcp_connect__other"]
    assert r.error.kind == "blocked"
    assert len(mcp_children()) == 1


def test_auto_start_connects_in_the_background_when_allowed(callgate_session, tmp_path):
    s = boot(callgate_session, tmp_path,
             {"fixture": fixture_server(tmp_path, auto_start=True),
              "asked": fixture_server(tmp_path, auto_start=True, trusted=False)},
             tables={"permissions": {"ask": ["mcp_connect__asked"]}})
    deadline = time.monotonic() + 20
    servers = s.sync.extension(MCP_SERVERS)
    while time.monotonic() < deadline and servers.status("fixture") != "connected":
        time.sleep(0.05)
    listing = {x["id"]: x for x in doc(uc(s, action="list"))["servers"]}
    assert listing["mcp-server:fixture"]["status"] == "connected"
    assert listing["mcp-server:fixture"]["auto_start"] is True
    assert listing["mcp-server:asked"]["status"] == "configured"
    assert len(mcp_children()) == 1
    s.close()
    assert mcp_children() == {}


def test_an_approver_may_decline_a_connect(callgate_session, tmp_path):
    approver = Approver(allow=False)
    s = boot(callgate_session, tmp_path, {"fixture": fixture_server(tmp_path)},
             plugins=(approver,), tables={"permissions": {"ask": ["mcp_connect__fixture"]}})
    r = uc(s, action="call", capability_id="mcp-server:fixture")
    assert r.error.kind == "blocked"
    assert "was not approved" in r.text
    assert mcp_children() == {} and calls_of(tmp_path) == []
    assert isinstance(Decision("allow"), Decision)


def test_a_deferred_call_asks_once_when_the_connect_has_an_ask_rule(callgate_session, tmp_path):
    approver = Approver()
    s = boot(callgate_session, tmp_path, {"fixture": fixture_server(tmp_path)},
             plugins=(approver,), tables={"permissions": {"ask": ["mcp_connect__fixture"]}})
    r = uc(s, action="call", capability_id="mcp-tool:fixture/echo", arguments={"text": "x"})
    assert r.text == "x"
    assert approver.asked == ["mcp__fixture__echo"]  # one prompt: no second one to connect
    assert uc(s, action="call", capability_id="mcp-tool:fixture/echo",
              arguments={"text": "y"}).text == "y"
    assert approver.asked == ["mcp__fixture__echo"]  # connected: read-only echo just runs


def test_closing_the_session_during_a_start_stops_it_quickly(callgate_session, tmp_path):
    import threading

    s = boot(callgate_session, tmp_path, {"fixture": fixture_server(tmp_path, "--sleep", "20")})
    results = []
    worker = threading.Thread(target=lambda: results.append(
        uc(s, action="call", capability_id="mcp-server:fixture")))
    worker.start()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not mcp_children():
        time.sleep(0.05)
    assert mcp_children()
    started = time.monotonic()
    s.close()
    worker.join(10)
    assert time.monotonic() - started < 5
    assert results and results[0].is_error, results
    assert results[0].error.kind in ("cancelled", "tool_error")
    assert mcp_children() == {}
