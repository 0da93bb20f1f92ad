"""The plugin's pieces on their own: names at the boundary both ways, rule translation (never
wider than the original), matchers, settings files read with their lines, Codex's matching."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from callgate_hooks import _names as names
from callgate_hooks._codex_rules import codex_matches, read_rules_file
from callgate_hooks._output import interpret
from callgate_hooks._sources import USER, Handler, ImportedRule, Origin, read_claude_settings
from callgate_hooks._translate import translate_claude, translate_codex, translate_mode

ROOT = "/work/project"


def test_names_both_ways() -> None:
    assert names.to_claude("edit_file", {"path": "src/a.py", "old_string": "x",
                                         "new_string": "y"}, ROOT) == (
        "Edit", {"file_path": "/work/project/src/a.py", "old_string": "x", "new_string": "y"})
    assert names.to_claude("bash", {"command": "ls", "timeout_ms": 5000}, ROOT) == (
        "Bash", {"command": "ls", "timeout": 5000})
    assert names.to_claude("mcp__github__create_issue", {"title": "t"}, ROOT) == (
        "mcp__github__create_issue", {"title": "t"})
    assert names.to_claude("remember", {"body": "b"}, ROOT)[0] == "remember"
    # back: changed keys replace, Claude Code's keys map back, the model's path spelling stays
    original = {"path": "src/a.py", "old_string": "x", "new_string": "y"}
    assert names.from_claude("edit_file", {"file_path": "/work/project/src/a.py",
                                           "new_string": "z"}, original, ROOT) == {
        "path": "src/a.py", "old_string": "x", "new_string": "z"}
    assert names.from_claude("edit_file", {"file_path": "/work/project/src/b.py"}, original,
                             ROOT)["path"] == "/work/project/src/b.py"
    assert names.from_claude("bash", {"timeout": 1000, "extra": 1}, {"command": "ls"}, ROOT) == {
        "command": "ls", "timeout_ms": 1000, "extra": 1}  # validation refuses "extra"
    assert names.callgate_names("Read") == ["read_file", "view_image"]


def test_updated_tool_output_must_have_the_tools_shape() -> None:
    assert names.updated_output_text("bash", {"stdout": "a", "stderr": "b"}) == "a\nb"
    assert names.updated_output_text("read_file", {"file": {"content": "c"}}) == "c"
    assert names.updated_output_text("mcp__x__y", [{"type": "text", "text": "t"}]) == "t"
    for tool, value in (("bash", "a string"), ("bash", {"stdout": 3}),
                        ("read_file", {"content": "c"}), ("write_file", {"filePath": "p"})):
        with pytest.raises(ValueError, match="does not have the shape"):
            names.updated_output_text(tool, value)


def _rule(action: str, text: str) -> ImportedRule:
    return ImportedRule(action, text, Origin("/s.json", 1), USER, "claude")


@pytest.mark.parametrize(("action", "text", "rules", "exact"), [
    ("deny", "Bash(curl:*)", ("Bash(curl:*)",), True),
    ("allow", "Bash", ("Bash",), True),
    ("deny", "Read(./.env)", ("read_file(.env)", "view_image(.env)", "ls(.env)"), False),
    ("deny", "Read(*.env)", ("read_file(**/*.env)", "view_image(**/*.env)", "ls(**/*.env)"),
     False),
    ("allow", "Edit(/src/**)", ("Edit(src/**)",), True),
    ("deny", "Edit(//etc/**)", ("Edit(/etc/**)",), True),
    ("allow", "Write(docs/*.md)", ("write_file(docs/*.md)",), True),
    ("deny", "Write(docs/*.md)", ("Edit(docs/*.md)",), False),  # broader
    ("allow", "WebFetch(domain:example.com)", ("web_fetch(domain:example.com)",), True),
    ("allow", "Task(Explore)", (), False),  # an allow that would allow more: not imported
    ("deny", "Task(Explore)", ("task",), False),  # a deny covering more
    ("allow", "mcp__github__create_issue", ("mcp__github__create_issue",), True),
    ("allow", "WebSearch", (), False),
])
def test_claude_rules_translate_never_wider(action: str, text: str, rules: tuple[str, ...],
                                            exact: bool) -> None:
    found = translate_claude(_rule(action, text))
    assert found.rules == rules
    assert (found.note is None) == exact, found.note


def test_a_whole_mcp_server_is_a_prefix() -> None:
    for text in ("mcp__github", "mcp__github__*"):
        found = translate_claude(_rule("deny", text))
        assert found.prefixes == ("mcp__github__",) and found.note is None


def test_codex_patterns() -> None:
    rule = ImportedRule("ask", "git [push|fetch]", Origin("/r", 1), USER, "codex",
                        pattern=("git", ("push", "fetch")))
    assert translate_codex(rule).rules == ("Bash(git push:*)", "Bash(git fetch:*)")
    odd = ImportedRule("allow", "echo a b", Origin("/r", 2), USER, "codex",
                       pattern=("echo", "a b"))
    assert translate_codex(odd).rules == () and translate_codex(odd).note
    assert codex_matches(("gh", "pr", "view"), ["gh", "pr", "view", "7888"])
    assert not codex_matches(("gh", "pr", "view"), ["gh", "pr", "--repo", "x", "view"])
    assert codex_matches(("git", ("push", "fetch")), ["git", "fetch"])


def test_modes_never_loosen() -> None:
    assert translate_mode("defaultMode", "default").fallback == "ask"
    assert translate_mode("defaultMode", "dontAsk").fallback == "deny"
    assert translate_mode("defaultMode", "plan").plan
    assert translate_mode("defaultMode", "bypassPermissions").fallback is None
    assert translate_mode("sandbox_mode", "read-only").plan
    assert translate_mode("approval_policy", "untrusted").fallback == "ask"


def test_matchers() -> None:
    def handler(matcher: str | None) -> Handler:
        return Handler("PreToolUse", "command", USER, Origin("/s"), matcher=matcher,
                       command="true")

    assert handler(None).matches("Bash") and handler("*").matches("Read")
    assert handler("Edit|Write").matches("Write") and not handler("Edit|Write").matches("Read")
    assert not handler("Write").matches("NotebookWrite")  # a plain name is exact
    assert handler("Notebook.*").matches("NotebookEdit")
    assert handler("mcp__memory__.*").matches("mcp__memory__create_entities")


def test_settings_files_are_read_with_their_lines(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": "a.sh"}, {"type": "prompt", "prompt": "ok?"}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "b.sh"}]}]},
        "permissions": {"deny": ["Bash(rm:*)"], "bogus": 1}}, indent=2))
    found = read_claude_settings(str(path), USER)
    [handler] = found.handlers
    assert handler.command == "a.sh" and handler.origin.line == 7
    notes = [str(n) for n in found.notes]
    assert any(":11: this prompt hook is not run" in n for n in notes), notes
    assert any(":18: Stop hooks are not run" in n for n in notes), notes
    assert any(":33: permissions.bogus is not understood" in n for n in notes), notes
    [rule] = found.rules
    assert rule.origin.line == 31
    bad = tmp_path / "bad.json"
    bad.write_text('{"hooks": {\n  "PreToolUse": [,]\n}}')
    [note] = read_claude_settings(str(bad), USER).notes
    assert note.origin.line == 2 and "not valid JSON" in note.text


def test_exit_codes() -> None:
    assert interpret("PreToolUse", 2, "", "no!\n").blocked == "no!"
    assert interpret("PostToolUse", 2, "", "look again").feedback == "look again"
    assert interpret("PreToolUse", 1, "", "boom").error == "exited with status 1: boom"
    assert interpret("PreToolUse", 0, "hello", "").blocked is None
    assert interpret("SessionStart", 0, "hello", "").context == "hello"
    legacy = interpret("PreToolUse", 0, '{"decision": "block", "reason": "old form"}', "")
    assert legacy.decision == "deny" and legacy.blocked == "old form"


def test_rules_files_take_literals_only(tmp_path: Path) -> None:
    path = tmp_path / "x.rules"
    path.write_text('prefix_rule(["ls"], "allow")\nprefix_rule(pattern=["rm"] + ["-rf"])\n'
                    'def f():\n    pass\n')
    found = read_rules_file(str(path), USER)
    assert [r.text for r in found.rules] == ["ls"]
    assert [n.origin.line for n in found.notes] == [2, 3]
