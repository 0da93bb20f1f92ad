"""What a remote session's host and worker tell each other besides calls (issue 37): the
host says when a batch's results reached the model (``session/delivered``: the shell's
finished-job notice waits for it), the worker says what its tools changed
(``session/file_changes``: the host's plugins hear of the worker's edits)."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import callgate_files
import callgate_search
import callgate_shell
import pytest
from callgate import ToolCall, hookimpl, sync

WORKER = [sys.executable, "-m", "callgate_cli", "worker", "--workspace", "{workspace}"]
PLUGINS = [callgate_files, callgate_search, callgate_shell]
CONFIG = {"files": {"watch": False}}
_ids = iter(range(1, 1 << 30))


def call(name: str, **arguments: Any) -> ToolCall:
    return ToolCall(f"d{next(_ids)}", name, arguments)


def _wait_for(predicate: Callable[[], Any], seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


@pytest.fixture
def host() -> Any:
    with sync.Host.boot(CONFIG, plugins=PLUGINS, entrypoints=False, surface="full") as booted:
        yield booted


class _DeliveryLog:
    """Records shaping and delivery, in the order they happen."""

    def __init__(self) -> None:
        self.events: list[tuple[str, Any]] = []

    @hookimpl
    def callgate_shape_result(self, call: Any, tool: Any, result: Any, session: Any) -> None:
        self.events.append(("shaped", call.id))

    @hookimpl
    def callgate_results_delivered(self, call_ids: Any, session: Any) -> None:
        self.events.append(("delivered", list(call_ids)))


def test_results_delivered_comes_once_per_batch_after_every_result_is_shaped(
    tmp_path: Path,
) -> None:
    log = _DeliveryLog()
    (tmp_path / "a.txt").write_text("a\n")
    with sync.Host.boot(CONFIG, plugins=[*PLUGINS, log], entrypoints=False) as booted:
        session = booted.open_session(tmp_path)
        one, two = call("read_file", path="a.txt"), call("bash", command="true")
        session.run_batch([one, two])
        session.run(three := call("bash", command="true"))
    assert log.events == [
        ("shaped", one.id),
        ("shaped", two.id),
        ("delivered", [one.id, two.id]),
        ("shaped", three.id),
        ("delivered", [three.id]),
    ]


def test_a_remote_sessions_finished_job_is_announced_on_the_next_batch(
    host: Any, tmp_path: Path
) -> None:
    """The job table lives on the worker and shaping on the host: the host's
    ``session/delivered`` tells the worker's table that the model has the job's id, so
    its finished-job notice rides on the next batch's result (once), as locally. Without
    the word the worker's table waits for a delivery it never hears of."""
    from callgate_shell import JOBS

    session = host.open_session(tmp_path, executor=WORKER)
    started = session.run(call("bash", command="echo hi", run_in_background=True))
    assert not started.is_error, started.text
    _wait_for(lambda: session.snapshot(JOBS)["jobs"][0]["finished"])
    text = session.run(call("bash", command="true")).text
    assert text.startswith("(no output)\n[exit code 0]\n\n[background jobs finished"), text
    assert "bash-1 (echo hi) done" in text and "job_output" in text
    assert session.run(call("bash", command="true")).text == "(no output)\n[exit code 0]"


def test_a_job_started_in_the_same_batch_waits_for_the_next_one_remotely(
    host: Any, tmp_path: Path
) -> None:
    """The model has not seen a job's id before its start result is delivered: a job that
    ends while its own batch runs is announced with the batch after."""
    from callgate_shell import JOBS

    session = host.open_session(tmp_path, executor=WORKER)
    start = call("bash", command="echo hi", run_in_background=True)
    wait = call("bash", command="sleep 0.5")
    results = session.run_batch([start, wait])
    _wait_for(lambda: session.snapshot(JOBS)["jobs"][0]["finished"])
    assert not any("background jobs finished" in r.text for r in results)
    assert "bash-1 (echo hi) done" in session.run(call("bash", command="true")).text


class _SeenAtShaping:
    """A host plugin that keeps what the session's feed told it, and what it had heard by
    the time each result was shaped (the lsp plugin's diagnostics are made then)."""

    def __init__(self) -> None:
        self.heard: list[Any] = []
        self.at_shaping: dict[str, list[str]] = {}

    @hookimpl
    def callgate_session_start(self, session: Any) -> None:
        session.file_changes.subscribe(self.heard.extend)

    @hookimpl
    def callgate_shape_result(self, call: Any, tool: Any, result: Any, session: Any) -> None:
        self.at_shaping[call.id] = [c.path for c in self.heard]


def test_the_workers_file_changes_reach_the_hosts_session_before_shaping(
    tmp_path: Path,
) -> None:
    """What a remote session's tools change is published where they ran and, through
    ``session/file_changes``, into the host session's ``file_changes``: a host plugin
    hears of the worker's edits (paths as the worker names them), before the call's
    result is shaped."""
    seen = _SeenAtShaping()
    (tmp_path / "a.txt").write_text("one\n")
    with sync.Host.boot(CONFIG, plugins=[*PLUGINS, seen], entrypoints=False) as booted:
        session = booted.open_session(tmp_path, executor=WORKER)
        session.run(call("read_file", path="a.txt"))
        assert seen.heard == []  # a read changes nothing
        edit = call("edit_file", path="a.txt", old_string="one", new_string="two")
        assert not session.run(edit).is_error
        write = call("write_file", path="sub/b.txt", content="b")
        assert not session.run(write).is_error
    a, b = (os.path.realpath(tmp_path / p) for p in ("a.txt", "sub/b.txt"))
    assert [(c.path, c.kind, c.origin) for c in seen.heard] == [
        (a, "changed", "tool"),
        (b, "created", "tool"),
    ]
    assert seen.at_shaping[edit.id] == [a]
    assert seen.at_shaping[write.id] == [a, b]
