"""Planner / Executor (``callgate.host.SessionPair``): independent frontends and ledgers over one
family's connections; the planner may use MCP tools without readOnlyHint but never a
destructive one; what it discovered stays callable by the executor after the handoff;
plan-mode write restrictions hold until approval (issue 22, item 4)."""

from __future__ import annotations

import callgate_capability
import callgate_files
import pytest
from callgate import sync
from callgate.host import SessionPair
from callgate.testing import CallgateSession
from callgate_capability import MCP_SERVERS

from tests.plugins.capability.helpers import calls_of, config, fixture_server, mcp_children


@pytest.fixture
def pair(callgate_session, tmp_path):
    s = callgate_session(
        plugins=[callgate_files, callgate_capability],
        files={"a.txt": "alpha\n"},
        config=config(tmp_path, {"fixture": fixture_server(tmp_path)}),
    )
    host = s.host

    async def open_pair():
        return SessionPair(host.host, s.workspace)

    p = host.portal.call(open_pair)
    planner = CallgateSession(host, sync.Session(host, p.planner), s.workspace)
    executor = CallgateSession(host, sync.Session(host, p.executor), s.workspace)
    yield p, planner, executor, s
    host.portal.call(p.close)


def uc(s, cap, **args):
    return s.call("use_capability", {"action": "call", "capability_id": cap, "arguments": args})


def test_the_planner_uses_mcp_tools_but_never_destructive_ones_or_writers(pair, tmp_path):
    p, planner, _executor, s = pair
    assert p.planner.mode == "plan" and p.executor.mode == "plan"
    assert not uc(planner, "mcp-server:fixture").is_error  # connecting is no write
    assert uc(planner, "mcp-tool:fixture/write_note", text="n").text  # no readOnlyHint: runs
    r = uc(planner, "mcp-tool:fixture/wipe")
    assert r.error.kind == "blocked" and r.error.signature == "profile:planner", r.text
    before = s.snapshot()
    r = planner.call("write_file", {"path": "b.txt", "content": "x"})
    assert r.error.kind == "blocked" and r.error.signature == "mode:plan"
    s.assert_unchanged(before)
    assert [c["name"] for c in calls_of(tmp_path)] == ["write_note"]


def test_what_the_planner_discovered_stays_callable_after_handoff(pair, tmp_path):
    p, planner, executor, s = pair
    assert not uc(planner, "mcp-server:fixture").is_error
    pid = uc(planner, "mcp-tool:fixture/pid").text
    # the executor never connected: the planner's live server is its own to call
    assert uc(executor, "mcp-tool:fixture/echo", text="hi").text == "hi"
    # independent frontends
    assert p.planner.extension(MCP_SERVERS) is not p.executor.extension(MCP_SERVERS)
    # a writer MCP tool waits for approval in the executor too
    r = uc(executor, "mcp-tool:fixture/write_note", text="early")
    assert r.error.kind == "blocked" and r.error.signature == "mode:plan"
    p.approve()
    s.host.portal.call(p.planner.close)
    assert uc(executor, "mcp-tool:fixture/pid").text.split("\n")[0] == pid  # same process
    assert list(mcp_children()) == [int(pid)]
    r = uc(executor, "mcp-tool:fixture/wipe")  # the executor has no planner profile
    assert r.error is None or r.error.signature != "profile:planner"


def test_writes_wait_for_approval_and_ledgers_are_isolated(pair):
    p, planner, executor, s = pair
    planner.expect_ok("read_file", {"path": "a.txt"})
    assert "a.txt" not in str(p.executor.observations())
    before = s.snapshot()
    r = executor.call("write_file", {"path": "b.txt", "content": "x"})
    assert r.error.kind == "blocked" and r.error.signature == "mode:plan"
    s.assert_unchanged(before)
    p.approve()
    text = executor.expect_ok("write_file", {"path": "b.txt", "content": "x"})
    assert "[plan approved]" in text
    assert s.read("b.txt") == b"x"
    r = planner.call("write_file", {"path": "c.txt", "content": "x"})
    assert r.error.kind == "blocked" and "[plan approved]" in r.text
    assert p.planner.id != p.executor.id
    facts = s.host.execution_facts()
    assert [(f.session, f.tool, f.outcome) for f in facts] == [(p.executor.id, "write_file", "ok")]


def test_replay_pair_plans_then_approves_then_executes(tmp_path) -> None:
    """Issue 36.12: `callgate replay --pair` reaches the planner/executor pair: a planner
    transcript, an approval line, an executor transcript."""
    import json
    import os
    import subprocess
    import sys

    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("alpha\n")
    lines = [
        {"id": "p1", "name": "read_file", "arguments": {"path": "a.txt"}},
        {"id": "p2", "name": "write_file", "arguments": {"path": "b.txt", "content": "x"}},
        {"mode": "default"},  # the planner never leaves plan mode
        {"approve": True},
        {"id": "e1", "name": "read_file", "arguments": {"path": "a.txt"}},
        {"id": "e2", "name": "edit_file",
         "arguments": {"path": "a.txt", "old_string": "alpha", "new_string": "beta"}},
    ]
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("".join(json.dumps(line) + "\n" for line in lines))
    env = {**os.environ, "CALLGATE_LOAD_PLUGINS": "files"}
    proc = subprocess.run([sys.executable, "-m", "callgate_cli", "replay", str(transcript),
                           "--workspace", str(ws), "--pair"], capture_output=True, text=True,
                          env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = [json.loads(line) for line in proc.stdout.splitlines()]
    sessions = [r["meta"]["session"] for r in out]
    assert sessions == ["planner", "planner", "planner", "executor", "executor"]
    p1, p2, bad, e1, e2 = out
    assert not p1["is_error"] and p2["error"]["signature"] == "mode:plan"
    assert bad["error"]["kind"] == "invalid_transcript" and bad["meta"]["line"] == 3
    assert not e1["is_error"] and not e2["is_error"], e2
    assert "[plan approved]" in e1["content"]
    assert e2["meta"]["line"] == 6
    assert (ws / "a.txt").read_text() == "beta\n" and not (ws / "b.txt").exists()
    refused = subprocess.run([sys.executable, "-m", "callgate_cli", "replay", str(transcript),
                              "--workspace", str(ws), "--pair", "--mode", "plan"],
                             capture_output=True, text=True, env=env, timeout=120)
    assert refused.returncode != 0 and "--pair" in refused.stderr
