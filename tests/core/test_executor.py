"""The executor seam and ``callgate worker`` (issue 37): a session's judged calls run on a
worker over the versioned stdio protocol; a local session is unchanged; a worker that
dies or a cancel never wedges the session; only the user's config names a transport.

The worker here is ``callgate worker`` started directly (the transport any real backend
puts ssh, podman, kubectl or bwrap in front of); tests/core/test_executor_bwrap.py runs
one in a mount namespace of its own.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import callgate_files
import callgate_search
import callgate_shell
import pytest
from callgate import ToolCall, hookimpl, sync
from callgate._executor import protocol
from callgate._executor.remote import RemoteExecutor
from callgate._pipeline import pipeline
from callgate._pipeline.executor import LOCAL

WORKER = [sys.executable, "-m", "callgate_cli", "worker", "--workspace", "{workspace}"]
PLUGINS = [callgate_files, callgate_search, callgate_shell]
CONFIG = {"files": {"watch": False}}
_ids = iter(range(1, 1 << 30))


def call(name: str, **arguments: Any) -> ToolCall:
    return ToolCall(f"c{next(_ids)}", name, arguments)


@pytest.fixture
def host() -> Any:
    with sync.Host.boot(CONFIG, plugins=PLUGINS, entrypoints=False, surface="full") as booted:
        yield booted


def executor_of(session: Any) -> RemoteExecutor:
    executor = session.session.executor
    assert isinstance(executor, RemoteExecutor)
    return executor


# --- the seam -------------------------------------------------------------------------------


def test_a_local_session_runs_exactly_the_pipelines_stages(host: Any, tmp_path: Path) -> None:
    """Zero extra cost: a session bound to no worker runs `pipeline.dispatch` itself, the same
    stage tuple as before the seam (no indirection per call)."""
    session = host.open_session(tmp_path)
    assert session.session.executor is LOCAL
    assert session.session.state.stages == pipeline.stages_for(False)
    assert session.session.state.stages[-2:] == (pipeline.dispatch, pipeline.post_tool_use)


def test_a_remote_session_runs_its_tools_on_the_worker(host: Any, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello\n")
    session = host.open_session(tmp_path, executor=WORKER)
    read, edit, bash = (
        session.run(call("read_file", path="a.txt")),
        session.run(call("edit_file", path="a.txt", old_string="hello", new_string="bye")),
        session.run(call("bash", command="cat a.txt; echo pid=$PPID")),
    )
    assert not read.is_error and "hello" in read.text
    assert not edit.is_error, edit.text
    assert (tmp_path / "a.txt").read_text() == "bye\n"
    assert "bye" in bash.text
    conn = executor_of(session).link.connection
    assert conn is not None and conn.handshake["pid"] != os.getpid()
    stages = session.session.state.stages
    assert stages[-2:] == (executor_of(session).dispatch, pipeline.post_tool_use)
    assert pipeline.dispatch not in stages  # only dispatch moved to the worker


def test_the_handshake_states_version_os_workspace_and_capabilities(
    host: Any, tmp_path: Path
) -> None:
    session = host.open_session(tmp_path, executor=WORKER)
    session.run(call("ls", path="."))
    shake = executor_of(session).link.connection.handshake
    assert shake["protocol"] == protocol.PROTOCOL
    assert shake["os"] == sys.platform and shake["platform"] == "posix"
    assert shake["workspace"] == os.path.realpath(tmp_path)
    caps = shake["capabilities"]
    assert {"read_file", "edit_file", "grep", "bash", "job_output"} <= set(caps["tools"])
    assert caps["cancel"] and caps["progress"] and caps["notices"] and caps["sessions"]


def test_remote_and_local_answer_a_transcript_alike(host: Any, tmp_path: Path) -> None:
    """The same calls, local and remote, give the same results (run-specific facts aside):
    the stale guard, confinement and not-found errors included."""
    calls = [
        ("read_file", {"path": "a.txt"}),
        ("edit_file", {"path": "a.txt", "old_string": "one", "new_string": "two"}),
        ("write_file", {"path": "b.txt", "content": "x"}),  # never read: refused
        ("read_file", {"path": "../outside.txt"}),
        ("read_file", {"path": "missing.txt"}),
        ("grep", {"pattern": "two"}),
        ("glob", {"pattern": "*.txt"}),
    ]
    answers = []
    for remote in (False, True):
        ws = tmp_path / ("remote" if remote else "local")
        ws.mkdir()
        (ws / "a.txt").write_text("one\n")
        (ws / "b.txt").write_text("b\n")
        session = host.open_session(ws, executor=WORKER if remote else [])
        answers.append(
            [
                (r.is_error, r.error.signature if r.error else None, r.text.replace(str(ws), "WS"))
                for r in (session.run(call(n, **a)) for n, a in calls)
            ]
        )
        session.close()
    assert answers[0] == answers[1]
    assert answers[1][2][1] is not None  # the write of an unread file was refused remotely


class _AroundTheTool:
    """Hooks before and after the tool, kept in this process (an object cannot travel to a
    worker): what they saw, and a post-tool-use answer that adds a line."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, str]] = []

    @hookimpl
    def callgate_pre_tool_use(self, call: ToolCall, tool: Any, session: Any) -> Any:
        async def later() -> None:  # an awaitable answer, as a hook that runs a program gives
            self.seen.append(("pre", call.name, ""))

        return later()

    @hookimpl
    def callgate_post_tool_use(self, call: ToolCall, tool: Any, result: Any, session: Any) -> Any:
        self.seen.append(("post", call.name, result.text))
        return result.with_text(result.text + "\n[checked on the host]")


