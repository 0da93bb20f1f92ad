"""The OpenAI tool loop on the Responses API in GPT-5.1+'s own tool shapes: ``apply_patch``
and ``shell`` in place of callgate's edit and shell tools, through the same gates.

surface (``openai-responses-native``) → model → raw output items → ``session.run_items``
→ raw ``apply_patch_call_output`` / ``shell_call_output`` / ``function_call_output``
items → model, until the model stops asking for tools.

    python examples/agent_loop_openai_native.py "make greet() friendlier"   # OPENAI_API_KEY
    python examples/agent_loop_openai_native.py                              # offline

With ``OPENAI_API_KEY`` set it uses the real ``openai`` client (model from
``OPENAI_MODEL``, default gpt-5.1); without it, a SCRIPTED FAKE MODEL
(``scripted_model.py``, `NATIVE_OPENAI_SCRIPT`) replays a fixed conversation.
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

RENDERING = "openai-responses-native"
CALL_ITEMS = ("function_call", "apply_patch_call", "shell_call")
INSTRUCTIONS = ("You are a coding agent. Use the tools to inspect and change the workspace; "
                "read a file before you patch it. Answer briefly when the task is done.")


def agent_loop(client: Any, model: str, session: Session, task: str, max_turns: int = 12,
               log: Any = print) -> str:
    """Run one user task to completion; returns the model's final answer."""
    tools = providers.surface(session, RENDERING)
    items: list[Any] = [{"role": "user", "content": task}]
    session.begin_turn("human")
    for _ in range(max_turns):
        reply = client.responses.create(model=model, instructions=INSTRUCTIONS, tools=tools,
                                        input=items)
        output = [item.model_dump(exclude_none=True) for item in reply.output]
        items += output  # the model's items go back with the results
        calls = [item for item in output if item["type"] in CALL_ITEMS]
        if not calls:
            return str(reply.output_text)
        for result in session.run_items(RENDERING, calls):
            log(f"  {result['type']} {result['call_id']}: "
                f"{str(result.get('status', result.get('output')))[:70]!r}")
            items.append(result)
    return f"(stopped after {max_turns} model turns)"


def open_native_session(host: Host, workspace: str | os.PathLike[str]) -> Session:
    """A session showing what the rendering's faces run (``apply_patch``)."""
    return host.open_session(workspace, show=providers.shows(host.host, RENDERING))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("task", nargs="?", default="Make greet() in src/greet.py friendlier.")
    parser.add_argument("--workspace", help="work here instead of a temporary demo copy")
    parser.add_argument("--config", help="a callgate.toml")
    args = parser.parse_args(argv)
    if os.environ.get("OPENAI_API_KEY"):
        from openai import OpenAI

        client, model = OpenAI(), os.environ.get("OPENAI_MODEL", "gpt-5.1")
    else:
        from scripted_model import ScriptedOpenAIResponses

        print("[no OPENAI_API_KEY: a SCRIPTED FAKE MODEL replays a fixed conversation]")
        client, model = ScriptedOpenAIResponses(), "scripted"
    with tempfile.TemporaryDirectory(prefix="callgate-loop-") as tmp:
        workspace = args.workspace or shutil.copytree(Path(__file__).parent / "workspace",
                                                      Path(tmp) / "workspace")
        with Host.boot(args.config, workspace=workspace) as host, \
                open_native_session(host, workspace) as session:
            print(agent_loop(client, model, session, args.task))
    return 0


if __name__ == "__main__":
    sys.exit(main())
