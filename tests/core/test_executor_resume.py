"""Sessions bound to executors (issue 37): a session records its worker; with
``[executor] detach_grace_s`` the worker outlives its host for that long, keeping the
session's background jobs, and a resume after the host died reattaches to it.

Through the front door: ``callgate replay`` reading its transcript from a pipe, killed
with SIGKILL mid-session, then ``callgate replay --resume`` of the same session."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

WORKER = [sys.executable, "-m", "callgate_cli", "worker", "--workspace", "{workspace}"]
JOB = "echo one; while [ ! -e go ]; do sleep 0.05; done; echo two"

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="unix sockets, /proc")


def _wait_for(predicate: Callable[[], Any], seconds: float = 120.0) -> Any:
    deadline = time.monotonic() + seconds
    while not (found := predicate()):
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)
    return found


def _bwrap() -> list[str] | None:
    """The suites' bwrap transport (tests/conftest.py: a mount namespace of its own, the
    host's pid namespace, /tmp shared), if bwrap can make namespaces here."""
    from tests.conftest import bwrap_worker_transport

    bwrap = shutil.which("bwrap")
    if bwrap is None or subprocess.run([bwrap, "--ro-bind", "/", "/", "--", "true"],
                                       capture_output=True).returncode != 0:
        return None
    return bwrap_worker_transport()


class Replay:
    """``callgate replay`` of ``calls`` (name, arguments): its result lines as they come."""

    def __init__(self, workspace: Path, calls: list[tuple[str, dict[str, Any]]],
                 *extra: str, transport: list[str] = WORKER) -> None:
        argv = [sys.executable, "-m", "callgate_cli", "replay", "--workspace", str(workspace),
                "--surface", "full", "--executor", json.dumps(transport), *extra, "-"]
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        assert self.proc.stdin is not None
        for n, (name, arguments) in enumerate(calls):
            line = {"id": f"r{n}", "name": name, "arguments": arguments}
            self.proc.stdin.write(json.dumps(line) + "\n")
        self.proc.stdin.close()

    def result(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        answer = self.proc.stdout.readline()
        assert answer, self.proc.stderr.read() if self.proc.stderr else "no answer"
        return json.loads(answer)  # type: ignore[no-any-return]

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)  # the host dies: no close, no goodbye
        self.proc.wait(30)


def _session_id() -> str:
    listed = subprocess.run([sys.executable, "-m", "callgate_cli", "sessions", "list", "--json"],
                            capture_output=True, text=True, check=True).stdout
    [row] = [json.loads(line) for line in listed.splitlines() if line.strip()]
    return row["id"]  # type: ignore[no-any-return]


def _daemons() -> list[int]:
    """Worker daemons of this test (their command line names a socket in this test's
    private state directory)."""
    home = os.environ["CALLGATE_HOME"]
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"callgate._host.worker" in argv and any(home.encode() in a for a in argv):
            found.append(int(pid))
    return found


@pytest.fixture
def grace(user_config: Path) -> Callable[[float], None]:
    def set_grace(seconds: float) -> None:
        (user_config / "config.toml").write_text(f"[executor]\ndetach_grace_s = {seconds}\n")

    return set_grace


JOB = "echo one; while [ ! -e go ]; do sleep 0.05; done; echo two; touch finished"
START = ("bash", {"command": JOB, "run_in_background": True})
# the host is inside this call when it dies (a number of its own, to find its process)
BUSY_SECONDS = f"600.{os.getpid()}"
BUSY = ("bash", {"command": f"sleep {BUSY_SECONDS}"})


def _busy_running() -> bool:
    for pid in os.listdir("/proc"):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv[:2] == [b"sleep", BUSY_SECONDS.encode()] and _alive(int(pid)):
            return True
    return False


@pytest.mark.parametrize("where", ["worker", "bwrap"])
def test_a_resumed_session_reattaches_to_its_worker_and_reads_a_job_started_before(
    tmp_path: Path, grace: Callable[[float], None], where: str
) -> None:
    transport = WORKER if where == "worker" else _bwrap()
    if transport is None:
        pytest.skip("bwrap is missing or cannot make namespaces here (.ci/run installs it)")
    grace(120)
    ws = tmp_path / "ws"
    ws.mkdir()
    first = Replay(ws, [START, BUSY], transport=transport)
    try:
        started = first.result()
        assert not started["is_error"], started
        assert started["meta"]["job_id"] == "bash-1"
    finally:
        first.kill()
    daemons = _wait_for(_daemons)
    assert len(daemons) == 1, [Path(f"/proc/{p}/cmdline").read_bytes() for p in daemons]
    [daemon] = daemons
    # the call in flight had nobody left to answer: the daemon cancelled it (its command's
    # process group ended), while the background job runs on
    _wait_for(lambda: not _busy_running(), 60)

    second = Replay(ws, [
        ("job_output", {"job_id": "bash-1"}),
        ("bash", {"command": "touch go; while [ ! -e finished ]; do sleep 0.05; done"}),
        ("job_output", {"job_id": "bash-1"}),
    ], "--resume", _session_id(), transport=transport)
    seen, _released, later = second.result(), second.result(), second.result()
    assert second.proc.wait(60) == 0
    assert not seen["is_error"], seen
    assert seen["content"].startswith("[bash-1] running\none"), seen["content"]
    assert "reattached to this session's worker" in seen["content"]
    assert "two" in later["content"], later
    # the host closed the session: its worker ends at once, grace or not
    _wait_for(lambda: not _daemons(), 30)
    assert daemon not in _daemons()


