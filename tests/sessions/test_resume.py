"""A session survives its process (issue 18): resumed by id in a new process, it pages its
stored results, keeps its observations (still checked against the file), and gets back its
goals, todos, presented files, subagent records and finished jobs."""

from __future__ import annotations

import hashlib
import json
import os
import signal
from pathlib import Path
from typing import Any

import callgate_capability
import callgate_files
import callgate_goals
import callgate_shell
import callgate_tasks
import callgate_workflow
import pytest
from callgate import ToolCall, ToolResult, hookimpl
from callgate.store import StoreError, UnknownSession
from callgate_goals import GOALS
from callgate_workflow import PRESENTED_FILES, TODOS

from ..plugins.tasks.conftest import RunnerIntegration, ScriptedRunner
from .conftest import child, replay, results, spawn, store_path


def page_all(session: Any, call_id: str, ref: str | None = None) -> tuple[bytes, dict]:
    data, offset, header = b"", 0, {}
    while True:
        args = {"tool_call_id": call_id, "offset": offset, "limit": 24576}
        if ref:
            args["result_ref"] = ref
        result = session.run(ToolCall("p", "use_capability", {
            "action": "call", "capability_id": "session:tool_result", "arguments": args}))
        assert not result.is_error, result.text
        head, body = result.text.split("\n", 1)
        header = json.loads(head)
        data += body.encode()
        if header["complete"]:
            return data, header
        offset = header["next_offset"]


def test_a_100000_byte_result_pages_back_with_an_equal_sha256_after_a_restart(
        ws: Path, hosts: Any) -> None:
    [made] = child("emit", str(ws), "big", "100000")  # another process, now gone
    expected = "".join(chr(48 + i % 43) for i in range(100_000)).encode()
    host = hosts([callgate_capability, *_test_tools()], surface="lean")
    session = host.open_session(ws, resume=made["session"])
    assert session.id == made["session"] and session.resumed
    data, header = page_all(session, "big")
    assert len(data) == header["total_bytes"] == 100_000
    assert hashlib.sha256(data).hexdigest() == header["sha256"] == \
        hashlib.sha256(expected).hexdigest()
    assert header["result_ref"] == made["ref"]
    again, _ = page_all(session, "big", made["ref"])  # by the ref the marker showed
    assert again == expected


def _test_tools() -> list[Any]:
    from ._child import TestTools

    return [TestTools()]


def test_read_in_one_process_edit_in_another_then_stale_after_an_outside_change(
        ws: Path, store: Any) -> None:
    target = ws / "notes.txt"
    first = results(replay(ws, [{"id": "r1", "name": "read_file",
                                 "arguments": {"path": "notes.txt"}}]))
    assert not first["r1"]["is_error"]
    [info] = store.sessions(workspace=str(ws.resolve()))
    edit = {"id": "e1", "name": "edit_file", "arguments": {
        "path": "notes.txt", "old_string": "hello", "new_string": "goodbye"}}
    fresh = results(replay(ws, [edit]))  # a new session never read the file
    assert fresh["e1"]["is_error"] and target.read_text().startswith("hello")
    second = results(replay(ws, [edit], "--resume", info.id))
    assert not second["e1"]["is_error"], second["e1"]["content"]
    assert target.read_text() == "goodbye world\nsecond line\n"

    target.write_text("goodbye world\nchanged outside\n")  # after the session's own edit
    before = (target.read_bytes(), target.stat().st_mtime_ns)
    third = results(replay(ws, [{"id": "e2", "name": "edit_file", "arguments": {
        "path": "notes.txt", "old_string": "world", "new_string": "there"}}],
        "--resume", info.id[:12]))
    assert third["e2"]["is_error"]
    assert third["e2"]["error"]["kind"] == "stale_version", third["e2"]
    assert (target.read_bytes(), target.stat().st_mtime_ns) == before
    assert store.session(info.id).calls == 3


