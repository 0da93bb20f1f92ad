"""Fixtures for the skills tests: HOME inside tmp_path, sessions with the skills plugin."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import callgate_skills
import pytest
from callgate import hookimpl
from callgate.testing import CallgateSession


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``~`` is a fresh directory: ``~/.claude/skills`` is never the user's real one."""
    path = tmp_path / "home"
    path.mkdir()
    monkeypatch.setenv("HOME", str(path))
    return path


@pytest.fixture
def skills(callgate_session: Callable[..., CallgateSession]) -> Callable[..., CallgateSession]:
    """``skills(files=None, config=None, plugins=())``: a session with callgate-skills."""

    def make(
        files: dict[str, str] | None = None,
        *,
        config: dict[str, Any] | None = None,
        plugins: tuple[Any, ...] = (),
        **kw: Any,
    ) -> CallgateSession:
        return callgate_session(
            plugins=[callgate_skills, *plugins], files=files or {}, config=config or {}, **kw
        )

    return make


def skill_md(
    name: str, description: str = "does a thing", body: str = "Do the thing.", **extra: Any
) -> str:
    """A SKILL.md with front matter ``name``, ``description`` and ``extra`` keys."""
    lines = ["---", f"name: {name}", f"description: {description}"]
    for key, value in extra.items():
        key = key.replace("_", "-")
        if isinstance(value, bool):
            value = "true" if value else "false"
        elif isinstance(value, list):
            value = "[" + ", ".join(value) + "]"
        lines.append(f"{key}: {value}")
    return "\n".join([*lines, "---", "", body, ""])


class Approver:
    """The integrator's approver: answers ``answer`` and records the calls it was asked."""

    __name__ = "skills_test_approver"

    def __init__(self, answer: bool) -> None:
        self.answer = answer
        self.asked: list[str] = []

    @hookimpl
    def callgate_ask_permission(self, call: Any, tool: Any, session: Any, preview: Any) -> bool:
        self.asked.append(call.name)
        return self.answer
