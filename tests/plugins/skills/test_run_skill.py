"""run_skill and read_only_skill: inline rendered; subagent skills through a scripted runner,
with allowed-tools and strict read-only children enforced on the child's own calls."""

from __future__ import annotations

import json
from typing import Any

import callgate_files
import callgate_tasks
from callgate import ToolCall, hookimpl
from callgate_tasks import SubagentError, SubagentOutcome

from .conftest import skill_md


class ScriptedRunner:
    """Each child makes the calls ``script`` lists, in its own session, and answers with
    what they returned (kind or ok) as JSON."""

    def __init__(
        self, script: list[tuple[str, dict[str, Any]]], fail: Exception | None = None
    ) -> None:
        self.script = script
        self.fail = fail
        self.requests: list[Any] = []

    async def run(self, request: Any) -> Any:
        self.requests.append(request)
        if self.fail is not None:
            raise self.fail
        answers = []
        for i, (name, args) in enumerate(self.script):
            result = await request.session.run(ToolCall(f"c{i}", name, args))
            answers.append(
                [
                    name,
                    result.error.kind if result.is_error else "ok",
                    result.error.signature if result.is_error else None,
                ]
            )
        return SubagentOutcome(status="completed", answer=json.dumps(answers))


class Integration:
    __name__ = "skills_test_runner"

    def __init__(self, runner: Any) -> None:
        self.runner = runner

    @hookimpl
    def callgate_subagent_runner(self, session: Any) -> Any:
        return self.runner


WRITE = ("write_file", {"path": "out.txt", "content": "written\n"})
READ = ("read_file", {"path": "notes.md"})

FILES = {
    "notes.md": "# notes\n",
    ".claude/skills/audit/SKILL.md": skill_md(
        "audit", "Audit the code", "Audit carefully.", run_as="subagent", read_only=True
    ),
    ".claude/skills/fixer/SKILL.md": skill_md(
        "fixer", "Fix things", "Fix it.", run_as="subagent", allowed_tools=["Read", "Write"]
    ),
    ".claude/skills/reader/SKILL.md": skill_md(
        "reader", "Only reads", "Read it.", run_as="subagent", allowed_tools=["read_file"]
    ),
    ".claude/skills/tips/SKILL.md": skill_md("tips", "Tips", "Tip: $ARGUMENTS"),
}


def _session(skills, runner=None):
    plugins = (callgate_tasks, callgate_files) + ((Integration(runner),) if runner else ())
    return skills(FILES, plugins=plugins)


def _answer(result) -> list:
    text = result.text
    return json.loads(text.split("Final answer:\n", 1)[1])


def test_a_read_only_subagent_skill_cannot_write(skills):
    runner = ScriptedRunner([READ, WRITE])
    s = _session(skills, runner)
    before = s.snapshot()
    result = s.call("run_skill", {"name": "audit", "arguments": "check notes.md"})
    assert not result.is_error, result.text
    assert result.text.startswith("Subagent reference: sa_")
    read, write = _answer(result)
    assert read == ["read_file", "ok", None]
    assert write == ["write_file", "blocked", "profile:skill-audit"]
    s.assert_unchanged(before)
    [request] = runner.requests
    assert request.profile.read_only and request.task == "check notes.md"
    assert (
        "Audit carefully." in request.system_prompt and "# Task\ncheck notes.md" in request.prompt
    )


def test_read_only_skill_makes_any_subagent_skill_strict(skills):
    runner = ScriptedRunner([WRITE, READ])
    s = _session(skills, runner)
    s.session.set_mode("plan")  # read_only_skill is plan-safe
    result = s.call("read_only_skill", {"name": "fixer", "arguments": "fix"})
    write, read = _answer(result)
    assert write[1] == "blocked" and read[1] == "ok"
    assert not (s.workspace / "out.txt").exists()
    blocked = s.call("run_skill", {"name": "fixer", "arguments": "fix"})
    assert blocked.is_error and blocked.error.kind == "blocked"  # plan mode: run_skill writes


def test_allowed_tools_are_the_childs_tools(skills):
    runner = ScriptedRunner([READ, WRITE])
    s = _session(skills, runner)
    read, write = _answer(s.call("run_skill", {"name": "reader", "arguments": "go"}))
    assert read[1] == "ok" and write[1] == "blocked"
    runner.script = [WRITE]
    [write] = _answer(s.call("run_skill", {"name": "fixer", "arguments": "go"}))
    assert write == ["write_file", "ok", None]  # Claude Code's Write is write_file
    assert (s.workspace / "out.txt").read_text() == "written\n"


def test_inline_skills_render_and_errors_are_clear(skills):
    s = _session(skills)  # no runner
    assert "Tip: be brief" in s.expect_ok("run_skill", {"name": "tips", "arguments": "be brief"})
    assert "Tip: x" in s.expect_ok("read_only_skill", {"name": "tips", "arguments": "x"})
    err = s.expect_error("run_skill", {"name": "audit", "arguments": "a"}, kind="unavailable")
    assert "SKILL_NO_RUNNER" in err.text and "callgate_subagent_runner" in err.text
    s = _session(skills, ScriptedRunner([]))
    s.expect_error("run_skill", {"name": "audit"}, kind="invalid_arguments")
    s.expect_error("run_skill", {"name": "missing", "arguments": "a"}, kind="not_found")


def test_a_failed_child_can_be_continued(skills):
    runner = ScriptedRunner([], fail=SubagentError("provider_down", retryable=True))
    s = _session(skills, runner)
    failed = s.call("run_skill", {"name": "audit", "arguments": "a"})
    assert failed.is_error and "error_code=provider_down" in failed.text
    ref = failed.meta["subagents"][0]["ref"]
    runner.fail = None
    runner.script = [READ]
    again = s.call("run_skill", {"name": "audit", "arguments": "a", "continue_from": ref})
    assert not again.is_error and again.meta["subagents"][0]["ref"] == ref
    assert runner.requests[-1].continuation.ref == ref


def test_a_read_only_subagent_skill_cannot_write_through_callgate_replay(tmp_path, home):
    from callgate.testing import run_replay

    ws = tmp_path / "ws"
    for rel, text in FILES.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text)
    children = tmp_path / "children"
    children.mkdir()
    (children / "child-1.jsonl").write_text(
        json.dumps(
            {"id": "w", "name": "write_file", "arguments": {"path": "out.txt", "content": "x\n"}}
        )
        + "\n"
        + json.dumps({"id": "r", "name": "read_file", "arguments": {"path": "notes.md"}})
        + "\n"
    )
    [result] = run_replay(
        [
            {
                "id": "s",
                "name": "run_skill",
                "arguments": {"name": "audit", "arguments": "check notes"},
            }
        ],
        ws,
        "--surface",
        "full",
        "--subagents",
        str(children),
        env={"CALLGATE_LOAD_PLUGINS": "skills,tasks,files", "HOME": str(home)},
    )
    assert not result["is_error"], result
    assert "Subagent outcome: status=completed" in result["content"]
    assert "write_file (error): blocked: write_file is not allowed" in result["content"]
    assert "read_file: " in result["content"] and "# notes" in result["content"]
    assert not (ws / "out.txt").exists()
