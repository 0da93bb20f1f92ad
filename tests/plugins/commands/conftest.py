"""Fixtures for the slash_command tests: HOME in tmp_path, the plugins, an MCP prompt server."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import callgate_capability
import callgate_commands
import callgate_skills
import pytest
from callgate import hookimpl
from callgate.testing import CallgateSession

PROMPT_SERVER = str(Path(__file__).with_name("prompt_server.py"))


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``~`` is a fresh directory: ``~/.claude`` is never the user's real one."""
    path = tmp_path / "home"
    path.mkdir()
    monkeypatch.setenv("HOME", str(path))
    return path


class Approver:
    """The integrator's approver: answers ``answer`` and records what it was asked."""

    __name__ = "commands_test_approver"

    def __init__(self, answer: bool) -> None:
        self.answer = answer
        self.asked: list[str] = []

    @hookimpl
    def callgate_ask_permission(self, call: Any, tool: Any, session: Any, preview: Any) -> bool:
        self.asked.append(call.name)
        return self.answer


@pytest.fixture
def commands(callgate_session: Callable[..., CallgateSession]) -> Callable[..., CallgateSession]:
    """``commands(files=None, config=None, plugins=())``: skills + commands + capability."""

    def make(
        files: dict[str, str] | None = None,
        *,
        config: dict[str, Any] | None = None,
        plugins: tuple[Any, ...] = (),
        **kw: Any,
    ) -> CallgateSession:
        return callgate_session(
            plugins=[callgate_commands, callgate_skills, callgate_capability, *plugins],
            files=files or {},
            config=config or {},
            **kw,
        )

    return make


def prompt_server_config(started: Path, **extra: Any) -> dict[str, Any]:
    """``[mcp_servers.fx]`` running the prompt fixture (its pids appended to ``started``)."""
    return {
        "mcp_servers": {
            "fx": {
                "command": sys.executable,
                "args": [PROMPT_SERVER, "--started", str(started)],
                **extra,
            }
        }
    }


def started_pids(path: Path) -> list[str]:
    return path.read_text().split() if path.exists() else []
