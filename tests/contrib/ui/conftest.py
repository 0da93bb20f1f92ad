"""Sessions recorded through a real host for the ui tests, and the app over their store."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import callgate_files
import callgate_goals
import callgate_shell
import callgate_tasks
import callgate_workflow
import pytest
from callgate import ToolCall, hookimpl, sync
from callgate.hookspecs import Refuse
from callgate.store import default_location, open_reader, open_store
from starlette.testclient import TestClient

from ...plugins.tasks.conftest import RunnerIntegration, ScriptedRunner

DENY = "Bash(rm -rf:*)"
XSS = "<script>alert('x')</script>"


def store_path() -> Path:
    return Path(default_location())


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    w = tmp_path / "ws"
    w.mkdir()
    (w / "notes.txt").write_text("hello world\nsecond line\n")
    (w / "evil.txt").write_text(XSS + "\n")
    (w / "unread.txt").write_text("a\n")
    return w


class NoSecrets:
    """A pre-tool-use hook that refuses reads of ``secret.txt``."""

    @hookimpl
    def callgate_pre_tool_use(self, call: Any, tool: Any, session: Any) -> Any:
        if "secret" in str(call.arguments.get("path", "")):
            return Refuse("secret files stay closed", "no-secrets")
        return None


@pytest.fixture
def host() -> Iterator[sync.Host]:
    """A host with files, shell, goals, workflow and tasks, a deny rule, and a scripted
    subagent runner whose child reads a file."""
    from callgate_tasks import SubagentOutcome

    async def respond(request: Any) -> Any:
        await request.session.run(ToolCall("k1", "read_file", {"path": "notes.txt"}))
        return SubagentOutcome(status="completed", answer="read it")

    h = sync.Host.boot(
        {"permissions": {"deny": [DENY]}},
        plugins=[
            callgate_files,
            callgate_shell,
            callgate_goals,
            callgate_workflow,
            callgate_tasks,
            RunnerIntegration(ScriptedRunner(respond)),
            NoSecrets(),
        ],
        entrypoints=False,
        surface="full",
    )
    yield h
    h.close()


def record(session: Any) -> dict[str, Any]:
    """Run a session through a bit of everything; the results by call id."""
    session.record_message("user", f"tidy the notes {XSS}")
    calls = [
        ToolCall("r1", "read_file", {"path": "notes.txt"}),
        ToolCall(
            "e1", "edit_file", {"path": "notes.txt", "old_string": "hello", "new_string": "goodbye"}
        ),
        ToolCall("b1", "bash", {"command": "rm -rf build"}),
        ToolCall("v1", "read_file", {"pathx": "notes.txt"}),
        ToolCall("x1", "read_file", {"path": "evil.txt"}),
        ToolCall("j1", "bash", {"command": "echo job-output-line", "run_in_background": True}),
        ToolCall("g1", "create_goal", {"objective": "Tidy the notes"}),
        ToolCall(
            "t1",
            "todo_write",
            {
                "todos": [
                    {"content": "read notes", "status": "completed"},
                    {"content": "fix typo", "status": "pending"},
                ]
            },
        ),
        ToolCall("h1", "read_file", {"path": "secret.txt"}),
        ToolCall("o1", "edit_file", {"path": "unread.txt", "old_string": "a", "new_string": "b"}),
        ToolCall("k0", "task", {"description": "look", "prompt": "read the notes"}),
    ]
    out = {c.id: session.run(c) for c in calls}
    for i in range(3):  # the same failing step three times: the storm hint
        out[f"n{i}"] = session.run(ToolCall(f"n{i}", "read_file", {"path": "nope.txt"}))
    session.flush()
    return out


@pytest.fixture
def recorded(host: sync.Host, ws: Path) -> tuple[str, dict[str, Any]]:
    """A closed session recorded through the host: its id and results."""
    session = host.open_session(ws, origin="human")
    results = record(session)
    sid = session.id
    session.close()
    return sid, results


@pytest.fixture
def reader() -> Iterator[Any]:
    """The store opened read-only, as ``callgate ui`` opens it (made first if no host has)."""
    open_store()
    store = open_reader()
    yield store
    store.close()


@pytest.fixture
def client(reader: Any) -> Iterator[TestClient]:
    from callgate_ui import create_app

    with TestClient(create_app(reader, poll_interval=0.02)) as c:
        yield c


def env() -> dict[str, str]:
    """The environment of a ``callgate ui`` subprocess: this test's private directories."""
    return {**os.environ}
