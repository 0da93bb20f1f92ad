"""A complete tool loop in OpenAI Chat Completions shapes, with callgate running every tool call.

surface → model → tool calls → ``session.run_batch`` → tool results → model, until
the model answers without calling a tool.

    python examples/agent_loop_openai.py "make greet() friendlier"      # OPENAI_API_KEY set
    python examples/agent_loop_openai.py                                 # offline

With ``OPENAI_API_KEY`` set it uses the real ``openai`` client (model from
``OPENAI_MODEL``, default gpt-4.1-mini); without it, a SCRIPTED FAKE MODEL
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
    tools = providers.surface(session, "openai-chat")  # fixed for the session: cache-friendly
    messages: list[Any] = [{"role": "system", "content": SYSTEM},
                           {"role": "user", "content": task}]
    session.begin_turn("human")  # a direct human message starts this turn
    for _ in range(max_turns):
        reply = client.chat.completions.create(model=model, messages=messages,
                                               tools=tools).choices[0].message
        messages.append(reply.model_dump(exclude_none=True))
        if not reply.tool_calls:
            return reply.content or ""
        # arguments stay the JSON text the model produced: the host decodes and validates it
        calls = [ToolCall(c.id, c.function.name, c.function.arguments) for c in reply.tool_calls]
        for result in session.run_batch(calls):  # one result per call, in call order
            log(f"  {result.name}: {'ERROR ' if result.is_error else ''}{result.text[:70]!r}")
            messages.extend(providers.render_result(result, "openai-chat"))
    return f"(stopped after {max_turns} model turns)"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("task", nargs="?", default="Make greet() in src/greet.py friendlier.")
    parser.add_argument("--workspace", help="work here instead of a temporary demo copy")
    parser.add_argument("--config", help="a callgate.toml")
    args = parser.parse_args(argv)
    if os.environ.get("OPENAI_API_KEY"):
        from openai import OpenAI

        client, model = OpenAI(), os.environ.get("OPENAI_MODEL", "gpt-4.1-mini")
    else:
        from scripted_model import ScriptedOpenAI

        print("[no OPENAI_API_KEY: a SCRIPTED FAKE MODEL replays a fixed conversation]")
        client, model = ScriptedOpenAI(), "scripted"
    with tempfile.TemporaryDirectory(prefix="callgate-loop-") as tmp:
        workspace = args.workspace or shutil.copytree(Path(__file__).parent / "workspace",
                                                      Path(tmp) / "workspace")
        with Host.boot(args.config, workspace=workspace) as host, \
                host.open_session(workspace) as session:
            print(agent_loop(client, model, session, args.task))
    return 0


if __name__ == "__main__":
    sys.exit(main())
