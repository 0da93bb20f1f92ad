"""slash_command through the pipeline and callgate replay: files, skills, MCP prompts."""

from __future__ import annotations

import logging
from pathlib import Path

import callgate_skills
from callgate.testing import run_replay
from callgate_commands import COMMAND_NAMES

from .conftest import Approver, prompt_server_config, started_pids

REVIEW_PR = """---
description: Review a pull request
argument-hint: <pr-number> [focus]
allowed-tools: Bash(gh pr view:*)
---
Review pull request #$1 with focus on $2.
Full request: $ARGUMENTS. Budget: $$20. Never run: !`gh pr merge $1`
"""


def _skill(
    name: str, description: str = "a skill", body: str = "Skill body.", extra: str = ""
) -> str:
    return f"---\nname: {name}\ndescription: {description}\n{extra}---\n{body}\n"


def test_review_pr_expands_arguments_and_positions(commands):
    s = commands({".claude/commands/review-pr.md": REVIEW_PR})
    text = s.expect_ok(
        "slash_command", {"command": "/review-pr", "arguments": '42 "error handling"'}
    )
    assert text == (
        "Expanded /review-pr — follow these instructions now:\n\n"
        "Review pull request #42 with focus on error handling.\n"
        'Full request: 42 "error handling". Budget: $20. Never run: '
        "!`gh pr merge 42`"
    )


def test_review_pr_through_callgate_replay(tmp_path, home):
    ws = tmp_path / "ws"
    (ws / ".claude/commands").mkdir(parents=True)
    (ws / ".claude/commands/review-pr.md").write_text(REVIEW_PR)
    (ws / ".claude/skills/broken").mkdir(parents=True)
    (ws / ".claude/skills/broken/SKILL.md").write_text("---\nname: broken\n---\nno description\n")
    out = run_replay(
        [
            {"id": "l", "name": "slash_command", "arguments": {}},
            {
                "id": "e",
                "name": "slash_command",
                "arguments": {"command": "review-pr", "arguments": "7 speed"},
            },
        ],
        ws,
        "--surface",
        "full",
        env={"CALLGATE_LOAD_PLUGINS": "commands,skills", "HOME": str(home)},
    )
    listing, expanded = out
    assert not listing["is_error"] and not expanded["is_error"], out
    assert (
        "/review-pr <pr-number> [focus] — Review a pull request  "
        "(project · .claude/commands/review-pr.md)"
    ) in listing["content"]
    assert "Skipped:\n- " in listing["content"]
    assert ".claude/skills/broken/SKILL.md: description is required" in listing["content"]
    assert "Review pull request #7 with focus on speed." in expanded["content"]
    assert "Full request: 7 speed." in expanded["content"]


def test_listing_sources_subfolders_priority_and_skills(commands, home):
    (home / ".claude/commands").mkdir(parents=True)
    (home / ".claude/commands/mine.md").write_text("Home command first line\n\nbody\n")
    (home / ".claude/commands/shared.md").write_text("---\ndescription: from home\n---\nx\n")
    user = Path(callgate_skills.user_skills_dir()).parent / "commands"
    user.mkdir(parents=True)
    (user / "tool.md").write_text("---\ndescription: callgate user\n---\nx\n")
    s = commands(
        {
            ".claude/commands/shared.md": "---\ndescription: from .claude\n---\nx\n",
            ".callgate/commands/shared.md": "---\ndescription: from .callgate\n---\nx\n",
            ".claude/commands/frontend/lint.md": "# Lint the frontend\nrun the linter\n",
            ".claude/skills/shared/SKILL.md": _skill("shared", "a skill named like a command"),
            ".claude/skills/pdf/SKILL.md": _skill(
                "pdf", "Fill PDFs", "Fill $ARGUMENTS", "argument-hint: <file>\n"
            ),
        }
    )
    text = s.expect_ok("slash_command", {"command": "list"})
    assert "Slash commands (4):" in text
    assert "/shared — from .callgate  (project · .callgate/commands/shared.md)" in text
    assert "/frontend:lint — Lint the frontend  (project · .claude/commands/" in text
    assert (
        f"/mine — Home command first line  (claude-user · {home}/.claude/commands/mine.md)" in text
    )
    assert "/tool — callgate user  (user · " in text
    assert "Skills (1):\n/pdf <file> — Fill PDFs  (skill)" in text
    expanded = s.expect_ok("slash_command", {"command": "pdf", "arguments": "a.pdf"})
    assert expanded.startswith("Expanded /pdf — follow these instructions now:\n\n# Skill: pdf")
    assert "Fill a.pdf" in expanded
    shared = s.expect_ok("slash_command", {"command": "shared"})
    assert "Skill" not in shared  # the command wins over the skill
    s.expect_error("slash_command", {"command": "nope"}, kind="not_found")