def test_the_hooks_around_a_remote_tool_run_on_the_host(tmp_path: Path) -> None:
    """A session bound to a worker moves only dispatch there: its pre- and post-tool-use
    hooks run here, with the session's policy, around the tool the worker ran (the
    post-tool-use hook sees the worker's result and its answer is the call's)."""
    (tmp_path / "a.txt").write_text("hello\n")
    around = _AroundTheTool()
    with sync.Host.boot(
        CONFIG, plugins=[*PLUGINS, around], entrypoints=False, surface="full"
    ) as booted:
        session = booted.open_session(tmp_path, executor=WORKER)
        session.run(call("read_file", path="a.txt"))
        edit = session.run(call("edit_file", path="a.txt", old_string="hello", new_string="bye"))
        conn = executor_of(session).link.connection
        assert conn is not None and conn.handshake["pid"] != os.getpid()
        session.close()
    assert not edit.is_error, edit.text
    assert edit.text.endswith("[checked on the host]")
    assert (tmp_path / "a.txt").read_text() == "bye\n"  # the worker edited it
    assert [(when, name) for when, name, _text in around.seen] == [
        ("pre", "read_file"),
        ("post", "read_file"),
        ("pre", "edit_file"),
        ("post", "edit_file"),
    ]
    assert "[checked on the host]" not in around.seen[-1][2]  # the worker's own result


def test_a_tool_that_runs_at_the_host_stays_here(tmp_path: Path) -> None:
    """A tool declaring ``runs_at="host"`` (it asks the user, opens children, reads the
    store) runs in the host process even in a remote session."""
    import callgate_workflow

    with sync.Host.boot(
        CONFIG, plugins=[*PLUGINS, callgate_workflow], entrypoints=False, surface="full"
    ) as host:
        session = host.open_session(tmp_path, executor=WORKER)
        todo = session.run(
            call("todo_write", todos=[{"content": "x", "status": "pending", "id": "1"}])
        )
        assert not todo.is_error, todo.text
        conn = executor_of(session).link.connection
        assert conn is None or "todo_write" not in conn.served


