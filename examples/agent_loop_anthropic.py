"""A complete tool loop in Anthropic Messages shapes, with callgate running every tool call.

surface → model → ``tool_use`` blocks → ``session.run_batch`` → ``tool_result`` blocks →
model, until the model stops asking for tools.

    python examples/agent_loop_anthropic.py "make greet() friendlier"   # ANTHROPIC_API_KEY set
    python examples/agent_loop_anthropic.py                              # offline

With ``ANTHROPIC_API_KEY`` set it uses the real ``anthropic`` client (model from
``ANTHROPIC_MODEL``, default claude-sonnet-4-5); without it, a SCRIPTED FAKE MODEL
(``scripted_model.py``) replays a fixed conversation. Either way the tools work on
a temporary copy of ``examples/workspace`` unless you pass ``--workspace DIR``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import callgate_providers as providers
from callgate import ToolCall
from callgate.sync import Host, Session

SYSTEM = ("You are a coding agent. Use the tools to inspect and change the workspace; "
          "read a file before you edit it. Answer briefly when the task is done.")


def agent_loop(client: Any, model: str, session: Session, task: str, max_turns: int = 12,
               log: Any = print) -> str:
    """Run one user task to completion; returns the model's final answer."""
    tools = providers.surface(session, "anthropic")  # fixed for the session: cache-friendly
    messages: list[Any] = [{"role": "user", "content": task}]
    session.begin_turn("human")  # a direct human message starts this turn
    for _ in range(max_turns):
        reply = client.messages.create(model=model, max_tokens=4096, system=SYSTEM,
                                       tools=tools, messages=messages)
        messages.append({"role": "assistant", "content": reply.content})
        uses = [block for block in reply.content if block.type == "tool_use"]
        if not uses:
            return "".join(block.text for block in reply.content if block.type == "text")
        results = session.run_batch([ToolCall(b.id, b.name, b.input) for b in uses])
        for result in results:
            log(f"  {result.name}: {'ERROR ' if result.is_error else ''}{result.text[:70]!r}")
        # every tool_use gets its tool_result, in order, in one user message
        messages.append({"role": "user", "content": [
            providers.render_result(result, "anthropic") for result in results]})
    return f"(stopped after {max_turns} model turns)"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("task", nargs="?", default="Make greet() in src/greet.py friendlier.")
    parser.add_argument("--workspace", help="work here instead of a temporary demo copy")
    parser.add_argument("--config", help="a callgate.toml")
    args = parser.parse_args(argv)
    if os.environ.get("ANTHROPIC_API_KEY"):
        from anthropic import Anthropic

        client, model = Anthropic(), os.environ.get("ANTHROPIC_MODEL", "claude-sonnet-4-5")
    else:
        from scripted_model import ScriptedAnthropic

        print("[no ANTHROPIC_API_KEY: a SCRIPTED FAKE MODEL replays a fixed conversation]")
        client, model = ScriptedAnthropic(), "scripted"
    with tempfile.TemporaryDirectory(prefix="callgate-loop-") as tmp:
        workspace = args.workspace or shutil.copytree(Path(__file__).parent / "workspace",
                                                      Path(tmp) / "workspace")
        with Host.boot(args.config, workspace=workspace) as host, \
                host.open_session(workspace) as session:
            print(agent_loop(client, model, session, args.task))
    return 0


if __name__ == "__main__":
    sys.exit(main())
