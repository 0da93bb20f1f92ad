"""``session.file_changes`` (issue 35): the feed plugins subscribe to, to learn which files
changed on disk. A successful mutation publishes its gated paths at once, before its result is
shaped; a refused or failed one publishes nothing; the workspace watcher (callgate-files)
publishes what shell commands change."""

from __future__ import annotations

import threading
import time
from typing import Any

import callgate_files
import callgate_shell
from callgate import ToolResult, hookimpl
from callgate.files import FileChange


class Recorder:
    """Subscribes at session start; records each batch and, per call, whether the batch came
    before the call's result was shaped."""

    name = "feed_recorder"

    def __init__(self) -> None:
        self.batches: list[tuple[FileChange, ...]] = []
        self.shaped: list[str] = []
        self.order: list[tuple[str, str]] = []
        self.lock = threading.Lock()

    @hookimpl
    def callgate_session_start(self, session: Any) -> None:
        session.file_changes.subscribe(self.listen)

    def listen(self, batch: Any) -> None:
        with self.lock:
            self.batches.append(tuple(batch))
            self.order.append(("batch", batch[0].path))

    @hookimpl
    def callgate_shape_result(self, call: Any, tool: Any, result: ToolResult,
                              session: Any) -> None:
        self.order.append(("shaped", call.name))

    def tool_batches(self) -> list[list[tuple[str, str]]]:
        with self.lock:
            return [[(c.path.rsplit("/", 1)[-1], c.kind) for c in b] for b in self.batches
                    if b[0].origin == "tool"]

    def watched(self) -> set[tuple[str, str]]:
        with self.lock:
            return {(c.path.rsplit("/", 1)[-1], c.kind) for b in self.batches for c in b
                    if c.origin == "watch"}


def session_with(callgate_session: Any, recorder: Recorder, **kwargs: Any) -> Any:
    return callgate_session(plugins=[callgate_files, callgate_shell, recorder],
                            files={"a.txt": "one\n", "b.txt": "two\n"}, **kwargs)


def test_a_mutation_publishes_its_paths_before_its_result_is_shaped(callgate_session):
    recorder = Recorder()
    s = session_with(callgate_session, recorder)
    s.expect_ok("write_file", {"path": "new.txt", "content": "x\n"})
    s.expect_ok("read_file", {"path": "a.txt"})
    s.expect_ok("edit_file", {"path": "a.txt", "old_string": "one", "new_string": "ONE"})
    s.expect_ok("read_file", {"path": "b.txt"})
    s.expect_ok("move_file", {"source_path": "b.txt", "destination_path": "c.txt"})
    assert recorder.tool_batches() == [[("new.txt", "created")], [("a.txt", "changed")],
                                       [("b.txt", "deleted"), ("c.txt", "created")]]
    write = recorder.order.index(("shaped", "write_file"))
    assert recorder.order[write - 1][0] == "batch"  # published first


def test_a_refused_or_failed_mutation_publishes_nothing(callgate_session):
    recorder = Recorder()
    s = session_with(callgate_session, recorder)
    r = s.call("edit_file", path="a.txt", old_string="one", new_string="ONE")  # not read
    assert r.is_error
    s.expect_ok("read_file", {"path": "a.txt"})
    r = s.call("edit_file", path="a.txt", old_string="absent", new_string="x")
    assert r.is_error
    assert recorder.tool_batches() == []


def test_the_watcher_publishes_what_a_shell_command_changed(callgate_session):
    recorder = Recorder()
    s = session_with(callgate_session, recorder)
    assert s.session.extension(callgate_files.FILE_WATCH).watching.wait(10)
    assert s.session.file_changes.watched.is_set()
    s.expect_ok("bash", {"command": "echo more >> a.txt; rm b.txt; echo n > d.txt"})
    want = {("a.txt", "changed"), ("b.txt", "deleted"), ("d.txt", "created")}
    deadline = time.monotonic() + 10
    while not want <= recorder.watched() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert want <= recorder.watched()


def test_a_listener_that_raises_costs_nothing(callgate_session):
    recorder = Recorder()
    s = session_with(callgate_session, recorder)

    def broken(batch: Any) -> None:
        raise RuntimeError("boom")

    s.session.file_changes.subscribe(broken)
    s.expect_ok("write_file", {"path": "n.txt", "content": "x\n"})
    assert recorder.tool_batches() == [[("n.txt", "created")]]
    unsubscribe = s.session.file_changes.subscribe(recorder.listen)
    unsubscribe()
    s.expect_ok("write_file", {"path": "m.txt", "content": "x\n"})
    assert len(recorder.tool_batches()) == 2  # the unsubscribed copy heard nothing


def test_without_the_watcher_the_feed_says_so(callgate_session):
    recorder = Recorder()
    s = session_with(callgate_session, recorder, config={"files": {"watch": False}})
    s.expect_ok("write_file", {"path": "n.txt", "content": "x\n"})
    assert not s.session.file_changes.watched.is_set()
    assert recorder.tool_batches() == [[("n.txt", "created")]]
