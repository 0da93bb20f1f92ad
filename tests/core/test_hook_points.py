"""The core's hook points for hook runners and rule tests (issue 33): awaitable pre-tool-use
answers, ``callgate_post_tool_use``, a session's stricter fallback, ``[permissions]
examples``, `callgate.rules` (explain, per-command verdicts, rule sets) and protected paths a
plugin declares."""

from __future__ import annotations

import asyncio
import gc
import warnings
from pathlib import Path
from typing import Any

import anyio
import pytest
from callgate import (
    Host,
    PermissionSubject,
    Registry,
    ToolCall,
    ToolResult,
    ToolSpec,
    hookimpl,
)
from callgate import rules as cg_rules
from callgate.hookspecs import Refuse, Replace
from callgate.host import ConfigError

SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"],
          "additionalProperties": False}


class Notes:
    """``note`` (a writer) records what ran."""

    __name__ = "notes"

    def __init__(self) -> None:
        self.ran: list[dict[str, Any]] = []

    @hookimpl
    def callgate_register_tools(self, registry: Registry) -> None:
        def run(ctx: Any, args: dict[str, Any]) -> str:
            self.ran.append(args)
            return f"noted {args['text']}"

        registry.add(ToolSpec(name="note", description="Note it.", schema=SCHEMA, execute=run,
                              visibility="surface",
                              permission_subject=PermissionSubject("pattern", ("text",))))


class Slow:
    """Pre-tool-use answers that are awaitables (a hook that runs a program)."""

    __name__ = "slow"

    def __init__(self, answer: Any) -> None:
        self.answer = answer
        self.awaited = 0

    @hookimpl
    def callgate_pre_tool_use(self, call: ToolCall) -> Any:
        async def later() -> Any:
            await anyio.sleep(0)
            self.awaited += 1
            return self.answer

        return later()


class After:
    """``callgate_post_tool_use``: sees each dispatched result, replaces it (awaited)."""

    __name__ = "after"

    def __init__(self, *, fail: bool = False) -> None:
        self.seen: list[str] = []
        self.fail = fail

    @hookimpl
    def callgate_post_tool_use(self, call: ToolCall, tool: ToolSpec, result: ToolResult,
                               session: Any) -> Any:
        self.seen.append(result.text)
        if self.fail:
            raise RuntimeError("a broken hook")

        async def later() -> ToolResult:
            return result.with_text(result.text + " (checked after)")

        return later()


def run(host: Host, workspace: Path, *calls: ToolCall) -> list[ToolResult]:
    async def main() -> list[ToolResult]:
        async with host.open_session(workspace) as session:
            return await session.run_batch(list(calls))

    return anyio.run(main)


def call(text: str = "x", cid: str = "c1") -> ToolCall:
    return ToolCall(cid, "note", {"text": text})


def test_an_awaitable_refusal_blocks_and_nothing_runs(tmp_path: Path) -> None:
    notes, slow = Notes(), Slow(Refuse("not now"))
    host = Host.boot({}, plugins=[notes, slow], entrypoints=False, user_config=False)
    [result] = run(host, tmp_path, call())
    assert result.is_error and result.error is not None
    assert result.error.kind == "blocked" and result.error.signature == "hook:slow"
    assert result.text == "blocked: not now"
    assert notes.ran == [] and slow.awaited == 1


def test_an_awaitable_replacement_is_validated_again(tmp_path: Path) -> None:
    notes = Notes()
    good = Host.boot({}, plugins=[notes, Slow(Replace({"text": "rewritten"}))],
                     entrypoints=False, user_config=False)
    [result] = run(good, tmp_path, call())
    assert result.text == "noted rewritten" and notes.ran == [{"text": "rewritten"}]
    notes.ran.clear()
    bad = Host.boot({}, plugins=[notes, Slow(Replace({"text": 3}))], entrypoints=False,
                    user_config=False)
    [result] = run(bad, tmp_path, call())
    # the hook's fault, not the model's (issue 36.4)
    assert result.error is not None and result.error.kind == "config_error"
    assert notes.ran == []


@pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")
def test_answers_after_a_refusal_are_closed_not_leaked(tmp_path: Path) -> None:
    class First:
        __name__ = "first"

        @hookimpl(tryfirst=True)
        def callgate_pre_tool_use(self) -> Refuse:
            return Refuse("first says no")

    slow = Slow(None)
    host = Host.boot({}, plugins=[Notes(), slow, First()], entrypoints=False, user_config=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        [result] = run(host, tmp_path, call())
        gc.collect()
    assert result.text == "blocked: first says no"
    assert slow.awaited == 0  # closed, never awaited: no "never awaited" warning either


def test_post_tool_use_replaces_dispatched_results_only(tmp_path: Path) -> None:
    after = After()
    host = Host.boot({}, plugins=[Notes(), after], entrypoints=False, user_config=False)
    [ok] = run(host, tmp_path, call("a"))
    assert ok.text == "noted a (checked after)" and after.seen == ["noted a"]
    refused = Host.boot({}, plugins=[Notes(), after, Slow(Refuse("no"))], entrypoints=False,
                        user_config=False)
    [blocked] = run(refused, tmp_path, call("b"))
    assert blocked.text == "blocked: no" and after.seen == ["noted a"]  # never dispatched


def test_a_failing_post_tool_use_hook_leaves_the_result(tmp_path: Path) -> None:
    host = Host.boot({}, plugins=[Notes(), After(fail=True)], entrypoints=False,
                     user_config=False)
    [result] = run(host, tmp_path, call("a"))
    assert result.text == "noted a" and not result.is_error


def test_a_session_fallback_only_tightens_and_says_why(tmp_path: Path) -> None:
    notes = Notes()
    host = Host.boot({"permissions": {"mode": "allow"}}, plugins=[notes], entrypoints=False,
                     user_config=False)

    async def main() -> tuple[ToolResult, ToolResult]:
        async with host.open_session(tmp_path) as session:
            session.tighten_fallback("ask", "defaultMode 'default' in settings.json")
            session.tighten_fallback("allow", "nothing")  # never loosens
            asked = await session.run(call())
            session.tighten_fallback("deny", "dontAsk")
            denied = await session.run(call("y", "c2"))
            return asked, denied

    asked, denied = anyio.run(main)
    assert asked.error is not None and asked.error.signature == "mode:ask"
    assert "defaultMode 'default' in settings.json" in asked.text
    assert denied.error is not None and denied.error.signature == "mode:deny"
    assert "(dontAsk)" in denied.text and notes.ran == []
    strict = Host.boot({"permissions": {"mode": "deny"}}, plugins=[Notes()], entrypoints=False,
                       user_config=False)

    async def loosen() -> ToolResult:
        async with strict.open_session(tmp_path) as session:
            session.tighten_fallback("ask", "a looser mode")
            return await session.run(call())

    assert anyio.run(loosen).error.signature == "mode:deny"  # type: ignore[union-attr]


def test_rule_examples_are_checked_at_boot(tmp_path: Path) -> None:
    good = {"permissions": {
        "deny": ["Bash(git push:*)"], "allow": ["Edit(src/**)"],
        "examples": [
            {"rule": "Bash(git push:*)", "match": ["git -C . push origin", "echo push | xargs git",
                                                  {"tool": "bash",
                                                   "arguments": {"command": "git push"}}],
             "not_match": ["git status"]},
            {"rule": "Edit(src/**)", "match": ["src/a.py", "src"], "not_match": ["lib/a.py"]}]}}
    Host.boot(good, surface="full", user_config=False)
    config = tmp_path / "callgate.toml"
    config.write_text('[permissions]\ndeny = ["Bash(git push:*)"]\n\n[[permissions.examples]]\n'
                      'rule = "Bash(git push:*)"\nmatch = ["git status"]\n')
    with pytest.raises(ConfigError) as caught:
        Host.boot(config, surface="full", user_config=False)
    error = caught.value
    assert error.file == str(config) and error.line == 6
    assert 'deny rule "Bash(git push:*)" should match "git status", but it does not' \
        in str(error)
    config.write_text('[permissions]\nallow = ["Edit(src/**)"]\n\n[[permissions.examples]]\n'
                      'rule = "Edit(lib/**)"\nmatch = ["lib/x"]\n')
    with pytest.raises(ConfigError, match="is not in"):
        Host.boot(config, surface="full", user_config=False)


def test_explain_gives_every_stage_without_running(tmp_path: Path) -> None:
    notes = Notes()
    host = Host.boot({"permissions": {"mode": "ask", "deny": ["note(secret*)"]}},
                     plugins=[notes], entrypoints=False, user_config=False)

    async def main() -> list[Any]:
        async with host.open_session(tmp_path) as session:
            return [await cg_rules.explain(session, ToolCall("e", "note", {"text": t}))
                    for t in ("plain", "secret plan")] + \
                [await cg_rules.explain(session, ToolCall("e", "nope", {}))]

    asked, denied, unknown = anyio.run(main)
    assert notes.ran == []
    assert asked.decision == "ask" and asked.decided_by == "mode:ask"
    assert [s.stage for s in asked.stages] == list(cg_rules.STAGES)
    assert asked.stages[-1].verdict == "not run"
    assert denied.decision == "deny" and denied.decided_by == "deny:note(secret*)"
    assert denied.message is not None and "denied by rule note(secret*)" in denied.message
    assert unknown.decision == "deny" and unknown.stages[0].verdict == "stopped"


def test_unit_verdicts_judge_each_command(tmp_path: Path) -> None:
    host = Host.boot({"permissions": {"allow": ["Bash(git status:*)"],
                                      "deny": ["Bash(git push:*)"]}},
                     surface="full", user_config=False)

    async def main() -> list[Any]:
        async with host.open_session(tmp_path) as session:
            bash = session.tool("bash")
            assert bash is not None
            return cg_rules.unit_verdicts(session, ToolCall(
                "v", "bash", {"command": "git status && git -C . push; make"}), bash)

    verdicts = anyio.run(main)
    assert [(v.label, v.action, v.rule) for v in verdicts] == [
        ("git status", "allow", "Bash(git status:*)"),
        ("git -C . push", "deny", "Bash(git push:*)"),
        ("make", None, None)]


def test_a_rule_set_judges_like_permissions(tmp_path: Path) -> None:
    host = Host.boot({}, surface="full", user_config=False)
    ruleset = cg_rules.RuleSet(host, source="importer")
    deny = ruleset.add("deny", "Bash(rm -rf:*)")
    with pytest.raises(cg_rules.RuleError):
        ruleset.add("deny", "Bash(:*)")
    assert ruleset.matches(deny, "cd x && rm -rf /")
    assert not ruleset.matches(deny, "rm -r x")
    bash = host.registry.get("bash")
    assert bash is not None
    found = ruleset.decide(ToolCall("x", "bash", {"command": "timeout 5 rm -rf y"}), bash)
    assert found is not None and (found.action, found.source) == ("deny", "importer")


class Protects:
    __name__ = "protects"

    @hookimpl
    def callgate_register_tools(self, registry: Registry) -> None:
        registry.protect(".agent/settings.json", "an agent reads it as configuration")


def test_a_plugin_protects_the_files_it_reads(tmp_path: Path) -> None:
    host = Host.boot({}, plugins=[Protects()], surface="full", user_config=False,
                     workspace=tmp_path)
    assert host.workspace == str(tmp_path)
    [result] = run(host, tmp_path, ToolCall("w", "write_file", {
        "path": ".agent/settings.json", "content": "{}"}))
    assert result.error is not None and result.error.signature == "FS_PROTECTED"
    assert "an agent reads it as configuration" in result.text
    assert not (tmp_path / ".agent").exists()


def test_asyncio_backend_is_what_hooks_run_on() -> None:
    # hook runners start programs with asyncio; the pipeline runs on anyio's asyncio backend
    async def main() -> str:
        return type(asyncio.get_running_loop()).__name__

    assert "Loop" in anyio.run(main)