def test_bad_front_matter_is_skipped_with_a_warning(commands, caplog):
    with caplog.at_level(logging.WARNING, logger="callgate.commands"):
        s = commands(
            {
                ".claude/commands/bad.md": "---\ndescription: [x\n---\nbody\n",
                ".claude/commands/good.md": "good one\n",
            }
        )
        text = s.expect_ok("slash_command", {})
    assert "/good — good one" in text and "/bad " not in text
    assert "Skipped:\n- " in text and ".claude/commands/bad.md" in text
    assert any(".claude/commands/bad.md" in r.getMessage() for r in caplog.records)


def test_install_skill_refuses_a_command_name(commands):
    s = commands({".claude/commands/deploy.md": "Deploy\n"})
    before = s.snapshot()
    s.expect_error(
        "install_skill",
        {"name": "deploy", "description": "d", "body": "b"},
        kind="invalid_arguments",
    )
    s.assert_unchanged(before)


def test_mcp_prompt_listed_without_start_then_expanded_after_the_gate(commands, tmp_path):
    started = tmp_path / "started.txt"
    config = {**prompt_server_config(started), "permissions": {"ask": ["mcp_connect__fx"]}}
    refuse = Approver(False)
    s = commands(config=config, plugins=(refuse,))
    text = s.expect_ok("slash_command", {})
    assert "/mcp:fx:… — prompts not listed yet" in text
    assert started_pids(started) == []
    err = s.expect_error(
        "slash_command", {"command": "mcp:fx:greet", "arguments": "Ana"}, kind="blocked"
    )
    assert refuse.asked == ["slash_command"] and "not approved" in err.text
    assert started_pids(started) == []  # refused: nothing started

    approve = Approver(True)
    s = commands(config=config, plugins=(approve,), workspace=s.workspace)
    text = s.expect_ok("slash_command", {"command": "mcp:fx:greet", "arguments": "Ana warmly"})
    assert approve.asked == ["slash_command"]
    assert text == (
        "Expanded /mcp:fx:greet — follow these instructions now:\n\n"
        "a greeting\n\n[user]\nGreet Ana warmly."
    )
    after = started_pids(started)
    assert after
    s.expect_error("slash_command", {"command": "mcp:fx:greet"}, kind="invalid_arguments")

    # a new session lists the prompts it saw, starting nothing
    s = commands(config=config, workspace=s.workspace)
    text = s.expect_ok("slash_command", {"command": "list"})
    assert "/mcp:fx:greet <name> [style] — Greet someone in a style  (MCP prompt)" in text
    assert "/mcp:fx:summary — Summarize the changes  (MCP prompt)" in text
    assert started_pids(started) == after
    assert "mcp:fx:greet" in s.session.extension(COMMAND_NAMES)()


def test_mcp_prompt_deny_rule_and_plan_mode_start_nothing(commands, tmp_path):
    started = tmp_path / "started.txt"
    s = commands(
        config={**prompt_server_config(started), "permissions": {"deny": ["mcp_connect__fx"]}}
    )
    err = s.expect_error("slash_command", {"command": "mcp:fx:summary"}, kind="blocked")
    assert "mcp_connect__fx" in err.text
    s = commands(config=prompt_server_config(started))
    s.session.set_mode("plan")
    s.expect_error("slash_command", {"command": "mcp:fx"}, kind="blocked")
    s.expect_ok("slash_command", {})  # listing is read-only, fine in plan mode
    assert started_pids(started) == []
    s.session.set_mode("default")
    text = s.expect_ok("slash_command", {"command": "mcp:fx"})  # mode allow: no prompt
    assert text.startswith("MCP prompts of fx (2):")
    assert len(started_pids(started)) == 1


