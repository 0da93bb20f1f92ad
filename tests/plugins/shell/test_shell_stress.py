"""200 background jobs started and killed: no zombies, no leaked descriptors or threads,
no surviving process (issue 4, stress)."""

from __future__ import annotations

import os
import threading

import psutil
import pytest
from shell_helpers import jobs_of, pid_alive, wait_until

pytestmark = pytest.mark.skipif(os.name != "posix", reason="needs POSIX")

JOBS = 200


def shell_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("callgate-shell-")]


def test_two_hundred_jobs_started_and_killed_leave_nothing_behind(shell):
    s = shell({"shell": {"max_running_jobs": JOBS}})
    s.call("bash", {"command": "true", "run_in_background": True})  # warm up: the job dir
    assert wait_until(lambda: jobs_of(s).get("bash-1").finished.is_set(), 5)
    me = psutil.Process()
    fds_before = me.num_fds()
    ids = []
    for _ in range(JOBS):
        r = s.call("bash", {"command": "sleep 60", "run_in_background": True})
        assert not r.is_error, r.text
        ids.append(r.meta["job_id"])
    pids = [jobs_of(s).get(i).pid for i in ids]
    assert all(pid_alive(pid) for pid in pids)
    assert s.call("job_output", {}).text.startswith(
        f"Background jobs in this session: {JOBS + 1} ({JOBS} running)")
    for job_id in ids:
        assert s.call("job_kill", {"job_id": job_id}).text.startswith("Kill requested")
    table = jobs_of(s)
    assert wait_until(lambda: all(table.get(i).finished.is_set() for i in ids), 60,
                      interval=0.2)
    assert wait_until(lambda: not shell_threads(), 10)
    assert not [pid for pid in pids if pid_alive(pid)]
    children = me.children(recursive=True)
    assert not [c for c in children if c.pid in pids]
    zombies = [c for c in me.children() if c.status() == psutil.STATUS_ZOMBIE]
    assert not zombies
    assert me.num_fds() <= fds_before, (fds_before, me.num_fds())
    assert all(jobs_of(s).get(i).status == "killed" for i in ids)
