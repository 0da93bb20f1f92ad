"""An integrator loop that drives automatic goal rounds — with a SCRIPTED (FAKE) MODEL.

Nothing here calls a real model or the network. `ScriptedModel` stands in for
one: it returns a fixed script of tool calls for each turn, so the whole flow
runs offline and gives the same output every time (apart from the random goal
id and the temporary paths). Replace it with your model client to use the loop
for real.

What it shows (goals-and-workflow.md §0-§1):

1. A human turn: the user asks for long-running work; the model creates a goal
   (only a direct human turn may) and writes a task list.
2. The loop: ``goals = session.extension(GOALS)``; ``while goals.should_continue():
   r = goals.start_round()`` and the model runs on ``r.prompt``. An automatic round may
   only complete or block its own goal: the model's attempt to pause it is refused.
3. The model completes the goal in round 3; ``should_continue()`` turns false.
4. A restarted host (same session directory) restores the goal, disarmed.

Run it: ``python examples/goal_loop.py``
"""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path
from typing import Any

import anyio
import callgate_goals
import callgate_workflow
from callgate import Host, ToolCall, ToolResult
from callgate_goals import GOALS

USER_MESSAGE = ("Please ship v1: write the changelog, then tag the release. Keep going on "
                "your own.")


class ScriptedModel:
    """A FAKE model for this example: it replays a fixed script instead of thinking.

    ``respond(prompt)`` returns the tool calls a real model might have asked for.
    It reads the goal id and revision from the round prompt, as a real model
    would (the prompt states both).
    """

    def __init__(self) -> None:
        self._ids = iter(range(1, 1000))

    def _call(self, name: str, arguments: dict[str, Any]) -> ToolCall:
        return ToolCall(f"call_{next(self._ids)}", name, arguments)

    def respond(self, prompt: str) -> list[ToolCall]:
        if prompt == USER_MESSAGE:
            return [
                self._call("create_goal", {"objective": "Ship v1: changelog and release tag",
                                           "max_goal_rounds": 5}),
                self._call("todo_write", {"todos": [
                    {"content": "Write the changelog", "status": "pending"},
                    {"content": "Tag the release", "status": "pending"}]}),
            ]
        found = re.search(r"round (\d+) of .*goal_id=([0-9a-f]{32}) revision=(\d+)", prompt)
        assert found, "the scripted model only understands goal round prompts"
        number, goal_id, revision = int(found[1]), found[2], int(found[3])
        if number == 1:
            return [self._call("todo_write", {"todos": [
                {"content": "Write the changelog", "status": "in_progress"},
                {"content": "Tag the release", "status": "pending"}]})]
        if number == 2:
            # A scripted mistake: automatic rounds may not pause the goal.
            return [
                self._call("update_goal", {"goal_id": goal_id, "revision": revision,
                                           "action": "pause"}),
                self._call("todo_write", {"todos": [
                    {"content": "Write the changelog", "status": "completed"},
                    {"content": "Tag the release", "status": "in_progress"}]}),
            ]
        return [
            self._call("todo_write", {"todos": [
                {"content": "Write the changelog", "status": "completed"},
                {"content": "Tag the release", "status": "completed"}]}),
            self._call("update_goal", {"goal_id": goal_id, "revision": revision,
                                       "action": "complete"}),
        ]


def show(label: str, calls: list[ToolCall], results: list[ToolResult]) -> None:
    print(f"--- {label}")
    for call, result in zip(calls, results, strict=True):
        mark = "error" if result.is_error else "ok"
        print(f"> {call.name} {json.dumps(call.arguments)}")
        first = result.text.splitlines()[0] if result.text else ""
        if call.name in ("create_goal", "update_goal", "get_goal") and not result.is_error:
            goal = json.loads(result.text)["goal"]
            first = (f"goal revision={goal['revision']} phase={goal['phase']} "
                     f"armed={goal['armed']} rounds_started={goal['rounds_started']}")
        print(f"  [{mark}] {first}")


async def run(workspace: Path, session_dir: Path) -> dict[str, Any]:
    host = Host.boot({}, plugins=[callgate_goals, callgate_workflow], entrypoints=False,
                     surface="full")
    model = ScriptedModel()
    rounds: list[int] = []
    refused: list[str] = []
    async with host.open_session(workspace, session_dir=session_dir) as session:
        # 1. The human turn.
        session.begin_turn("human")
        calls = model.respond(USER_MESSAGE)
        show("human turn", calls, await session.run_batch(calls))

        # 2. The integrator's loop: one automatic round at a time, while the goal is armed.
        while session.extension(GOALS).should_continue():
            goal_round = session.extension(GOALS).start_round()
            assert goal_round is not None
            rounds.append(goal_round.number)
            print(f"\n[prompt] {goal_round.prompt}")
            calls = model.respond(goal_round.prompt)
            results = await session.run_batch(calls)
            show(f"automatic round {goal_round.number}", calls, results)
            refused += [r.error.signature for r in results if r.error is not None]
        final = session.extension(GOALS).current()
        print(f"\nloop finished after rounds {rounds}: phase={final['phase']} "
              f"stop_reason={final['stop_reason']}")

    # 3. A restarted host finds the goal where it was left (an armed one would come back
    #    disarmed with stop_reason "cold-restore" until a human resumes it).
    host = Host.boot({}, plugins=[callgate_goals], entrypoints=False, surface="full")
    async with host.open_session(workspace, session_dir=session_dir) as session:
        restored = session.extension(GOALS).current()
        print(f"after a restart: phase={restored['phase']} armed={restored['armed']} "
              f"should_continue={session.extension(GOALS).should_continue()}")
    return {"rounds": rounds, "final": final, "refused": refused, "restored": restored}


def main() -> dict[str, Any]:
    print("goal_loop: an integrator loop driven by a SCRIPTED (FAKE) MODEL — no network\n")
    with tempfile.TemporaryDirectory(prefix="callgate-goal-loop-") as tmp:
        workspace = Path(tmp) / "workspace"
        workspace.mkdir()
        return anyio.run(run, workspace, Path(tmp) / "session")


if __name__ == "__main__":
    main()