def test_a_tool_the_worker_lacks_is_refused_not_run_here(tmp_path: Path) -> None:
    """A workspace tool whose plugin the worker does not load is refused with the reason;
    the host never runs it against its own file system instead."""
    with sync.Host.boot(CONFIG, plugins=PLUGINS, entrypoints=False, surface="full") as host:
        session = host.open_session(tmp_path, executor=WORKER)
        conn_argv = executor_of(session)
        # the host's modules are what the worker loads: drop search from what it is told
        boot = host.host.worker_boot
        host.host.worker_boot = lambda: {**boot(), "modules": ["callgate_files"]}  # type: ignore[method-assign]
        try:
            result = session.run(call("grep", pattern="x"))
        finally:
            del host.host.worker_boot
        assert result.is_error and result.error.signature == "executor:not_served"
        assert conn_argv.link.connection is not None


# --- a worker that dies, a cancel -------------------------------------------------------------


def _run_in_thread(session: Any, tool_call: ToolCall) -> tuple[threading.Thread, list[Any]]:
    out: list[Any] = []
    thread = threading.Thread(target=lambda: out.append(session.run(tool_call)), daemon=True)
    thread.start()
    return thread, out


def _wait_for(predicate: Any, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting")
        time.sleep(0.05)


def _processes_with(marker: str) -> list[int]:
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                if marker.encode() in fh.read() and int(pid) != os.getpid():
                    found.append(int(pid))
        except OSError:
            continue
    return found


def test_a_worker_that_dies_fails_the_call_in_flight_and_the_next_call_works(
    host: Any, tmp_path: Path
) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    session = host.open_session(tmp_path, executor=WORKER)
    session.run(call("read_file", path="a.txt"))
    conn = executor_of(session).link.connection
    thread, out = _run_in_thread(session, call("bash", command="sleep 60.123"))
    _wait_for(lambda: _processes_with("60.123"))
    os.kill(conn.handshake["pid"], 9)
    thread.join(30)
    assert not thread.is_alive(), "the session waited on a dead worker"
    [died] = out
    assert died.is_error and died.error.signature == "executor:worker_exited"
    assert "exited" in died.text and "unknown" in died.text
    again = session.run(call("read_file", path="a.txt"))  # a new worker: not wedged
    assert not again.is_error, again.text
    assert "a new one was started" in again.text  # told: observations and jobs are gone
    assert executor_of(session).link.restarts == 1


def test_a_worker_that_never_starts_is_a_clear_error(host: Any, tmp_path: Path) -> None:
    session = host.open_session(tmp_path, executor=["/nonexistent/callgate-worker"])
    result = session.run(call("read_file", path="a.txt"))
    assert result.is_error and result.error.signature == "executor:unavailable"
    assert "could not be started" in result.text
    broken = host.open_session(tmp_path, executor=[sys.executable, "-c", "print('hello')"])
    result = broken.run(call("read_file", path="a.txt"))
    assert result.is_error and result.error.signature == "executor:unavailable"
    assert "not a protocol message" in result.text or "exited" in result.text


def test_a_worker_of_another_protocol_version_is_refused(host: Any, tmp_path: Path) -> None:
    other = (
        "import sys, json\n"
        "line = sys.stdin.readline()\n"
        "req = json.loads(line)\n"
        "print(json.dumps({'jsonrpc': '2.0', 'id': req['id'], 'result': {'protocol': 99}}))\n"
        "sys.stdout.flush(); sys.stdin.readline()\n"
    )
    session = host.open_session(tmp_path, executor=[sys.executable, "-c", other])
    result = session.run(call("read_file", path="a.txt"))
    assert result.is_error and "protocol 99" in result.text


def test_a_cancel_reaches_the_workers_process_group(host: Any, tmp_path: Path) -> None:
    session = host.open_session(tmp_path, executor=WORKER)
    session.run(call("ls", path="."))
    thread, out = _run_in_thread(session, call("bash", command="sleep 61.456 & sleep 62.456"))
    _wait_for(lambda: _processes_with("61.456") and _processes_with("62.456"))
    session.session.cancel()
    thread.join(30)
    [result] = out
    assert (result.is_error and result.error.kind == "cancelled") or result.meta.get("cancelled")
    _wait_for(lambda: not _processes_with("61.456") and not _processes_with("62.456"))
    after = session.run(call("bash", command="echo fine"))  # the next batch is not cancelled
    assert "fine" in after.text


def test_closing_the_session_ends_the_worker(host: Any, tmp_path: Path) -> None:
    session = host.open_session(tmp_path, executor=WORKER)
    session.run(call("ls", path="."))
    pid = executor_of(session).link.connection.handshake["pid"]
    session.close()
    _wait_for(lambda: not os.path.exists(f"/proc/{pid}") or _zombie(pid))


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[1].split()[0] == "Z"
    except OSError:
        return True


def test_a_child_session_works_on_its_parents_worker(host: Any, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    session = host.open_session(tmp_path, executor=WORKER)
    session.run(call("read_file", path="a.txt"))
    child = sync.Session(host, host.portal.call(_open_child, session.session))
    result = child.run(call("edit_file", path="a.txt", old_string="a", new_string="b"))
    assert result.is_error and result.error.kind == "not_observed"  # its own, empty ledger
    assert executor_of(child).link is executor_of(session).link
    child.close()


async def _open_child(session: Any) -> Any:
    return session.open_child()


# --- config: the user's alone -------------------------------------------------------------------


def _replay(
    lines: list[dict[str, Any]], workspace: Path, *args: str
) -> subprocess.CompletedProcess[str]:
    text = "\n".join(json.dumps(line) for line in lines) + "\n"
    return subprocess.run(
        [sys.executable, "-m", "callgate_cli", "replay", "-", "--workspace", str(workspace), *args],
        input=text,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_user_config_binds_sessions_to_a_worker(user_config: Path, tmp_path: Path) -> None:
    marker = tmp_path / "started"
    argv = ["sh", "-c", f'touch "{marker}"; exec "$0" "$@"', *WORKER]
    (user_config / "config.toml").write_text(f"[executor]\ntransport = {json.dumps(argv)}\n")
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("x\n")
    done = _replay([{"name": "read_file", "arguments": {"path": "a.txt"}}], ws)
    assert done.returncode == 0, done.stderr
    assert marker.exists()  # the configured transport ran
    assert json.loads(done.stdout.splitlines()[0])["is_error"] is False


def test_a_workspace_config_cannot_name_a_transport(tmp_path: Path) -> None:
    """The attack: a workspace's callgate.toml names a program as its executor transport.
    Nothing may start it (the key is user-only: it names a program)."""
    marker = tmp_path / "pwned"
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("x\n")
    argv = ["sh", "-c", f'touch "{marker}"']
    (ws / "callgate.toml").write_text(f"[executor]\ntransport = {json.dumps(argv)}\n")
    (ws / "pyproject.toml").write_text(
        f"[tool.callgate.executor]\ntransport = {json.dumps(argv)}\n"
    )
    done = _replay([{"name": "read_file", "arguments": {"path": "a.txt"}}], ws)
    assert done.returncode == 0, done.stderr
    assert not marker.exists()
    assert json.loads(done.stdout.splitlines()[0])["is_error"] is False  # ran here
    host = sync.Host.boot(None, workspace=ws, plugins=PLUGINS, entrypoints=False)
    assert host.config("executor")["transport"] == []
    host.close()


def test_replay_executor_runs_a_workspace_the_host_does_not_have(tmp_path: Path) -> None:
    """``--executor``: the workspace is the worker's; it need not exist here."""
    real = tmp_path / "real"
    real.mkdir()
    (real / "a.txt").write_text("worker side\n")
    ghost = tmp_path / "ghost"  # does not exist on the host
    argv = [*WORKER[:-1], str(real)]
    done = _replay(
        [{"name": "read_file", "arguments": {"path": "a.txt"}}],
        ghost,
        "--executor",
        json.dumps(argv),
    )
    assert done.returncode == 0, done.stderr
    assert "worker side" in json.loads(done.stdout.splitlines()[0])["content"]
    assert not ghost.exists()


@pytest.mark.parametrize("bad", ["not json", '"a string"', "[1, 2]", '["ok", ""]'])
def test_replay_refuses_a_bad_executor_and_changes_nothing(tmp_path: Path, bad: str) -> None:
    (tmp_path / "a.txt").write_text("x\n")
    before = sorted(os.listdir(tmp_path))
    done = _replay(
        [{"name": "write_file", "arguments": {"path": "b.txt", "content": "y"}}],
        tmp_path,
        "--executor",
        bad,
    )
    assert done.returncode == 2
    assert "--executor must be a JSON array" in done.stderr
    assert sorted(os.listdir(tmp_path)) == before


def test_the_wire_keeps_a_result_whole() -> None:
    from callgate import ToolResult
    from callgate._model.values import ImageBlock, TextBlock

    result = ToolResult(
        content=[TextBlock("a\udcff b"), ImageBlock("image/png", b"\x89PNG\x00")],
        meta={"exit_code": 3, "nested": {"x": [1, 2]}},
    )
    line = protocol.response(1, protocol.result_to_wire(result))
    back = protocol.result_from_wire(protocol.decode(line)["result"])
    assert back.content == result.content and back.meta == result.meta
    failure = ToolResult.failure("not_found", "no such file", "not_found")
    again = protocol.result_from_wire(protocol.result_to_wire(failure))
    assert again.error == failure.error and again.is_error


@pytest.mark.parametrize("filtered", [True, False])
def test_a_workers_commands_see_secrets_only_when_the_user_config_passes_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, filtered: bool
) -> None:
    """The spawn door drops secret-looking variables from the transport's environment; the
    handshake hands the worker the ones the host's shell would pass (`Host.worker_environ`):
    none by default, exactly those with ``[shell] filter_secret_env = false``."""
    monkeypatch.setenv("GH_TOKEN", "gh-secret-1")
    monkeypatch.setenv("PLAIN_VALUE", "p-1")
    config = {**CONFIG, "shell": {"filter_secret_env": filtered}}
    with sync.Host.boot(config, plugins=PLUGINS, entrypoints=False) as booted:
        session = booted.open_session(tmp_path, executor=WORKER)
        out = session.run(call("bash", command="echo ${GH_TOKEN:-none} ${PLAIN_VALUE:-none}"))
        conn = executor_of(session).link.connection
        assert conn is not None
        worker_env = psutil_environ(conn.handshake["pid"])
        session.close()
    assert out.text.splitlines()[0] == ("none p-1" if filtered else "gh-secret-1 p-1")
    # the transport's own environment never carries it (only the handshake, when allowed)
    assert "GH_TOKEN" not in worker_env and worker_env.get("PLAIN_VALUE") == "p-1"


def psutil_environ(pid: int) -> dict[str, str]:
    import psutil

    return psutil.Process(pid).environ()


def test_a_cancel_before_the_call_reaches_the_worker_still_reaches_its_tool(
    host: Any, tmp_path: Path
) -> None:
    """The host writes a cancel the moment it subscribes, which can be before the call's
    own request (here: while the worker is still starting). The worker keeps it for that
    batch: bash sees ``ctx.cancelled`` and ends its group, as locally; the host never has
    to abandon the call."""
    ws = tmp_path / "ws"
    ws.mkdir()
    started, go = tmp_path / "started", tmp_path / "go"
    slow = [
        "sh", "-c", f'touch {started}; while [ ! -e {go} ]; do sleep 0.05; done; exec "$@"',
        "sh", *WORKER,
    ]  # fmt: skip
    session = host.open_session(ws, executor=slow)
    thread, out = _run_in_thread(session, call("bash", command="sleep 63.789"))
    _wait_for(started.exists)
    session.session.cancel()
    go.touch()
    thread.join(60)
    [result] = out
    assert result.is_error and result.error.kind == "cancelled", result.text
    assert not result.meta.get("abandoned"), result.text
    assert not _processes_with("63.789")


def test_a_remote_sessions_jobs_are_seen_through_its_snapshot(host: Any, tmp_path: Path) -> None:
    """A dashboard of a remote session sees the jobs its worker runs (`Session.snapshot`):
    the host's own table is empty, the worker's has the job."""
    from callgate_shell import JOBS

    session = host.open_session(tmp_path, executor=WORKER)
    started = session.run(call("bash", command="echo hi", run_in_background=True))
    assert not started.is_error, started.text
    _wait_for(lambda: session.snapshot(JOBS)["jobs"][0]["finished"])
    [job] = session.snapshot(JOBS)["jobs"]
    assert (job["id"], job["status"], job["exit_code"]) == ("bash-1", "done", 0)
    assert session.session.extension(JOBS).jobs() == []  # nothing ran here


class _ObjectSandbox:
    """A sandbox plugin registered as an object: a worker cannot boot it by name."""

    @hookimpl
    def callgate_confine_process(self, launch: Any, session: Any) -> Any:
        from callgate.process import Confined

        return Confined(argv=["env", "CONFINED=yes", *launch.argv], env=launch.env,
                        cwd=launch.cwd)


def test_a_sandbox_the_worker_cannot_boot_refuses_the_remote_call(tmp_path: Path) -> None:
    """Fail closed: a worker boots the host's plugin modules and entry points by name; a
    sandbox registered as an object cannot travel, so rather than run the worker's programs
    unconfined, no worker starts and the call is refused; nothing runs (locally the same
    sandbox wraps the command)."""
    plugins = [*PLUGINS, _ObjectSandbox()]
    with sync.Host.boot(CONFIG, plugins=plugins, entrypoints=False) as booted:
        local = booted.open_session(tmp_path).run(call("bash", command="echo $CONFINED"))
        session = booted.open_session(tmp_path, executor=WORKER)
        remote = session.run(call("bash", command="echo $CONFINED > ran.txt"))
        assert executor_of(session).link.connection is None  # no worker was started
        session.close()
    assert local.text.startswith("yes")
    assert remote.is_error and remote.error.kind == "unavailable", remote.text
    assert "callgate_confine_process" in remote.text and "unconfined" in remote.text
    assert not (tmp_path / "ran.txt").exists()


class _PassesItsToken:
    """A plugin whose programs get ``DEPLOY_TOKEN`` (a secret-looking name) by its choice."""

    @hookimpl
    def callgate_program_environment(self, host: Any) -> Any:
        from callgate.process import Environment

        return Environment(inherit="minimal", keep=("DEPLOY_TOKEN",))


def test_a_plugins_program_environment_reaches_the_worker_and_nothing_more(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`callgate_program_environment`: the worker is handed exactly the variables a plugin's
    programs get that the transport lacks: the token the plugin keeps, not another secret."""
    monkeypatch.setenv("DEPLOY_TOKEN", "dt-1")
    monkeypatch.setenv("OTHER_SECRET", "os-1")
    with sync.Host.boot(CONFIG, plugins=[*PLUGINS, _PassesItsToken()], entrypoints=False) as h:
        assert h.worker_environ() == {"DEPLOY_TOKEN": "dt-1"}
        session = h.open_session(tmp_path, executor=WORKER)
        out = session.run(call("bash", command="echo ${DEPLOY_TOKEN:-none} ${OTHER_SECRET:-none}"))
        session.close()
    assert out.text.splitlines()[0] == "none none"  # the shell's own filter still applies