def test_goals_todos_presented_files_and_subagents_come_back(ws: Path, hosts: Any) -> None:
    plugins = [callgate_goals, callgate_workflow, callgate_tasks, callgate_files,
               RunnerIntegration(ScriptedRunner())]
    first = hosts(plugins).open_session(ws, origin="human")
    goal = json.loads(first.run(ToolCall("g", "create_goal", {"objective": "Ship"})).text)
    first.run(ToolCall("t", "todo_write", {"todos": [{"content": "A", "status": "pending"}]}))
    first.run(ToolCall("p", "present", {"files": [{"path": "notes.txt",
                                                   "description": "the notes"}]}))
    task = first.run(ToolCall("k", "task", {"description": "d", "prompt": "hello"}))
    ref = task.meta["subagents"][0]["ref"]
    sid = first.id
    first.close()

    again = hosts(plugins).open_session(ws, resume=sid, origin="human")
    restored = again.extension(GOALS).current()
    assert restored["id"] == goal["goal"]["id"] and restored["stop_reason"] == "cold-restore"
    assert [(t.id, t.content) for t in again.extension(TODOS).items()] == [("t1", "A")]
    assert again.extension(PRESENTED_FILES).entries() == [{"path": "notes.txt",
                                                "description": "the notes"}]
    page = again.run(ToolCall("r", "read_subagent_result", {"ref": ref}))
    assert "answer to hello" in page.text


@pytest.mark.skipif(os.name != "posix", reason="bash and kill -9")
def test_finished_jobs_read_back_and_running_ones_read_killed_after_the_host_died(
        ws: Path, hosts: Any) -> None:
    proc = spawn("jobs", str(ws))
    line = proc.stdout.readline()
    assert line, proc.stderr.read()
    made = json.loads(line)
    try:
        os.kill(proc.pid, signal.SIGKILL)  # the host dies; its running job does not
        proc.wait(timeout=30)
    finally:
        try:
            os.killpg(made["pid"], signal.SIGKILL)  # the orphan the dead host left
        except ProcessLookupError:
            pass
    host = hosts([callgate_shell, callgate_files])
    session = host.open_session(ws, resume=made["session"])
    done = session.run(ToolCall("o1", "job_output", {"job_id": made["done"]}))
    assert done.text.startswith(f"[{made['done']}] done (exit code 0)"), done.text
    assert "finished-output\nsecond line" in done.text
    again = session.run(ToolCall("o2", "job_output", {"job_id": made["done"]}))
    assert "(no new output)" in again.text  # the cursor moved, and is kept
    killed = session.run(ToolCall("o3", "job_output", {"job_id": made["running"]}))
    assert killed.text.startswith(f"[{made['running']}] killed (host exited)"), killed.text
    listing = session.run(ToolCall("o4", "job_output", {}))
    assert made["done"] in listing.text and made["running"] in listing.text
    new = session.run(ToolCall("b", "bash", {"command": "true", "run_in_background": True}))
    assert new.meta["job_id"] == "bash-3"  # ids continue after the earlier process's
    nothing = session.run(ToolCall("k", "job_kill", {"job_id": made["running"]}))
    assert "not running" in nothing.text


def test_an_unknown_session_is_a_clear_error_and_nothing_is_written(ws: Path,
                                                                    hosts: Any) -> None:
    host = hosts([callgate_files])
    host.open_session(ws).close()
    before = hashlib.sha256(store_path().read_bytes()).hexdigest()
    with pytest.raises(UnknownSession) as err:
        host.open_session(ws, resume="no-such-session")
    assert str(store_path()) in str(err.value) and "no-such-session" in str(err.value)
    proc = replay(ws, [{"id": "c", "name": "read_file", "arguments": {"path": "notes.txt"}}],
                  "--resume", "no-such-session")
    assert proc.returncode == 2 and str(store_path()) in proc.stderr and proc.stdout == ""
    assert hashlib.sha256(store_path().read_bytes()).hexdigest() == before


def test_a_session_resumes_only_in_its_own_workspace(ws: Path, tmp_path: Path,
                                                    hosts: Any) -> None:
    host = hosts([callgate_files])
    first = host.open_session(ws)
    sid = first.id
    first.close()
    elsewhere = tmp_path / "other"
    elsewhere.mkdir()
    with pytest.raises(StoreError, match=f"works in {ws.resolve()}"):
        host.open_session(elsewhere, resume=sid)


def test_record_off_keeps_nothing_and_cannot_resume(ws: Path, hosts: Any, store: Any) -> None:
    host = hosts([callgate_files, *_test_tools()], {"sessions": {"record": "off"}})
    session = host.open_session(ws)
    assert session.store is None and not session.storage.durable
    session.record_message("user", "not kept")
    result = session.run(ToolCall("c1", "emit", {"bytes": 100_000}))  # spills privately
    ref = result.meta["result_ref"]
    assert session.results.page("c1", ref).split("\n", 1)[1][:5] == "01234"
    session.close()
    assert store.sessions() == []
    with pytest.raises(StoreError, match='record = "off"'):
        host.open_session(ws, resume=session.id)