def test_mcp_prompt_through_callgate_replay(tmp_path, home):
    started = tmp_path / "started.txt"
    ws = tmp_path / "ws"
    ws.mkdir()
    cfg = tmp_path / "callgate.toml"
    [table] = prompt_server_config(started)["mcp_servers"].values()
    args = ", ".join(f'"{a}"' for a in table["args"])
    cfg.write_text(
        f'[permissions]\nask = ["mcp_connect__fx"]\n\n[mcp_servers.fx]\n'
        f'command = "{table["command"]}"\nargs = [{args}]\n'
    )
    env = {"CALLGATE_LOAD_PLUGINS": "commands,capability", "HOME": str(home)}
    lines = [
        {"id": "l", "name": "slash_command", "arguments": {}},
        {
            "id": "g",
            "name": "slash_command",
            "arguments": {"command": "mcp:fx:greet", "arguments": "name=Bo style=loudly"},
        },
    ]
    denied = run_replay(lines, ws, "--surface", "full", "--config", str(cfg), env=env)
    assert "/mcp:fx:… — prompts not listed yet" in denied[0]["content"]
    assert denied[1]["is_error"] and denied[1]["error"]["kind"] == "blocked"
    assert started_pids(started) == []
    approved = run_replay(
        lines, ws, "--surface", "full", "--config", str(cfg), "--approve", "all", env=env
    )
    assert not approved[1]["is_error"], approved[1]
    assert "[user]\nGreet Bo loudly." in approved[1]["content"]
    assert started_pids(started)


def test_mode_ask_treats_a_trusted_server_like_a_connect(commands, tmp_path):
    started = tmp_path / "started.txt"
    s = commands(config={**prompt_server_config(started), "permissions": {"mode": "ask"}})
    text = s.expect_ok("slash_command", {"command": "mcp:fx:summary"})
    assert "[user]\nSummarize the diff.\n\n[assistant]\nSure." in text
    s = commands(
        config={**prompt_server_config(started, trusted=False), "permissions": {"mode": "ask"}}
    )
    s.expect_error("slash_command", {"command": "mcp:fx:summary"}, kind="blocked")
    assert len(started_pids(started)) == 1


def test_the_connect_gate_holds_through_use_capability(commands, tmp_path):
    started = tmp_path / "started.txt"
    s = commands(
        config={**prompt_server_config(started), "permissions": {"deny": ["mcp_connect__fx"]}},
        surface="lean",
    )
    assert not s.session.is_visible("slash_command")
    call = {
        "action": "call",
        "capability_id": "tool:slash_command",
        "arguments": {"command": "mcp:fx:summary"},
    }
    result = s.call("use_capability", call)
    assert result.is_error and result.error.kind == "blocked", result.text
    assert started_pids(started) == []
    listed = s.expect_ok("use_capability", {**call, "arguments": {}})
    assert "/mcp:fx:… — prompts not listed yet" in listed


def test_mode_deny_refuses_the_start_unless_a_connect_rule_allows_it(commands, tmp_path):
    """The slash command asks the capability plugin's one connect check (issue 31): the
    connect's rules and fallback decide, with the connect's advice."""
    started = tmp_path / "started.txt"
    s = commands(config={**prompt_server_config(started), "permissions": {"mode": "deny"}})
    err = s.expect_error("slash_command", {"command": "mcp:fx:summary"}, kind="blocked")
    assert "expanding a prompt of MCP server fx starts it" in err.text
    assert 'allow = ["mcp_connect__fx"]' in err.text and started_pids(started) == []
    s = commands(config={**prompt_server_config(started), "permissions": {
        "mode": "deny", "allow": ["mcp_connect__fx", "slash_command"]}})
    assert "[assistant]\nSure." in s.expect_ok("slash_command", {"command": "mcp:fx:summary"})
    assert len(started_pids(started)) == 1
