"""The command line a newcomer meets first (issue 25 items 9-14), run as subprocesses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .test_replay_cli import run_cli

BUILTIN = {"CALLGATE_LOAD_PLUGINS": "files,search,workflow,goals,capability"}


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    w = tmp_path / "ws"
    w.mkdir()
    (w / "a.txt").write_text("one two three\n")
    return w


def _result(stdout: str) -> dict:
    return json.loads(stdout)


# --- item 9: call's workspace and exit status ---------------------------------------------


def test_call_with_a_missing_workspace_says_so_and_exits_2(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    proc = run_cli("call", "word_count", '{"path": "a.txt"}', "--workspace", str(missing))
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"callgate: workspace {missing} is not a directory"
    assert "Traceback" not in proc.stderr and proc.stdout == ""


def test_call_exits_1_on_an_error_result_and_0_on_success(ws: Path) -> None:
    ok = run_cli("call", "word_count", '{"path": "a.txt"}', "--workspace", str(ws))
    assert ok.returncode == 0, ok.stderr
    assert _result(ok.stdout)["content"] == "3"
    bad = run_cli("call", "word_count", '{"path": "missing.txt"}', "--workspace", str(ws))
    assert bad.returncode == 1
    assert _result(bad.stdout)["is_error"] is True


# --- item 10: help --------------------------------------------------------------------------


def test_help_is_plain_text_and_names_every_command() -> None:
    proc = run_cli("--help")
    assert proc.returncode == 0
    assert "``" not in proc.stdout
    for command in ("replay", "tools", "contract", "call", "plugins", "demo", "serve"):
        assert f"    {command} " in proc.stdout, command


@pytest.mark.parametrize(("command", "options"), [
    ("replay", ["--workspace", "--mode", "--approve", "--os", "--surface", "--config"]),
    ("contract", ["--write", "--check", "--path"]),
    ("call", ["name", "arguments", "--workspace", "--mode"]),
    ("tools", ["--provider", "--json"]),
])
def test_every_option_has_help_text(command: str, options: list[str]) -> None:
    proc = run_cli(command, "--help")
    assert proc.returncode == 0
    lines = proc.stdout.splitlines()
    for option in options:
        at = next(i for i, line in enumerate(lines)
                  if line.startswith(f"  {option}") and not line.startswith("   "))
        rest = lines[at].strip()[len(option):].split(maxsplit=1)
        described = (len(rest) > 1 and rest[1]) or (at + 1 < len(lines) and
                                                     lines[at + 1].startswith(" " * 10))
        assert described, f"{command} {option} has no help text"


def test_provider_choices_are_listed_and_openai_means_openai_chat() -> None:
    helped = run_cli("tools", "--help")
    # argparse may wrap inside a hyphenated name: compare without the whitespace
    assert ("openai-chat,openai-chat-strict,openai-responses,anthropic,gemini,mcp,"
            "anthropic-native,openai-responses-native,openai-chat-freeform") in \
        "".join(helped.stdout.split())
    openai = run_cli("tools", "--provider", "openai", "--os", "posix")
    chat = run_cli("tools", "--provider", "openai-chat", "--os", "posix")
    assert openai.returncode == 0, openai.stderr
    assert openai.stdout == chat.stdout and json.loads(openai.stdout)[0]["type"] == "function"
    wrong = run_cli("tools", "--provider", "bard")
    assert wrong.returncode == 2 and "choose from" in wrong.stderr


def test_verbose_works_before_and_after_the_command(tmp_path: Path) -> None:
    config = tmp_path / "callgate.toml"
    config.write_text("[surface]\nshow = [\"no_such_tool\"]\n")
    for argv in (["-v", "tools", "--config", str(config)],
                 ["tools", "--config", str(config), "-v"]):
        proc = run_cli(*argv)
        assert proc.returncode == 0, proc.stderr
        assert "no_such_tool" in proc.stderr, argv  # the boot warning is logged
    quiet = run_cli("tools", "--config", str(config))
    assert "no_such_tool" not in quiet.stderr


# --- item 11: did you mean -----------------------------------------------------------------


SUGGESTIONS = {
    "nope_tool": None,
    "Read_File": "did you mean read_file?",
    "readfile": "did you mean read_file?",
    "grep_search": 'did you mean use_capability with capability_id "tool:grep"?',
    # issue 36.7: close in meaning or spelling, and callable here
    "task": None,  # unavailable here (no integrator hook): not "ask", a look-alike
    "Task": None,
    "str_replace": "did you mean edit_file?",  # another agent's name for the same tool
    "shell": None,  # no shell plugin here: no look-alike either
    "view": "did you mean read_file?",
    "rread_file": "did you mean read_file?",
}


def test_did_you_mean_names_only_what_the_session_can_call(ws: Path, tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("".join(json.dumps({"id": name, "name": name, "arguments": {}}) + "\n"
                                  for name in SUGGESTIONS))
    proc = run_cli("replay", str(transcript), "--workspace", str(ws), env=BUILTIN)
    assert proc.returncode == 0, proc.stderr
    for line in proc.stdout.splitlines():
        result = json.loads(line)
        name, content = result["id"], result["content"]
        assert content.startswith(f'unknown tool "{name}"')
        suggestion = SUGGESTIONS[name]
        if suggestion is None:
            assert content == f'unknown tool "{name}"'
        else:
            assert content.endswith(suggestion)
    # the capability proxy follows the same rule: compos is not present
    via = json.dumps({"id": "c", "name": "use_capability", "arguments": {
        "action": "call", "capability_id": "tool:compos", "arguments": {}}})
    transcript.write_text(via + "\n")
    proc = run_cli("replay", str(transcript), "--workspace", str(ws), env=BUILTIN)
    assert proc.returncode == 0, proc.stderr
    content = json.loads(proc.stdout)["content"]
    assert '"compos"' in content and "present" not in content, content
    called = run_cli("call", "nope_tool", "{}", "--workspace", str(ws), env=BUILTIN)
    assert called.returncode == 1
    assert _result(called.stdout)["content"] == 'unknown tool "nope_tool"'


# --- item 12: arguments that are not JSON ----------------------------------------------------


def test_arguments_that_are_not_json_say_where_they_broke(ws: Path) -> None:
    proc = run_cli("call", "word_count", "{path:a}", "--workspace", str(ws))
    assert proc.returncode == 1
    text = _result(proc.stdout)["content"]
    assert ("- /: json; expected a JSON object of named arguments (got text that is not valid "
            "JSON: Expecting property name enclosed in double quotes at column 2)") in text
    assert "belong at the root" not in text
    assert "Send word_count's input as one JSON object" in text


# --- item 13: contract --check outside the repository ---------------------------------------


def test_contract_check_without_the_file_says_it_is_missing(tmp_path: Path) -> None:
    proc = run_cli("contract", "--check", cwd=str(tmp_path))
    assert proc.returncode == 1
    assert "docs/TOOL_CONTRACT.md is missing" in proc.stderr
    assert "differs" not in proc.stderr and len(proc.stderr.splitlines()) == 1


# --- item 14: one-line summaries --------------------------------------------------------------


def test_tools_summaries_do_not_stop_at_abbreviations() -> None:
    proc = run_cli("tools", "--surface", "full", "--os", "posix",
                   env={"CALLGATE_LOAD_PLUGINS": "search"})
    assert proc.returncode == 0, proc.stderr
    [glob] = [line for line in proc.stdout.splitlines() if line.startswith("glob ")]
    assert glob.endswith('e.g. "*.go", "cmd/*/main.go" or "**/*_test.py"')


# --- issue 36.9: null arguments are {} both ways -------------------------------------------


def test_null_arguments_through_the_proxy_are_empty_as_for_a_direct_call(ws: Path,
                                                                        tmp_path: Path) -> None:
    calls = [*({"id": f"via-{i}", "name": "use_capability",
                "arguments": {"action": "call", "capability_id": "tool:get_goal",
                              "arguments": inner}} for i, inner in enumerate([None, {}]))]
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("".join(json.dumps(c) + "\n" for c in calls))
    proc = run_cli("replay", str(transcript), "--workspace", str(ws), env=BUILTIN)
    assert proc.returncode == 0, proc.stderr
    results = {r["id"]: r for r in map(json.loads, proc.stdout.splitlines())}
    assert not results["via-1"]["is_error"], results["via-1"]
    assert results["via-0"]["content"] == results["via-1"]["content"]


# --- issue 36.6: one verdict directly and through the proxy -----------------------------------


def test_an_unhooked_tool_gets_the_same_verdict_directly_and_through_the_proxy(
        ws: Path, tmp_path: Path) -> None:
    """compress needs hooks only an integrator with a conversation implements: it is
    registered but not in the session, and both doors say so in the same words."""
    calls = [{"id": "direct", "name": "compress", "arguments": {}},
             {"id": "via", "name": "use_capability", "arguments": {
                 "action": "call", "capability_id": "tool:compress", "arguments": {}}}]
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("".join(json.dumps(c) + "\n" for c in calls))
    proc = run_cli("replay", str(transcript), "--workspace", str(ws), env=BUILTIN)
    assert proc.returncode == 0, proc.stderr
    direct, via = map(json.loads, proc.stdout.splitlines())
    reason = 'tool "compress" is not available in this session: it needs the '
    assert direct["is_error"] and direct["content"].startswith(reason), direct
    assert via["is_error"] and via["content"] == "capability unavailable: " + direct["content"]
    assert "which no loaded plugin implements" in direct["content"]
