"""The Anthropic tool loop in Claude's own tool shapes: ``text_editor_20250728`` and
``bash_20250124`` in place of callgate's file and shell tools, through the same gates.

surface (``anthropic-native``) → model → raw ``tool_use`` blocks → ``session.run_items``
→ raw ``tool_result`` blocks → model, until the model stops asking for tools.

    python examples/agent_loop_anthropic_native.py "make greet() friendlier"   # key set
    python examples/agent_loop_anthropic_native.py                              # offline

With ``ANTHROPIC_API_KEY`` set it uses the real ``anthropic`` client (model from
``ANTHROPIC_MODEL``, default claude-sonnet-4-5); without it, a SCRIPTED FAKE MODEL
(``scripted_model.py``, `NATIVE_ANTHROPIC_SCRIPT`) replays a fixed conversation.
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
from callgate.sync import Host, Session

RENDERING = "anthropic-native"
SYSTEM = ("You are a coding agent. Use the tools to inspect and change the workspace; "
          "view a file before you edit it. Answer briefly when the task is done.")


def agent_loop(client: Any, model: str, session: Session, task: str, max_turns: int = 12,
               log: Any = print) -> str:
    """Run one user task to completion; returns the model's final answer."""
    tools = providers.surface(session, RENDERING)
    messages: list[Any] = [{"role": "user", "content": task}]
    session.begin_turn("human")
    for _ in range(max_turns):
        reply = client.messages.create(model=model, max_tokens=4096, system=SYSTEM,
                                       tools=tools, messages=messages)
        messages.append({"role": "assistant", "content": reply.content})
        uses = [block.model_dump() for block in reply.content if block.type == "tool_use"]
        if not uses:
            return "".join(block.text for block in reply.content if block.type == "text")
        results = session.run_items(RENDERING, uses)  # raw tool_result blocks, in order
        for result in results:
            text = "".join(c.get("text", "") for c in result.get("content", []))
            log(f"  {result['tool_use_id']}: {'ERROR ' if result['is_error'] else ''}"
                f"{text[:70]!r}")
        messages.append({"role": "user", "content": results})
    return f"(stopped after {max_turns} model turns)"


def open_native_session(host: Host, workspace: str | os.PathLike[str]) -> Session:
    """A session showing what the rendering's faces run (``ls``, ``insert_lines``)."""
    return host.open_session(workspace, show=providers.shows(host.host, RENDERING))


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
        from scripted_model import NATIVE_ANTHROPIC_SCRIPT, ScriptedAnthropic

        print("[no ANTHROPIC_API_KEY: a SCRIPTED FAKE MODEL replays a fixed conversation]")
        client, model = ScriptedAnthropic(NATIVE_ANTHROPIC_SCRIPT), "scripted"
    with tempfile.TemporaryDirectory(prefix="callgate-loop-") as tmp:
        workspace = args.workspace or shutil.copytree(Path(__file__).parent / "workspace",
                                                      Path(tmp) / "workspace")
        with Host.boot(args.config, workspace=workspace) as host, \
                open_native_session(host, workspace) as session:
            print(agent_loop(client, model, session, args.task))
    return 0


if __name__ == "__main__":
    sys.exit(main())