def test_record_calls_leaves_out_messages(ws: Path, hosts: Any, store: Any) -> None:
    host = hosts([callgate_files], {"sessions": {"record": "calls"}})
    session = host.open_session(ws)
    session.record_message("user", "private words")
    session.run(ToolCall("c1", "read_file", {"path": "notes.txt"}))
    session.close()
    assert [e.kind for e in store.entries(session.id)] == ["call"]


def test_messages_take_user_and_assistant_roles_only(ws: Path, hosts: Any) -> None:
    session = hosts([callgate_files]).open_session(ws)
    with pytest.raises(ValueError, match="system prompts are not recorded"):
        session.record_message("system", "You are a helpful assistant")
    with pytest.raises(TypeError):
        session.record_message("user", 42)


class Redactor:
    """A redaction plugin: shapes every result, removing the secret."""

    __name__ = "redactor"

    @hookimpl
    def callgate_shape_result(self, call: Any, tool: Any, result: ToolResult,
                              session: Any) -> ToolResult:
        return result.with_text(result.text.replace("hunter2", "[redacted]"))


def test_a_redaction_plugin_covers_the_store(ws: Path, hosts: Any, store: Any) -> None:
    (ws / "secret.txt").write_text("password=hunter2\n")
    session = hosts([callgate_files, Redactor()]).open_session(ws)
    shown = session.run(ToolCall("c1", "read_file", {"path": "secret.txt"}))
    assert "hunter2" not in shown.text and "[redacted]" in shown.text
    session.close()
    [call] = store.calls(session.id)
    assert "hunter2" not in call.text and "[redacted]" in call.text
    assert store.search("hunter2", kinds=("tool_output",)) == []


def test_a_named_session_is_joined_by_every_host_that_names_it(ws: Path, hosts: Any,
                                                               store: Any) -> None:
    a = hosts([callgate_files]).open_session(ws, name="shared")
    b = hosts([callgate_files]).open_session(ws, name="shared")  # while a is open
    assert a.id == b.id and b.resumed
    a.run(ToolCall("a1", "read_file", {"path": "notes.txt"}))
    b.run(ToolCall("b1", "read_file", {"path": "notes.txt"}))
    a.close()
    b.close()
    assert [c.call_id for c in store.calls(a.id)] == ["a1", "b1"]
    assert store.session("shared", prefix=False).calls == 2


def test_a_subagents_session_is_recorded_as_a_child_of_its_parent(ws: Path, hosts: Any,
                                                                  store: Any) -> None:
    from callgate_tasks import SubagentOutcome

    async def respond(request: Any) -> Any:
        await request.session.run(ToolCall("k1", "read_file", {"path": "notes.txt"}))
        return SubagentOutcome(status="completed", answer="read it")

    parent = hosts([callgate_tasks, callgate_files,
                    RunnerIntegration(ScriptedRunner(respond))]).open_session(ws)
    parent.run(ToolCall("t1", "task", {"description": "look", "prompt": "read notes"}))
    parent.close()
    [child] = store.children(parent.id)
    assert child.parent == parent.id and child.workspace == str(ws.resolve())
    assert [c.call_id for c in store.calls(child.id)] == ["k1"]
    assert [i.id for i in store.sessions()] == [parent.id]  # children are listed apart
    assert child.id in {i.id for i in store.sessions(children=True)}


def test_undecodable_names_and_lone_surrogates_are_recorded_and_come_back(
        ws: Path, hosts: Any, store: Any) -> None:
    """A file name that is not UTF-8 (its bytes kept as surrogates) stays observed after a
    restart, under exactly its name; arguments with a lone surrogate (refused by validation)
    are stored as they came."""
    raw = os.fsencode(str(ws.resolve())) + b"/caf\xe9.txt"
    with open(raw, "wb") as fh:
        fh.write(b"hello\n")
    first = hosts([callgate_files]).open_session(ws)
    first.files.read_text(os.fsdecode(b"caf\xe9.txt"), observe=True)  # as a plugin reads
    refused = first.run(ToolCall("g1", "read_file", {"path": "no\udcffne.txt"}))
    assert refused.error.kind == "invalid_arguments"
    observed = first.observations()
    sid = first.id
    first.close()
    assert store.calls(sid)[0].arguments == {"path": "no\udcffne.txt"}
    again = hosts([callgate_files]).open_session(ws, resume=sid)
    assert again.observations() == observed
    assert os.fsdecode(raw) in again.observations()
