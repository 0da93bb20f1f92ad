"""The same hook scripts through ``callgate serve`` (the MCP SDK's own stdio client): a Bash
guard's exit 2 reaches the client as an error with the hook's stderr and nothing ran, a Node
hook's ``updatedInput`` is what runs, context is delivered, and a project hook of an
untrusted workspace never runs."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import mcp_types as types
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.contrib.mcp_serve.toolkit import child_env

from .support import claude_home, command, group, needs_jq, needs_node, script, settings


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))


@needs_jq
@needs_node
def test_hooks_run_through_callgate_serve(tmp_path: Path, user_config: Path) -> None:
    home = claude_home(tmp_path, settings({"PreToolUse": [
        group("Bash", command(script("block-rm-exit2.sh")), command(script("add-context.sh")),
              command(script("rewrite-input.js")))]}))
    ws = tmp_path / "ws"
    (ws / "victim").mkdir(parents=True)
    (ws / "victim" / "keep.txt").write_text("precious")
    marker = tmp_path / "project-hook-ran"
    (ws / ".claude").mkdir()
    (ws / ".claude" / "settings.json").write_text(settings({"PreToolUse": [group(
        "Bash", command(f"touch {json.dumps(str(marker))}"))]}))
    (user_config / "config.toml").write_text(
        f'[claude_code]\nread = ["claude"]\nclaude_dir = {json.dumps(str(home))}\n')

    async def scenario() -> dict[str, types.CallToolResult]:
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "callgate_cli", "serve", "--workspace", str(ws)],
            env=child_env(CALLGATE_LOAD_PLUGINS="files,shell,hooks"))
        out = {}
        async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            out["rm"] = await client.call_tool("bash", {"command": "rm -rf victim"})
            out["rewrite"] = await client.call_tool("bash", {"command": "echo one"})
            out["context"] = await client.call_tool("bash", {"command": "echo hi"})
        return out

    results = anyio.run(scenario)
    assert results["rm"].is_error
    assert "Blocked: 'rm -rf' is not allowed by project policy" in text_of(results["rm"])
    assert (ws / "victim" / "keep.txt").read_text() == "precious"
    assert not results["rewrite"].is_error and text_of(results["rewrite"]).startswith("two")
    assert "[PreToolUse hook context] Environment: hooks-test; the command was: echo hi" in \
        text_of(results["context"])
    assert not marker.exists()  # the untrusted workspace's own hook
