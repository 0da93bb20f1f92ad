"""Fixtures for the goal tests: a session with the goals plugin and a session directory."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import callgate_capability
import callgate_goals
import pytest
from callgate import ToolResult


def body(result: ToolResult) -> dict[str, Any]:
    """The JSON a goal tool returned (asserting it succeeded)."""
    assert not result.is_error, result.text
    return json.loads(result.text)


def goal(result: ToolResult) -> dict[str, Any]:
    return body(result)["goal"]


def dir_state(directory: Path) -> dict[str, tuple[bytes, int, int]]:
    """Every file in ``directory``: bytes, mode and mtime (to prove nothing changed)."""
    out = {}
    for name in sorted(os.listdir(directory)):
        st = os.stat(directory / name)
        out[name] = ((directory / name).read_bytes(), st.st_mode, st.st_mtime_ns)
    return out


def stored(s: Any) -> dict[str, Any] | None:
    """The goal state the session store holds for the session (committed, not memory)."""
    s.session.flush()
    return s.session.store.state(s.session.id).get(("goals", "goal"))


def state_of(s: Any) -> tuple[Any, ...]:
    """Everything a refused change must leave as it was: the store's value, the files."""
    return stored(s), dir_state(Path(s.session.directory))


def break_store(s: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make every later write of the session's store fail, as a full disk would."""
    import sqlite3

    store = s.session.store

    def fail(ops: Any) -> None:
        raise store._error(sqlite3.OperationalError("database or disk is full"), "write")

    monkeypatch.setattr(store, "write", fail)


@pytest.fixture
def goals(callgate_session: Callable[..., Any], tmp_path: Path) -> Callable[..., Any]:
    """``goals(origin="human", lean=False, config=None, session_dir=..., host=None)``."""

    def make(origin: str | None = "human", *, lean: bool = False,
             config: dict[str, Any] | None = None, session_dir: Path | None = None,
             host: Any = None, workspace: Path | None = None) -> Any:
        plugins: list[Any] = [callgate_goals]
        if lean:
            plugins.append(callgate_capability)
        directory = session_dir if session_dir is not None else tmp_path / "session"
        return callgate_session(plugins=plugins, config=config or {}, origin=origin,
                                surface="lean" if lean else "full", session_dir=directory,
                                host=host, workspace=workspace)

    return make


def create(s: Any, objective: str = "Ship v1", **extra: Any) -> dict[str, Any]:
    return goal(s.call("create_goal", {"objective": objective, **extra}))


def update(s: Any, g: dict[str, Any], action: str, **extra: Any) -> ToolResult:
    return s.call("update_goal", {"goal_id": g["id"], "revision": g["revision"],
                                  "action": action, **extra})
