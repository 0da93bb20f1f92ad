"""Background jobs and timeouts inside the sandbox: a job is listed, read and killed,
and nothing of its confined tree survives (checked on the host with psutil)."""

from __future__ import annotations

import re
import time
import uuid

from callgate_shell import JOBS

from .sandbox_helpers import alive, needs_bwrap, processes_running, wait_until

pytestmark = needs_bwrap


def unique_sleep() -> str:
    """A sleep whose command line no other process has (pids inside are namespaced)."""
    return f"sleep 60.{uuid.uuid4().int % 10**9:09d}"


def test_a_background_job_runs_in_the_sandbox_and_is_listed_read_and_killed(sandboxed):
    s = sandboxed()
    first, second = unique_sleep(), unique_sleep()
    command = f"echo started; touch /etc/never 2>&1; {first} & {second} & wait"
    r = s.call("bash", {"command": command, "run_in_background": True, "description": "nest"})
    assert r.text.startswith("Started background job bash-1: nest\n")
    job_pid = r.meta["pid"]
    assert wait_until(lambda: len(processes_running(first)) == 1
                      and len(processes_running(second)) == 1, 10)
    tree = [*processes_running(first), *processes_running(second)]
    assert all(p.pid != job_pid for p in tree)

    r = s.call("job_output", {"job_id": "bash-1", "wait": True, "timeout_ms": 500})
    assert r.text.startswith("[bash-1] running\nstarted\n")
    assert "Read-only file system" in r.text  # the job is confined too
    listing = s.call("job_output", {}).text.splitlines()
    assert listing[0] == "Background jobs in this session: 1 (1 running)"
    assert re.match(r"^bash-1  running  exit=-  runtime=\d+\.\ds  unread=0B  nest$", listing[1])

    started = time.monotonic()
    r = s.call("job_kill", {"job_id": "bash-1"})
    assert r.text == "Kill requested for background job bash-1; it will settle as killed."
    assert time.monotonic() - started < 1
    assert s.call("job_output", {"job_id": "bash-1"}).text.startswith("[bash-1] killed (job_kill)")
    assert wait_until(lambda: not alive(tree), 5), alive(tree)
    assert processes_running(first) == [] and processes_running(second) == []
    assert wait_until(lambda: s.session.extension(JOBS).get("bash-1").finished.is_set(), 5)


def test_a_failed_job_carries_the_hint_among_its_notes(sandboxed, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    s = sandboxed(workspace=ws)
    s.call("bash", {"command": "echo x > ../outside.txt", "run_in_background": True})
    assert wait_until(lambda: s.session.extension(JOBS).get("bash-1").finished.is_set(), 10)
    r = s.call("job_output", {"job_id": "bash-1"})
    lines = r.text.splitlines()
    assert lines[0] == "[bash-1] failed (exit code 1)"
    assert lines[1].endswith("line 1: ../outside.txt: Permission denied")
    assert lines[-1] == ("[note: the sandbox keeps ../outside.txt read-only (only the workspace "
                         f'and a private /tmp are writable); to allow writing there, add '
                         f'"{tmp_path}" to [sandbox] writable]')
    assert not (tmp_path / "outside.txt").exists()


def test_a_foreground_timeout_ends_the_whole_sandboxed_tree(sandboxed):
    s = sandboxed()
    first, second = unique_sleep(), unique_sleep()
    started = time.monotonic()
    r = s.call("bash", {"command": f"echo start; {first} & {second} & wait", "timeout_ms": 800})
    assert time.monotonic() - started < 5
    assert r.text == ("start\n[timed out after 800 ms; process group killed; output above is "
                      "partial]")
    assert wait_until(lambda: not processes_running(first) and not processes_running(second), 5)


def test_leftovers_of_a_finished_command_are_reaped(sandboxed):
    s = sandboxed()
    marker = unique_sleep()
    r = s.call("bash", {"command": f"{marker} >/dev/null 2>&1 & echo spawned"})
    assert r.text == "spawned\n[exit code 0]"
    assert wait_until(lambda: not processes_running(marker), 5)


def test_closing_the_session_ends_sandboxed_jobs(sandboxed):
    s = sandboxed()
    marker = unique_sleep()
    s.call("bash", {"command": f"{marker} & wait", "run_in_background": True})
    assert wait_until(lambda: processes_running(marker), 10)
    tree = processes_running(marker)
    s.close()
    assert wait_until(lambda: not alive(tree), 10)
