"""Fixtures for the tasks tests: scripted runners and the integrator plugin answering the hook."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

import callgate_tasks
import pytest
from callgate import hookimpl
from callgate_tasks import SubagentOutcome, SubagentRequest


class ScriptedRunner:
    """A runner whose children answer by ``respond(request)`` (sync or async; may raise).

    The default answers ``"answer to <prompt>"``. Every request is kept for inspection.
    """

    def __init__(self, respond: Callable[[SubagentRequest], Any] | None = None) -> None:
        self.respond = respond or (lambda r: SubagentOutcome(status="completed",
                                                             answer=f"answer to {r.prompt}"))
        self.requests: list[SubagentRequest] = []

    async def run(self, request: SubagentRequest) -> Any:
        self.requests.append(request)
        value = self.respond(request)
        if inspect.isawaitable(value):
            value = await value
        return value


class RunnerIntegration:
    """The integrator's plugin: returns ``runner`` for every session (None: no subagents)."""

    def __init__(self, runner: Any) -> None:
        self.runner = runner

    @hookimpl
    def callgate_subagent_runner(self, session: Any) -> Any:
        return self.runner


def completed(answer: str) -> SubagentOutcome:
    return SubagentOutcome(status="completed", answer=answer)


@pytest.fixture
def tasks(callgate_session: Callable[..., Any], tmp_path: Path) -> Callable[..., Any]:
    """``tasks(runner, max_chars=30000, session_dir=..., config=None, ...)``."""

    def make(runner: Any = None, *, max_chars: int = 30000, config: dict | None = None,
             session_dir: Path | None = None, host: Any = None,
             workspace: Path | None = None, files: Any = None) -> Any:
        plugins: list[Any] = [callgate_tasks]
        if runner is not None:
            plugins.append(RunnerIntegration(runner))
        cfg = {"results": {"max_chars": max_chars}, **(config or {})}
        directory = session_dir if session_dir is not None else tmp_path / "session"
        return callgate_session(plugins=plugins, config=cfg, session_dir=directory, host=host,
                                workspace=workspace, files=files)

    return make


def refs(result: Any) -> list[str]:
    return [c["ref"] for c in result.meta["subagents"]]
