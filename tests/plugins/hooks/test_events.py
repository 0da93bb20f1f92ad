"""Every event callgate has, through the pipeline (the ``callgate_session`` fixture): what each
hook gets and what its answer does. The hook commands are small shell lines that record their
input, so each test reads what the hook saw."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from callgate import ChildProfile
from callgate_hooks.plugin import EXTENSION
from callgate_workflow import Message
from werkzeug import Response

from tests.plugins.workflow.conftest import Integration, ListConversation, RecordingSummarizer

PLUGINS = ["files", "shell", "hooks"]


def hook(cmd: str, matcher: str | None = None, **extra: Any) -> list[dict[str, Any]]:
    group: dict[str, Any] = {"hooks": [{"type": "command", "command": cmd, **extra}]}
    if matcher is not None:
        group["matcher"] = matcher
    return [group]


def dump_to(path: Path, answer: str = "") -> str:
    """A hook that appends its stdin to ``path`` (one line per run) and prints ``answer``."""
    out = f"cat >> {json.dumps(str(path))}; echo >> {json.dumps(str(path))}"
    return out + (f"; echo {json.dumps(answer)}" if answer else "")


def runs(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def answer(event: str, **fields: Any) -> str:
    return json.dumps({"hookSpecificOutput": {"hookEventName": event, **fields}})


def test_permission_request_answers_the_ask(callgate_session: Any, tmp_path: Path) -> None:
    seen = tmp_path / "seen"
    allow = answer("PermissionRequest", decision={"behavior": "allow"})
    s = callgate_session(config={"permissions": {"mode": "ask"}, "hooks": {
        "PermissionRequest": hook(dump_to(seen, allow), "Write")}}, entrypoints=PLUGINS)
    s.expect_ok("write_file", {"path": "a.txt", "content": "x"})
    [payload] = runs(seen)
    assert payload["hook_event_name"] == "PermissionRequest"
    assert payload["tool_name"] == "Write" and payload["tool_input"]["content"] == "x"
    # without a matching hook, the ask has no approver
    s.expect_error("bash", {"command": "echo hi"}, kind="blocked", signature="mode:ask")
    deny = answer("PermissionRequest", decision={"behavior": "deny", "message": "not today"})
    s2 = callgate_session(config={"permissions": {"mode": "ask"}, "hooks": {
        "PermissionRequest": hook(f"echo {json.dumps(deny)}")}}, entrypoints=PLUGINS)
    refused = s2.expect_error("write_file", {"path": "a.txt", "content": "x"}, kind="blocked")
    assert "not today" in refused.text and not (s2.workspace / "a.txt").exists()


def test_session_start_context_reaches_the_model_and_session_end_runs(
        callgate_session: Any, tmp_path: Path) -> None:
    start, end = tmp_path / "start", tmp_path / "end"
    context = answer("SessionStart", additionalContext="the build is red; fix it first")
    s = callgate_session(config={"hooks": {
        "SessionStart": hook(dump_to(start, context), "startup"),
        "SessionEnd": hook(dump_to(end))}}, entrypoints=PLUGINS)
    text = s.expect_ok("bash", {"command": "echo hi"})
    assert "[SessionStart hook context] the build is red; fix it first" in text
    [payload] = runs(start)
    assert payload["source"] == "startup" and payload["session_id"] == s.session.id
    assert "the build is red" not in s.expect_ok("bash", {"command": "echo again"})  # once
    s.sync.close()
    [payload] = runs(end)
    assert payload["hook_event_name"] == "SessionEnd" and payload["reason"] == "other"


def test_subagent_start_and_stop_for_a_child_session(callgate_session: Any,
                                                     tmp_path: Path) -> None:
    start, stop = tmp_path / "start", tmp_path / "stop"
    s = callgate_session(config={"hooks": {
        "SubagentStart": hook(dump_to(start), "explore"),
        "SubagentStop": hook(dump_to(stop))}}, entrypoints=PLUGINS)
    child = s.child(ChildProfile(name="explore"))
    child.expect_ok("bash", {"command": "echo from child"})
    child.close()
    [started] = runs(start)
    assert started["agent_type"] == "explore" and started["agent_id"] == child.session.id
    [stopped] = runs(stop)
    assert stopped["hook_event_name"] == "SubagentStop" and stopped["agent_type"] == "explore"
    other = s.child(ChildProfile(name="review"))  # the matcher selects explore only
    other.close()
    assert len(runs(start)) == 1


def test_user_prompt_submit_for_an_integrator(callgate_session: Any, tmp_path: Path) -> None:
    script = ("p=$(cat); case \"$p\" in *password*) echo '{\"decision\": \"block\", \"reason\": "
              "\"no secrets in prompts\"}';; *) echo \"Current time: noon\";; esac")
    s = callgate_session(config={"hooks": {"UserPromptSubmit": hook(script)}},
                         entrypoints=PLUGINS)
    runner = s.session.extension(EXTENSION)
    ok = s.host.portal.call(runner.user_prompt_submit, "write the parser")
    assert not ok.blocked and ok.context == ("Current time: noon",)
    blocked = s.host.portal.call(runner.user_prompt_submit, "my password is hunter2")
    assert blocked.blocked and blocked.reason == "no secrets in prompts"
    assert blocked.context == ()


def test_pre_compact_may_block_compress(callgate_session: Any, tmp_path: Path) -> None:
    seen = tmp_path / "seen"
    messages = [Message("m1", "user", "set up", "human", 1),
                Message("m2", "assistant", "done", "synthetic", 1),
                Message("m3", "user", "next", "human", 2)]
    integration = Integration(ListConversation(messages, 2), RecordingSummarizer())
    guard = f"{dump_to(seen)}; echo 'not before the release' >&2; exit 2"
    s = callgate_session([integration], config={"hooks": {"PreCompact": hook(guard, "manual")}},
                         entrypoints=[*PLUGINS, "workflow"])
    refused = s.expect_error("compress", {"direction": "before", "anchor": "m3",
                                          "focus": "the parser"}, kind="blocked")
    assert "not before the release" in refused.text
    [payload] = runs(seen)
    assert payload["trigger"] == "manual" and payload["custom_instructions"] == "the parser"
    assert integration.conversation.records == []  # nothing was compressed


def test_an_http_hook(callgate_session: Any, httpserver: Any) -> None:
    deny = {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                   "permissionDecision": "deny",
                                   "permissionDecisionReason": "the policy server says no"}}
    httpserver.expect_request("/deny", method="POST").respond_with_json(deny)
    httpserver.expect_request("/down").respond_with_response(Response("boom", status=500))
    http = {"type": "http", "url": httpserver.url_for("/deny"),
            "headers": {"X-Token": "$HOOK_TOKEN"}, "allowedEnvVars": ["HOOK_TOKEN"]}
    s = callgate_session(config={"hooks": {"PreToolUse": [{"matcher": "Bash",
                                                           "hooks": [http]}]}},
                         entrypoints=PLUGINS)
    refused = s.expect_error("bash", {"command": "echo hi"}, kind="blocked")
    assert refused.text == "blocked: the policy server says no"
    [(request, _response)] = httpserver.log
    body = json.loads(request.data)
    assert body["tool_name"] == "Bash" and body["tool_input"] == {"command": "echo hi"}
    down = {"type": "http", "url": httpserver.url_for("/down")}
    s2 = callgate_session(config={"hooks": {"PreToolUse": [{"hooks": [down]}]}},
                          entrypoints=PLUGINS)
    result = s2.call("bash", {"command": "echo still runs"})
    assert result.text.startswith("still runs")  # fail-open
    assert "answered HTTP 500" in result.meta["hook_errors"][0]
    s3 = callgate_session(config={"hooks": {"PreToolUse": [{"hooks": [
        {**down, "fail_closed": True}]}]}}, entrypoints=PLUGINS)
    s3.expect_error("bash", {"command": "echo no"}, kind="blocked", contains="HTTP 500")


def test_if_once_and_async(callgate_session: Any, tmp_path: Path) -> None:
    only_rm, once, later = tmp_path / "only-rm", tmp_path / "once", tmp_path / "later"
    s = callgate_session(config={"hooks": {"PreToolUse": [
        {"matcher": "Bash", "hooks": [
            {"type": "command", "command": dump_to(only_rm), "if": "Bash(rm *)"},
            {"type": "command", "command": dump_to(once), "once": True},
            {"type": "command", "command": f"sleep 1; {dump_to(later)}", "async": True}]}]}},
        entrypoints=PLUGINS)
    started = time.monotonic()
    s.expect_ok("bash", {"command": "echo one"})
    assert time.monotonic() - started < 1  # the async hook is not waited for
    s.expect_ok("bash", {"command": "rm -f nothing"})
    assert [p["tool_input"]["command"] for p in runs(only_rm)] == ["rm -f nothing"]
    assert len(runs(once)) == 1
    for _ in range(100):
        if later.exists() and len(runs(later)) == 2:
            break
        time.sleep(0.05)
    assert len(runs(later)) == 2


@pytest.mark.parametrize(("output", "problem"), [
    ('{"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedToolOutput": "x"}}',
     "updatedToolOutput"),
    ('{"hookSpecificOutput": {"hookEventName": "PostToolUse"}}', "hookEventName"),
    ('{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "maybe"}}',
     "permissionDecision"),
    ('{"continue": "no"}', "continue"),
    ('{"decision": "allow"', "not valid JSON"),
])
def test_output_that_is_not_the_events_shape_is_an_error(callgate_session: Any, output: str,
                                                         problem: str) -> None:
    s = callgate_session(config={"hooks": {"PreToolUse": hook(f"echo {json.dumps(output)}")}},
                         entrypoints=PLUGINS)
    result = s.call("bash", {"command": "echo ran"})
    assert result.text.startswith("ran")  # fail-open
    [error] = result.meta["hook_errors"]
    assert problem in error, error
    closed = callgate_session(config={"hooks": {"PreToolUse": hook(
        f"echo {json.dumps(output)}", fail_closed=True)}}, entrypoints=PLUGINS)
    closed.expect_error("bash", {"command": "echo no"}, kind="blocked", contains=problem)


def test_continue_false_and_system_message_reach_the_integrator(callgate_session: Any) -> None:
    stop = json.dumps({"continue": False, "stopReason": "budget spent",
                       "systemMessage": "3 of 3 runs used"})
    s = callgate_session(config={"hooks": {"PostToolUse": hook(f"echo {json.dumps(stop)}")}},
                         entrypoints=PLUGINS)
    result = s.call("bash", {"command": "echo hi"})
    assert result.meta["continue"] is False and result.meta["stop_reason"] == "budget spent"
    assert result.meta["system_messages"] == ["3 of 3 runs used"]
    assert "budget spent" not in result.text  # for the user, not the model


def test_post_tool_use_failure_sees_the_error(callgate_session: Any, tmp_path: Path) -> None:
    seen = tmp_path / "seen"
    hint = answer("PostToolUseFailure", additionalContext="list the directory first")
    s = callgate_session(config={"hooks": {
        "PostToolUseFailure": hook(dump_to(seen, hint), "Read"),
        "PostToolUse": hook(f"echo never >> {json.dumps(str(tmp_path / 'post'))}", "Read")}},
        entrypoints=PLUGINS)
    failed = s.expect_error("read_file", {"path": "missing.txt"}, kind="not_found")
    assert "[PostToolUseFailure hook context] list the directory first" in failed.text
    [payload] = runs(seen)
    assert payload["hook_event_name"] == "PostToolUseFailure"
    assert "missing.txt" in payload["error"] and payload["is_interrupt"] is False
    assert "tool_response" not in payload and not (tmp_path / "post").exists()
