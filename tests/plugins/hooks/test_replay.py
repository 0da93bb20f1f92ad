"""Claude Code hook scripts (bash with jq, Python, Node, in the shape of Claude Code's own
documentation) run unchanged through ``callgate replay``: a settings.json of hooks read from
``[claude_code] claude_dir``, or ``[hooks]`` in callgate's config.

Each must-show of issue 33 is one test; where the plain pipeline would have let the call
through, the test runs it once without the plugin too (the control), so it fails without the
change."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import psutil
from callgate import Host

from .support import (
    bash,
    claude_home,
    command,
    group,
    hooks_of,
    needs_jq,
    needs_node,
    read_claude,
    replay,
    script,
    settings,
    user_config,
)


def _setup(tmp_path: Path, user: Path, hooks: dict, extra: str = "",
           permissions: dict | None = None) -> Path:
    home = claude_home(tmp_path, settings(hooks, permissions))
    user_config(user, read_claude(home, extra))
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    return ws


@needs_jq
def test_bash_guard_blocks_rm_rf_with_exit_2_the_model_reads_stderr(
        tmp_path: Path, user_config: Path) -> None:
    ws = _setup(tmp_path, user_config, {"PreToolUse": [
        group("Bash", command(script("block-rm-exit2.sh")))]})
    victim = ws / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("precious")
    results, _err = replay(ws, [bash("c1", "rm -rf victim"), bash("c2", "echo fine")])
    blocked = results["c1"]
    assert blocked["is_error"] and blocked["error"]["kind"] == "blocked"
    assert blocked["content"].startswith("blocked: Blocked: 'rm -rf' is not allowed by "
                                         "project policy")
    assert blocked["meta"]["executed"] is False
    assert (victim / "keep.txt").read_text() == "precious"  # nothing ran
    assert blocked["error"]["signature"].startswith("hook:hooks (")
    [run] = hooks_of(blocked)
    assert run["exit_code"] == 2 and run["blocked"].startswith("Blocked: 'rm -rf'")
    assert results["c2"]["content"].startswith("fine")
    # the control: without the plugin, the same transcript deletes it
    replay(ws, [bash("c1", "rm -rf victim")], plugins="files,shell")
    assert not victim.exists()


@needs_jq
def test_the_documentations_json_deny_and_python_validator(tmp_path: Path,
                                                           user_config: Path) -> None:
    ws = _setup(tmp_path, user_config, {"PreToolUse": [
        group("Bash", command(script("block-rm.sh")),
              command(f"python3 {script('bash_command_validator.py')}"))]})
    (ws / "f.txt").write_text("needle\n")
    results, _err = replay(ws, [bash("c1", "rm -rf nothing-here"),
                                bash("c2", "grep needle f.txt"),
                                bash("c3", "grep needle f.txt | head -1")])
    assert results["c1"]["content"] == "blocked: Destructive command blocked by hook"
    assert results["c2"]["is_error"]
    assert "Use 'rg' (ripgrep) instead of 'grep'" in results["c2"]["content"]
    assert "needle" in results["c3"]["content"] and not results["c3"]["is_error"]


@needs_node
def test_updated_input_rewrites_the_call_and_is_validated_again(tmp_path: Path,
                                                                 user_config: Path) -> None:
    ws = _setup(tmp_path, user_config, {"PreToolUse": [
        group("Bash", command(script("rewrite-input.js")))]})
    results, _err = replay(ws, [bash("c1", "echo one"),
                                bash("c2", "echo bad > ran.txt")])
    assert results["c1"]["content"].startswith("two") and not results["c1"]["is_error"]
    refused = results["c2"]
    assert refused["error"]["kind"] == "config_error", refused  # the hook's fault (36.4)
    assert "timeout_ms" in refused["content"]  # Claude Code's timeout is callgate's timeout_ms
    assert not (ws / "ran.txt").exists()


def test_edit_write_matcher_runs_the_formatter_after_the_tool(tmp_path: Path,
                                                              user_config: Path) -> None:
    ws = _setup(tmp_path, user_config, {"PostToolUse": [
        group("Edit|Write", command(f"python3 {script('markdown_formatter.py')}"))]})
    text = "# Notes\n\n\n\n```\ndef f():\n    return 1\n```\n"
    results, _err = replay(ws, [
        {"id": "w", "name": "write_file", "arguments": {"path": "notes.md", "content": text}},
        bash("b", "echo not-an-edit")])
    formatted = (ws / "notes.md").read_text()
    assert "```python\n" in formatted and "\n\n\n" not in formatted
    [run] = hooks_of(results["w"])
    assert run["event"] == "PostToolUse" and run["exit_code"] == 0
    assert hooks_of(results["b"]) == []  # Bash is not Edit|Write
    replay(ws, [{"id": "w", "name": "write_file",
                 "arguments": {"path": "plain.md", "content": text}}], plugins="files,shell")
    assert (ws / "plain.md").read_text() == text  # the control: nothing formats it


@needs_jq
def test_additional_context_is_delivered_with_the_result(tmp_path: Path,
                                                         user_config: Path) -> None:
    ws = _setup(tmp_path, user_config, {"PreToolUse": [
        group("Bash", command(script("add-context.sh")))]})
    results, _err = replay(ws, [bash("c1", "echo hi")])
    text = results["c1"]["content"]
    assert text.startswith("hi")
    assert "[PreToolUse hook context] Environment: hooks-test; the command was: echo hi" in text


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_a_hook_that_times_out_is_killed_fail_open_then_fail_closed(
        tmp_path: Path, user_config: Path) -> None:
    child = tmp_path / "child.pid"
    env = {"HOOK_CHILD_PID": str(child)}
    ws = _setup(tmp_path, user_config, {"PreToolUse": [
        group("Bash", command(script("slow.sh"), timeout=1))]})
    started = time.monotonic()
    results, _err = replay(ws, [bash("c1", "echo ran > ran.txt")], env=env)
    assert time.monotonic() - started < 120
    assert (ws / "ran.txt").exists()  # fail-open: a non-blocking error
    assert any("timed out after 1 s" in e for e in results["c1"]["meta"]["hook_errors"])
    pid = int(child.read_text())
    for _ in range(50):
        if not _alive(pid):
            break
        time.sleep(0.1)
    assert not _alive(pid), "the hook's own child outlived its timeout"
    (ws / "ran.txt").unlink()
    ws2 = _setup(tmp_path, user_config, {"PreToolUse": [
        group("Bash", command(script("slow.sh"), timeout=1, fail_closed=True))]})
    results, _err = replay(ws2, [bash("c1", "echo ran > ran.txt")], env=env)
    assert results["c1"]["error"]["kind"] == "blocked"
    assert "timed out after 1 s" in results["c1"]["content"]
    assert "fail_closed" in results["c1"]["content"]
    assert not (ws2 / "ran.txt").exists()


def test_a_hook_that_crashes_is_fail_open_unless_fail_closed(tmp_path: Path,
                                                              user_config: Path) -> None:
    crash = command(f"python3 {script('crash.py')}")
    ws = _setup(tmp_path, user_config, {"PreToolUse": [group("Bash", crash)]})
    results, _err = replay(ws, [bash("c1", "echo ran > ran.txt")])
    assert (ws / "ran.txt").exists()
    [error] = results["c1"]["meta"]["hook_errors"]
    assert "exited with status 1" in error and "KeyError" in error
    (ws / "ran.txt").unlink()
    # fail_closed from [claude_code] (every hook's default) this time
    _setup(tmp_path, user_config, {"PreToolUse": [group("Bash", crash)]},
           extra="fail_closed = true\n")
    results, _err = replay(ws, [bash("c1", "echo ran > ran.txt")])
    assert results["c1"]["error"]["kind"] == "blocked"
    assert "KeyError" in results["c1"]["content"] and not (ws / "ran.txt").exists()


@needs_jq
def test_a_project_hook_of_an_untrusted_workspace_is_not_run_and_said(
        tmp_path: Path, user_config: Path) -> None:
    home = claude_home(tmp_path, "{}")
    ws = tmp_path / "ws"
    (ws / ".claude").mkdir(parents=True)
    marker = tmp_path / "marker"
    (ws / ".claude" / "settings.json").write_text(settings({"PreToolUse": [group(
        "Bash", command(f"echo ran >> {json.dumps(str(marker))}"))]}))
    user_config_text = read_claude(home)
    (user_config / "config.toml").write_text(user_config_text)
    results, err = replay(ws, [bash("c1", "echo hi")])
    assert not marker.exists()
    assert not results["c1"]["is_error"]
    assert ".claude/settings.json define hooks or rules; none of them runs or applies, because " \
        "the workspace is not trusted" in err
    # the positive control: the user config trusts the workspace, the hook runs
    (user_config / "config.toml").write_text(
        user_config_text + f"\n[trust]\nworkspaces = [{json.dumps(str(ws))}]\n")
    replay(ws, [bash("c1", "echo hi")])
    assert marker.read_text() == "ran\n"


@needs_node
def test_updated_tool_output_is_shape_checked(tmp_path: Path, user_config: Path) -> None:
    redact = command(script("redact-output.js"))
    ws = _setup(tmp_path, user_config, {"PostToolUse": [group("Bash", redact)]})
    results, _err = replay(ws, [bash("c1", "echo the secret-abc123 here")])
    assert results["c1"]["content"].startswith("the [redacted] here")
    assert "secret-abc123" not in results["c1"]["content"]
    # a shape that is not Bash's tool_response: an error, never silently dropped
    results, _err = replay(ws, [bash("c1", "echo the secret-abc123 here")],
                           env={"REDACT_BROKEN": "1"})
    [error] = results["c1"]["meta"]["hook_errors"]
    assert "updatedToolOutput does not have the shape of Bash's tool_response" in error
    assert "secret-abc123" in results["c1"]["content"]  # fail-open: the output stays
    _setup(tmp_path, user_config, {"PostToolUse": [group("Bash", {**redact,
                                                                  "fail_closed": True})]})
    results, _err = replay(ws, [bash("c1", "echo the secret-abc123 here")],
                           env={"REDACT_BROKEN": "1"})
    assert results["c1"]["error"]["kind"] == "blocked"
    assert "secret-abc123" not in results["c1"]["content"]
    assert "output is withheld" in results["c1"]["content"]


@needs_jq
def test_a_hook_allow_skips_the_ask_but_never_lifts_a_deny_rule(tmp_path: Path,
                                                                 user_config: Path) -> None:
    allow = group("Bash", command(script("add-context.sh")))
    ws = _setup(tmp_path, user_config, {"PreToolUse": [allow]},
                extra='\n[permissions]\nmode = "ask"\n')
    results, _err = replay(ws, [bash("c1", "echo allowed")])
    assert results["c1"]["content"].startswith("allowed")  # no approver, yet it ran
    replay_without, _err = replay(ws, [bash("c1", "echo allowed")], plugins="files,shell")
    assert replay_without["c1"]["error"]["kind"] == "blocked"  # the control: it asks
    _setup(tmp_path, user_config, {"PreToolUse": [allow]},
           extra='\n[permissions]\ndeny = ["Bash(echo:*)"]\n')
    results, _err = replay(ws, [bash("c1", "echo denied > d.txt")])
    assert results["c1"]["error"]["signature"] == "deny:Bash(echo:*)"
    assert not (ws / "d.txt").exists()


def test_callgate_config_hooks_and_the_record(tmp_path: Path, user_config: Path) -> None:
    log = tmp_path / "log.txt"
    (user_config / "config.toml").write_text(
        '[[hooks.PreToolUse]]\nmatcher = "Bash"\n'
        f'hooks = [{{type = "command", command = {json.dumps(script("log-commands.sh"))}}}]\n')
    ws = tmp_path / "ws"
    ws.mkdir()
    results, _err = replay(ws, [bash("c1", "echo one", description="says one")],
                           env={"HOOK_LOG": str(log)})
    assert log.read_text() == "echo one - says one\n"
    [run] = hooks_of(results["c1"])
    assert run["source"].startswith("hooks (") and "config.toml:1" in run["source"]
    host = Host.boot({}, user_config=False)
    store = host.store
    [info] = [s for s in store.sessions() if s.workspace == str(ws)]
    state = store.state(info.id)
    [recorded] = state[("hooks", "c1")]
    assert recorded["event"] == "PreToolUse" and recorded["exit_code"] == 0


def test_hook_environment_and_input_shape(tmp_path: Path, user_config: Path) -> None:
    dump = tmp_path / "input.json"
    env_dump = tmp_path / "env.txt"
    hook = command(f"cat > {json.dumps(str(dump))}; echo \"$CLAUDE_PROJECT_DIR|"
                   f"${{SECRET_TOKEN:-}}\" > {json.dumps(str(env_dump))}")
    ws = _setup(tmp_path, user_config, {"PreToolUse": [group("Write", hook)]})
    results, _err = replay(ws, [{"id": "w1", "name": "write_file",
                                 "arguments": {"path": "a.txt", "content": "x"}}],
                           env={"SECRET_TOKEN": "s3cr3t"})
    assert not results["w1"]["is_error"]
    payload = json.loads(dump.read_text())
    assert payload["hook_event_name"] == "PreToolUse" and payload["tool_name"] == "Write"
    assert payload["tool_input"] == {"file_path": str(ws / "a.txt"), "content": "x"}
    assert payload["tool_use_id"] == "w1" and payload["cwd"] == str(ws)
    assert set(payload) >= {"session_id", "transcript_path", "permission_mode"}
    # the door's environment: the project dir set, credentials filtered out
    assert env_dump.read_text().strip() == f"{ws}|"
    assert os.environ.get("SECRET_TOKEN") is None
