"""EXAMPLE — a subagent runner for a real model (the Anthropic Messages API).

Not part of callgate and not run by its tests: it needs ``ANTHROPIC_API_KEY`` and the
network, and without the key it says so and exits. It shows what an integrator writes so
that ``task``, ``read_only_task``, ``explore``, ``research``, ``review`` and
``security_review`` run children on a model: a ``callgate_subagent_runner`` hook that
returns a runner, whose ``run(request)`` is a model loop over ``request.session`` — the
child's own session, opened with the tool's profile, so the pipeline refuses what the
profile does not allow whatever the model asks.

    ANTHROPIC_API_KEY=... python examples/subagent_runner_anthropic.py \\
        --workspace . "Where is the permission fallback decided?"

The model is ``ANTHROPIC_MODEL`` (default claude-sonnet-4-5). Without a model, the same
tools run from transcripts: ``callgate replay --subagents DIR`` (docs/subagents.md).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from typing import Any

import callgate_providers as providers
from callgate import Host, ToolCall, hookimpl

SYSTEM = ("You are a subagent. Do the task with the tools you have; you cannot ask the "
          "user anything. End with a short, complete answer.")
DEFAULT_STEPS = 20


class AnthropicRunner:
    """Runs one child: the model sees the child's own surface and its profile's prompt."""

    def __init__(self, client: Any, model: str) -> None:
        self.client = client
        self.model = model

    async def run(self, request: Any) -> Any:
        session = request.session
        tools = providers.surface(session, "anthropic")
        messages: list[Any] = [{"role": "user", "content": request.prompt}]
        session.begin_turn("automatic")
        for _ in range(request.max_steps or DEFAULT_STEPS):
            reply = await self.client.messages.create(
                model=self.model, max_tokens=4096, system=SYSTEM, tools=tools,
                messages=messages)
            messages.append({"role": "assistant", "content": reply.content})
            uses = [b for b in reply.content if b.type == "tool_use"]
            if not uses:
                return "".join(b.text for b in reply.content if b.type == "text")
            results = await session.run_batch([ToolCall(b.id, b.name, b.input) for b in uses])
            messages.append({"role": "user", "content": [
                providers.render_result(r, "anthropic") for r in results]})
        return {"status": "partial", "answer": "(stopped after max_steps model turns)",
                "error_code": "max_steps", "retryable": True}


class Integration:
    """The integrator's plugin: every session gets the runner."""

    __name__ = "example_anthropic_subagents"

    def __init__(self, runner: AnthropicRunner) -> None:
        self.runner = runner

    @hookimpl
    def callgate_subagent_runner(self, session: Any) -> Any:
        return self.runner


async def explore(workspace: str, question: str, tool: str) -> str:
    from anthropic import AsyncAnthropic

    runner = AnthropicRunner(AsyncAnthropic(),
                             os.environ.get("ANTHROPIC_MODEL", "claude-sonnet-4-5"))
    host = Host.boot(None, workspace=workspace, plugins=[Integration(runner)])
    async with host.open_session(workspace) as session:
        [result] = await session.run_batch([ToolCall("q1", tool, {"task": question})])
        return result.text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("question")
    parser.add_argument("--workspace", default=".")
    parser.add_argument("--tool", default="explore",
                        choices=["explore", "research", "review", "security_review"])
    args = parser.parse_args(argv)
    if not os.environ.get("ANTHROPIC_API_KEY"):
        print("EXAMPLE ONLY: set ANTHROPIC_API_KEY to run subagents on the Anthropic API; "
              "without a model use `callgate replay --subagents DIR` (docs/subagents.md).")
        return 0
    print(asyncio.run(explore(os.path.abspath(args.workspace), args.question, args.tool)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