def test_without_a_grace_period_the_worker_ends_with_its_host(
    tmp_path: Path, grace: Callable[[float], None]
) -> None:
    """The default: nothing outlives the host (issue 30's promise); a resume starts a new
    worker, where the old one's job is not running."""
    grace(0)
    ws = tmp_path / "ws"
    ws.mkdir()
    first = Replay(ws, [START, BUSY])
    try:
        assert not first.result()["is_error"]
        assert _daemons() == []
    finally:
        first.kill()
    second = Replay(ws, [("job_output", {"job_id": "bash-1"})], "--resume", _session_id())
    seen = second.result()
    assert second.proc.wait(60) == 0
    assert "[bash-1] running" not in seen["content"], seen
    assert "reattached" not in seen["content"]


def test_after_the_grace_period_the_worker_ends_its_jobs_and_a_resume_is_told(
    tmp_path: Path, grace: Callable[[float], None]
) -> None:
    grace(1)
    ws = tmp_path / "ws"
    ws.mkdir()
    first = Replay(ws, [START, BUSY])
    try:
        started = first.result()
        assert not started["is_error"], started
        job_pid = started["meta"]["pid"]
    finally:
        first.kill()
    _wait_for(lambda: not _daemons(), 60)  # nobody came back: it closed its sessions
    _wait_for(lambda: not _alive(job_pid), 30)
    assert not list((Path(os.environ["CALLGATE_HOME"]) / "workers").iterdir())
    second = Replay(ws, [("job_output", {"job_id": "bash-1"})], "--resume", _session_id())
    seen = second.result()
    assert second.proc.wait(60) == 0
    assert "worker from before the host restarted is gone" in seen["content"], seen
    assert "[bash-1] running" not in seen["content"]


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def _handshake(workspace: Path, worker: list[str] = WORKER, cwd: Path | None = None,
               **params: Any) -> dict[str, Any]:
    """``initialize`` sent straight to ``callgate worker``: its answer (then EOF)."""
    from callgate._executor import protocol

    message = protocol.request(1, "initialize", {
        "protocol": protocol.PROTOCOL, "callgate": "0",
        "boot": {"config": {}, "environ": {}, "entry_points": [], "modules": []}, **params})
    done = subprocess.run([*[a.replace("{workspace}", str(workspace)) for a in worker]],
                          input=message, capture_output=True, timeout=120, cwd=cwd)
    return json.loads(done.stdout.splitlines()[0])["result"]  # type: ignore[no-any-return]


def test_an_attach_that_is_not_an_identity_names_no_socket(tmp_path: Path) -> None:
    """``attach`` becomes a socket path only when it is 32 hex digits: a path in its place
    (here to a listening socket outside the workers' directory) reaches nothing; the
    worker serves by itself."""
    import socket

    outside = tmp_path / "elsewhere"
    outside.mkdir()
    workers = Path(os.environ["CALLGATE_HOME"]) / "workers"
    workers.mkdir(parents=True, mode=0o700)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(outside / "x.sock"))
    listener.listen(4)
    listener.settimeout(0.5)
    try:
        for attach in (str(outside / "x"), os.path.relpath(outside / "x", workers), "A" * 32):
            answer = _handshake(tmp_path, attach=attach)
            assert answer["daemon"] is None and answer["protocol"] == 1
            with pytest.raises(TimeoutError):
                listener.accept()  # nobody connected (a probe would have)
    finally:
        listener.close()


def test_a_socket_directory_others_may_enter_is_refused(tmp_path: Path) -> None:
    """The daemon's socket lives only in this user's private directory: a workers directory
    that others may enter (planted, or loosened) is not used; the worker serves by itself
    (the session then ends with its host) rather than listen where others could connect."""
    workers = Path(os.environ["CALLGATE_HOME"]) / "workers"
    workers.mkdir(parents=True)
    workers.chmod(0o777)
    assert _handshake(tmp_path, detach={"grace_s": 60})["daemon"] is None
    assert list(workers.iterdir()) == []
    workers.chmod(0o700)
    answer = _handshake(tmp_path, detach={"grace_s": 60})
    assert answer["daemon"] and len(answer["daemon"]) == 32
    _wait_for(lambda: not _daemons(), 30)  # its host left with no session open


def test_a_deep_state_directory_still_holds_a_daemons_socket(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A unix socket's address holds ~100 bytes; ``$CALLGATE_HOME`` may be deeper (a test
    worker's temp directory is): the socket is bound and reached through its directory."""
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    monkeypatch.setenv("CALLGATE_HOME", str(deep))
    answer = _handshake(tmp_path, detach={"grace_s": 60})
    assert answer["daemon"] and len(answer["daemon"]) == 32
    assert len(str(deep / "workers" / f"{answer['daemon']}.sock")) > 110
    _wait_for(lambda: not _daemons(), 30)  # its host left with no session open


def test_a_daemon_started_from_the_workspace_never_imports_from_it(tmp_path: Path) -> None:
    """The daemon is callgate's own code run with ``python -m``, which puts the current
    directory first on ``sys.path``: started from a workspace holding a planted ``callgate``
    package, it still runs the installed one (the worker here is started with ``-P`` so that
    only the daemon could pick the planted package up)."""
    ws = tmp_path / "ws"
    (ws / "callgate").mkdir(parents=True)
    ran = tmp_path / "planted-ran"
    (ws / "callgate" / "__init__.py").write_text(f"open({str(ran)!r}, 'w').close()\n")
    worker = [sys.executable, "-P", *WORKER[1:]]
    answer = _handshake(ws, worker, cwd=ws, detach={"grace_s": 60})
    assert not ran.exists()
    assert answer["daemon"] and len(answer["daemon"]) == 32
    _wait_for(lambda: not _daemons(), 30)  # its host left with no session open
