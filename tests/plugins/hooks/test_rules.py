"""Imported rules decide as the originals do on their own documentation's examples, and
``callgate rules check | explain | lint`` answer through subprocesses with their exit codes
(0 allow, 1 deny, 2 ask, 3 error).

The Claude Code settings file is the settings documentation's example; the Codex rules are the
execpolicy documentation's (``gh pr view`` with its ``match``/``not_match``, and ``git push``/
``fetch`` with alternatives). The expected decisions are what Claude Code and Codex decide
for those examples: Claude Code's default mode asks for what no rule allows; a Codex rule's
decision is ``prompt`` (ask) where its pattern is a prefix of the command, nothing otherwise.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from callgate import Host
from callgate.host import BootError

CLAUDE_SETTINGS = {
    "permissions": {
        "allow": ["Bash(npm run lint)", "Bash(npm run test:*)", "Read(~/.zshrc)"],
        "deny": ["Bash(curl:*)", "Read(./.env)", "Read(./.env.*)", "Read(./secrets/**)"],
    },
}
CODEX_RULES = '''\
# Prompt before running commands with the prefix `gh pr view` outside the sandbox.
prefix_rule(
    # The prefix to match.
    pattern = ["gh", "pr", "view"],

    # The action to take when Codex requests to run a matching command.
    decision = "prompt",

    # Optional rationale for why this rule exists.
    justification = "Viewing PRs is allowed with approval",

    # `match` and `not_match` are optional "inline unit tests" where you can
    # provide examples of commands that should (or should not) match this rule.
    match = [
        "gh pr view 7888",
        "gh pr view --repo openai/codex",
        "gh pr view 7888 --json title,body,comments",
    ],
    not_match = [
        # Does not match because the `pattern` must be an exact prefix.
        "gh pr --repo openai/codex view 7888",
    ],
)

prefix_rule(
    pattern = ["git", ["push", "fetch"]],
    decision = "prompt",  # allow | prompt | forbidden
    match = [["git", "push", "origin", "main"]],  # examples that must match
    not_match = [["git", "status"]],              # examples that must not match
)

prefix_rule(
    pattern = ["git", "reset", "--hard"],
    decision = "forbidden",
    justification = "Use `git stash` instead.",
)
'''
#: (command line, what Claude Code decides with the settings above)
CLAUDE_COMMANDS = [
    ("npm run lint", "allow"),
    ("npm run lint --fix", "ask"),  # Bash(npm run lint) is that exact command
    ("npm run test", "allow"),
    ("npm run test -- --watch", "allow"),
    ("curl https://example.com", "deny"),
    ("npm run build", "ask"),  # defaultMode default: no rule allows it
]
#: (tool call, what Claude Code decides): Read rules on the file tools
CLAUDE_READS = [
    ({"path": ".env"}, "deny"),
    ({"path": ".env.local"}, "deny"),
    ({"path": "secrets/api/key.txt"}, "deny"),
    ({"path": "README.md"}, "allow"),
]
#: (command line, Codex's decision: the strictest matching rule's, None when none matches)
CODEX_COMMANDS = [
    ("gh pr view 7888", "ask"),
    ("gh pr view --repo openai/codex", "ask"),
    ("gh pr view 7888 --json title,body,comments", "ask"),
    ("gh pr --repo openai/codex view 7888", None),
    ("git push origin main", "ask"),
    ("git fetch", "ask"),
    ("git status", None),
    ("git reset --hard HEAD~1", "deny"),
]


@pytest.fixture
def imported(tmp_path: Path, user_config: Path) -> Path:
    """A workspace, with the user config reading both settings files."""
    claude = tmp_path / "claude"
    claude.mkdir()
    (claude / "settings.json").write_text(json.dumps(CLAUDE_SETTINGS, indent=2))
    codex = tmp_path / "codex"
    (codex / "rules").mkdir(parents=True)
    (codex / "rules" / "default.rules").write_text(CODEX_RULES)
    (user_config / "config.toml").write_text(
        f'[claude_code]\nread = ["claude", "codex"]\nclaude_dir = {json.dumps(str(claude))}\n'
        f'codex_dir = {json.dumps(str(codex))}\n')
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


def rules_cli(ws: Path, *args: str) -> tuple[int, Any, str]:
    proc = subprocess.run([sys.executable, "-m", "callgate_cli", "rules", *args],
                          capture_output=True, text=True, timeout=120, cwd=ws,
                          env={**os.environ, "CALLGATE_LOAD_PLUGINS": "files,shell,hooks"})
    try:
        data = json.loads(proc.stdout) if "--json" in args else proc.stdout
    except ValueError:
        data = proc.stdout
    return proc.returncode, data, proc.stderr


EXIT = {"allow": 0, "deny": 1, "ask": 2}


@pytest.mark.parametrize(("line", "decision"), CLAUDE_COMMANDS)
def test_claude_code_settings_decide_as_claude_code(imported: Path, line: str,
                                                    decision: str) -> None:
    code, report, err = rules_cli(imported, "check", "--json", "--", line)
    assert code == EXIT[decision], (report, err)
    assert report["decision"] == decision
    if decision != "ask":
        assert "settings.json:" in report["decided_by"]  # the file and line that decided
    else:
        permission = next(s for s in report["stages"] if s["stage"] == "permission")
        assert "defaultMode 'default'" in permission["detail"]


@pytest.mark.parametrize(("arguments", "decision"), CLAUDE_READS)
def test_claude_code_read_rules_decide_as_claude_code(imported: Path, arguments: dict[str, Any],
                                                      decision: str) -> None:
    code, report, err = rules_cli(imported, "explain", "--json", "read_file",
                                  json.dumps(arguments))
    assert code == EXIT[decision], (report, err)
    # and under Claude Code's own name and key
    code, report, err = rules_cli(imported, "explain", "--json", "Read",
                                  json.dumps({"file_path": arguments["path"]}))
    assert code == EXIT[decision], (report, err)
    assert report["tool"] == "read_file"


@pytest.mark.parametrize(("line", "decision"), CODEX_COMMANDS)
def test_codex_rules_decide_as_codex(imported: Path, line: str, decision: str | None) -> None:
    code, report, _err = rules_cli(imported, "check", "--json", "--", line)
    codex_rules = [c for c in report["commands"] if c["rule"] and "default.rules" in c["rule"]]
    if decision is None:
        assert codex_rules == [], report  # no Codex rule speaks; the fallback decides
    else:
        assert [c["decision"] for c in codex_rules] == [decision], report
        assert code == EXIT[decision]
    if decision == "deny":
        assert "Use `git stash` instead." in report["message"]


def test_unexpressible_rules_are_listed_at_boot(tmp_path: Path, user_config: Path) -> None:
    claude = tmp_path / "claude"
    claude.mkdir()
    (claude / "settings.json").write_text(json.dumps({"permissions": {
        "allow": ["Task(Explore)", "WebSearch", "Bash(git status:*)"],
        "deny": ["Write(src/**)", "Read(./.env)", "mcp__github"],
        "defaultMode": "acceptEdits", "additionalDirectories": ["../docs"]}}, indent=2))
    codex = tmp_path / "codex"
    (codex / "rules").mkdir(parents=True)
    (codex / "rules" / "x.rules").write_text(
        'load("//other.star", "thing")\nPATTERN = ["rm"]\nprefix_rule(pattern = PATTERN)\n'
        'prefix_rule(pattern = ["echo", "a b"], decision = "allow")\n'
        'host_executable(name = "git", paths = ["/usr/bin/git"])\n')
    (user_config / "config.toml").write_text(
        f'[claude_code]\nread = ["claude", "codex"]\nclaude_dir = {json.dumps(str(claude))}\n'
        f'codex_dir = {json.dumps(str(codex))}\n')
    host = Host.boot({}, surface="full")
    report = "\n".join(host.warnings)
    settings = str(claude / "settings.json")
    rules = str(codex / "rules" / "x.rules")
    for fragment in (
            f"{settings}:4: allow rule 'Task(Explore)': Task(Explore): callgate's task has no "
            "such spec; an allow rule is not imported",
            f"{settings}:5: allow rule 'WebSearch': callgate has no WebSearch tool",
            f"{settings}:9: deny rule 'Write(src/**)': Write(...) deny covers every structured "
            "edit",
            f"{settings}:10: deny rule 'Read(./.env)': Read(./.env) applies to read_file, "
            "view_image and ls; grep and glob",
            "acceptEdits: structured edits are allowed",
            "additionalDirectories '../docs': not applied",
            f"{rules}:1: not read: callgate takes only prefix_rule(...)",
            f"{rules}:2: not read",
            f"{rules}:3: not read: prefix_rule(...) must have literal arguments",
            f"{rules}:4: allow rule 'echo a b': the words 'a b' are not plain shell words",
            f"{rules}:5: host_executable: not needed here"):
        assert fragment in report, f"{fragment!r} not in the boot report:\n{report}"


def test_a_codex_rule_whose_own_example_fails_fails_boot(tmp_path: Path,
                                                         user_config: Path) -> None:
    codex = tmp_path / "codex"
    (codex / "rules").mkdir(parents=True)
    (codex / "rules" / "bad.rules").write_text(
        'prefix_rule(\n    pattern = ["gh", "pr", "view"],\n    match = ["gh pr list"],\n)\n')
    (user_config / "config.toml").write_text(
        f'[claude_code]\nread = ["codex"]\ncodex_dir = {json.dumps(str(codex))}\n')
    with pytest.raises(BootError) as caught:
        Host.boot({}, surface="full")
    assert "bad.rules:1" in str(caught.value)
    assert "should match 'gh pr list'" in str(caught.value)


def test_rules_files_are_parsed_never_executed(tmp_path: Path, user_config: Path) -> None:
    marker = tmp_path / "pwned"
    codex = tmp_path / "codex"
    (codex / "rules").mkdir(parents=True)
    (codex / "rules" / "evil.rules").write_text(
        f'open({json.dumps(str(marker))}, "w").write("x")\n'
        f'prefix_rule(pattern = [__import__("os").system("touch {marker}")])\n'
        'prefix_rule(pattern = ["rm"], decision = "forbidden")\n')
    (user_config / "config.toml").write_text(
        f'[claude_code]\nread = ["codex"]\ncodex_dir = {json.dumps(str(codex))}\n')
    ws = tmp_path / "ws"
    ws.mkdir()
    code, report, _err = rules_cli(ws, "check", "--json", "--", "rm x")
    assert code == 1 and "evil.rules:3" in report["decided_by"]
    assert not marker.exists()


def test_match_and_not_match_on_callgates_own_rules_through_the_cli(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "callgate.toml").write_text(
        '[permissions]\ndeny = ["Bash(git push:*)"]\n\n[[permissions.examples]]\n'
        'rule = "Bash(git push:*)"\nmatch = ["git -C . push", "git status"]\n')
    code, _out, err = rules_cli(ws, "check", "--", "ls")
    assert code == 3
    assert 'should match "git status", but it does not' in err and "callgate.toml:6" in err


def test_lint_finds_what_never_matches(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    config = tmp_path / "rules.toml"  # an explicit config: its allow rules count
    config.write_text(
        '[permissions]\n'
        'allow = ["Bash(ls:*)", "Read(src/**)", "mcp__github__*", "Bash(npm test)"]\n'
        'deny = ["Bash", "Edit(docs/**)", "Edit(docs/a.md)"]\n')
    code, report, _err = rules_cli(ws, "lint", "--json", "--config", str(config))
    assert code == 1
    found = {(f["kind"], f["rule"]) for f in report["findings"]}
    assert ("shadowed", "allow:Bash(ls:*)") in found  # deny Bash decides first
    assert ("unknown-tool", "allow:Read(src/**)") in found
    assert ("literal-glob", "allow:mcp__github__*") in found
    assert ("exact-only", "allow:Bash(npm test)") in found
    assert ("shadowed", "deny:Edit(docs/a.md)") in found  # redundant after Edit(docs/**)
    messages = " ".join(f["message"] for f in report["findings"])
    assert "Claude Code's name; here it is read_file" in messages
    assert all(f["where"] and "rules.toml:" in f["where"] for f in report["findings"]
               if f["kind"] != "warning")
    config.write_text('[permissions]\ndeny = ["Bash(git push:*)"]\n')
    code, out, _err = rules_cli(ws, "lint", "--config", str(config))
    assert code == 0 and out.strip() == "no findings"


def test_exit_codes_and_errors(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    config = tmp_path / "rules.toml"
    config.write_text('[permissions]\nmode = "ask"\nallow = ["Bash(ls:*)"]\n'
                      'deny = ["Bash(rm:*)"]\n')
    c = ("--config", str(config))
    assert rules_cli(ws, "check", *c, "--", "ls", "-la")[0] == 0
    assert rules_cli(ws, "check", *c, "--", "rm", "-rf", "x")[0] == 1
    assert rules_cli(ws, "check", *c, "--", "make")[0] == 2
    assert rules_cli(ws, "explain", *c, "bash", '{"command": "ls"}')[0] == 0
    assert rules_cli(ws, "explain", *c, "write_file", '{"path": "a", "content": "b"}')[0] == 2
    code, _out, err = rules_cli(ws, "explain", *c, "bash", "{not json")
    assert code == 3 and "not JSON" in err
    assert rules_cli(ws, "explain", *c, "bash", '{"command": 3}')[0] == 1  # invalid: refused
    assert rules_cli(ws, "check", *c)[0] == 3
    assert rules_cli(ws, "bogus")[0] == 3
    config.write_text('[permissions]\nmode = "sometimes"\n')
    code, _out, err = rules_cli(ws, "check", *c, "--", "ls")
    assert code == 3 and "permissions.mode" in err
    code, _out, err = rules_cli(ws, "check", "--config", str(ws / "missing.toml"), "--", "ls")
    assert code == 3 and "missing.toml" in err
