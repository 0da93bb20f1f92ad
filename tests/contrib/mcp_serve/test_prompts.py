"""MCP prompts: the workspace's slash commands and skills, served by the real ``callgate serve``
over stdio to the SDK's client (issue 23, item 6)."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from callgate import Host
from callgate_mcp_serve import CallgateMCP, ElicitationApprover
from mcp import Client, ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

from .test_server import ERAS, run
from .toolkit import child_env

PROMPT_SERVER = Path(__file__).parents[2] / "plugins" / "commands" / "prompt_server.py"


def _has_commands() -> bool:
    try:
        return "slash_command" in Host.boot({}).registry.names()
    except Exception:  # a half-built plugin elsewhere must not break collection
        return False


pytestmark = pytest.mark.skipif(
    not _has_commands(), reason="the callgate-commands plugin is not installed"
)

REVIEW = """---
description: Review a pull request
argument-hint: <pr-number> [focus]
---
Review pull request #$1, focusing on $2. The full request was: $ARGUMENTS
"""

SKILL = """---
name: x
description: Explain the x subsystem. Use when asked about x.
---
Explain x, starting from $ARGUMENTS.
"""


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    w = tmp_path / "ws"
    (w / ".claude" / "commands").mkdir(parents=True)
    (w / ".claude" / "commands" / "review-pr.md").write_text(REVIEW)
    (w / ".claude" / "skills" / "x").mkdir(parents=True)
    (w / ".claude" / "skills" / "x" / "SKILL.md").write_text(SKILL)
    (tmp_path / "home").mkdir()  # ~/.claude/{commands,skills} of the test, empty
    return w


@asynccontextmanager
async def serving(
    ws: Path, user: Any = None, **env: str
) -> AsyncIterator[tuple[ClientSession, types.InitializeResult]]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "callgate_cli", "serve", "--workspace", str(ws)],
        env=child_env(HOME=str(ws.parent / "home"), **env),
    )
    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write, elicitation_callback=user) as client,
    ):
        yield client, await client.initialize()


def test_commands_and_skills_are_listed_and_expanded(ws: Path) -> None:
    async def scenario() -> None:
        async with serving(ws) as (client, init):
            assert init.capabilities.prompts is not None
            prompts = {p.name: p for p in (await client.list_prompts()).prompts}
            assert set(prompts) == {"review-pr", "x"}
            review, skill = prompts["review-pr"], prompts["x"]
            assert review.description == "Review a pull request"
            assert skill.description == "Explain the x subsystem. Use when asked about x."
            assert (review.title, skill.title) == ("/review-pr (project)", "/x (skill)")
            [arg] = review.arguments or []
            assert (arg.name, arg.required, arg.description) == (
                "arguments",
                False,
                "<pr-number> [focus]",
            )

            got = await client.get_prompt("review-pr", {"arguments": '42 "auth flow"'})
            [message] = got.messages
            assert message.role == "user"
            assert isinstance(message.content, types.TextContent)
            assert message.content.text.strip() == (
                "Review pull request #42, focusing on auth flow. "
                'The full request was: 42 "auth flow"'
            )

            got = await client.get_prompt("x", {"arguments": "the parser"})
            text = got.messages[0].content.text  # type: ignore[union-attr]
            assert "Explain x, starting from the parser." in text
            assert "Skill: x" in text

            # each ran as a call of the session: recorded, its result a resource
            stored = (await client.list_resources()).resources
            assert len(stored) == 3

            got = await client.get_prompt("review-pr")  # no arguments: placeholders empty
            assert "Review pull request #, focusing on ." in got.messages[0].content.text  # type: ignore[union-attr]

    run(scenario)


def test_an_unknown_prompt_or_argument_is_an_invalid_params_error(ws: Path) -> None:
    async def scenario() -> None:
        async with serving(ws) as (client, _):
            with pytest.raises(MCPError) as caught:
                await client.get_prompt("no-such-command", {"arguments": "1"})
            assert caught.value.error.code == types.INVALID_PARAMS
            assert "no slash command /no-such-command" in caught.value.error.message
            assert "review-pr" in caught.value.error.message  # what there is instead
            with pytest.raises(MCPError) as caught:
                await client.get_prompt("review-pr", {"pr": "42"})
            assert caught.value.error.code == types.INVALID_PARAMS
            assert "unknown: pr" in caught.value.error.message
            # the server is still fine afterwards
            assert len((await client.list_prompts()).prompts) == 2

    run(scenario)


def test_a_permission_rule_applies_to_prompts(ws: Path) -> None:
    (ws / "callgate.toml").write_text('[permissions]\ndeny = ["slash_command"]\n')

    async def scenario() -> None:
        async with serving(ws) as (client, init):
            assert init.capabilities.prompts is not None
            with pytest.raises(MCPError) as caught:
                await client.get_prompt("review-pr", {"arguments": "42"})
            error = caught.value.error
            assert error.code == types.INTERNAL_ERROR
            assert "slash_command is denied by rule slash_command" in error.message
            assert (error.data or {})["callgate/error"]["kind"] == "blocked"

    run(scenario)


def test_without_the_commands_plugin_no_prompts_are_offered(ws: Path) -> None:
    async def scenario() -> None:
        async with serving(ws, CALLGATE_DISABLE_PLUGINS="commands") as (client, init):
            assert init.capabilities.prompts is None
            assert init.capabilities.resources is not None  # the rest still served
            with pytest.raises(MCPError) as caught:
                await client.list_prompts()
            assert caught.value.error.code == types.METHOD_NOT_FOUND

    run(scenario)


def test_an_mcp_prompt_passes_the_connect_gate_through_an_elicitation(
    ws: Path, tmp_path: Path, user_config: Path
) -> None:
    """``mcp:<server>:<prompt>`` starts the server, so it asks like a connect: declined,
    nothing starts; approved, the server's prompt is expanded and listed from then on."""
    started = tmp_path / "started"
    (user_config / "config.toml").write_text(f"[trust]\nworkspaces = [{json.dumps(str(ws))}]\n")
    (ws / "callgate.toml").write_text(
        '[permissions]\nask = ["mcp_connect__fx"]\n\n[mcp_servers.fx]\n'
        f"command = {json.dumps(sys.executable)}\n"
        f'args = [{json.dumps(str(PROMPT_SERVER))}, "--started", {json.dumps(str(started))}]\n'
    )
    answers = [("decline", None), ("accept", {"allow": True})]
    asked: list[str] = []

    async def user(ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        action, content = answers.pop(0)
        return types.ElicitResult(action=action, content=content)

    async def scenario() -> None:
        async with serving(ws, user) as (client, _):
            # never asked: the server's line says how to list it, and is not a prompt
            names = {p.name for p in (await client.list_prompts()).prompts}
            assert names == {"review-pr", "x"}
            with pytest.raises(MCPError) as caught:
                await client.get_prompt("mcp:fx:greet", {"arguments": "Ada"})
            assert caught.value.error.code == types.INTERNAL_ERROR
            assert "the user declined it in the MCP client" in caught.value.error.message
            assert caught.value.error.data == {
                "callgate/error": {"kind": "blocked", "signature": "ask:mcp_connect__fx"}
            }
            assert not started.exists()  # declined: the server never ran
            got = await client.get_prompt("mcp:fx:greet", {"arguments": "Ada"})
            assert "Greet Ada plainly." in got.messages[0].content.text  # type: ignore[union-attr]
            assert len(started.read_text().split()) == 1
            prompts = {p.name: p for p in (await client.list_prompts()).prompts}
            assert set(prompts) == {"review-pr", "x", "mcp:fx:greet", "mcp:fx:summary"}
            assert prompts["mcp:fx:greet"].description == "Greet someone in a style"
        assert len(asked) == 2 and all("fx" in m for m in asked)

    run(scenario)


def test_the_listing_lines_parse_with_dashes_and_brackets_in_descriptions() -> None:
    from callgate_mcp_serve._prompts import parse_listing

    text = "\n".join(
        [
            "Slash commands (2):",
            "/plain — Tidy up — then commit (carefully)  (project · .claude/commands/plain.md)",
            "/a:b <file> [n] — Lint (fast)  (user · /state/commands/a/b.md)",
            "",
            "MCP prompts:",
            "/mcp:fx:… — prompts not listed yet: slash_command mcp:fx starts the server",
            "",
            "Skipped:",
            "- /x/bad.md: the front matter is not valid YAML",
        ]
    )
    plain, ab = parse_listing(text)
    assert (plain.name, plain.description, plain.title) == (
        "plain",
        "Tidy up — then commit (carefully)",
        "/plain (project)",
    )
    assert plain.arguments[0].description.startswith("the text after the command")  # type: ignore[index]
    assert (ab.name, ab.description, ab.title) == ("a:b", "Lint (fast)", "/a:b (user)")
    assert ab.arguments[0].description == "<file> [n]"  # type: ignore[index]


@pytest.mark.parametrize("mode", ERAS)
def test_prompts_on_both_protocol_eras_in_process(
    ws: Path, tmp_path: Path, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The 2026-07-28 era has no server-initiated requests; prompts need none."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    host = Host.boot({}, plugins=[ElicitationApprover()], workspace=str(ws))
    app = CallgateMCP(host, ws)

    async def scenario() -> None:
        async with Client(app.server, mode=mode) as client:
            names = [p.name for p in (await client.list_prompts()).prompts]
            assert sorted(names) == ["review-pr", "x"]
            got = await client.get_prompt("review-pr", {"arguments": "7 speed"})
            text = got.messages[0].content.text  # type: ignore[union-attr]
            assert text.startswith("Review pull request #7, focusing on speed.")
            with pytest.raises(MCPError) as caught:
                await client.get_prompt("nope")
            assert caught.value.error.code == types.INVALID_PARAMS

    run(scenario)
