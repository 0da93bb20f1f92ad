"""Figure 5, process hygiene: background jobs started, read and killed, including jobs
that fork grandchildren and jobs whose processes ignore SIGTERM, leave nothing behind:
no surviving process, no zombie of the host, no file-descriptor or thread growth and no
temp-file growth once their sessions are closed.

Jobs run in sessions of 50 (the last one may be smaller). In each session half the
still-running jobs are stopped with job_kill and the rest by closing the session.
Every job writes the pids of its shell and children to a file, and each job is its own
process group, so survivors are looked for both by pid and by process group in /proc.
Grandchildren orphaned by the kill are reparented to PID 1; on this machine PID 1 reaps
lazily, so such zombies are counted apart ("orphans awaiting init"): they run nothing
and hold nothing, and the host cannot reap what is not its child.
"""

from __future__ import annotations

import os
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil
import pytest

from tests.jobs_view import jobs_of

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc (Linux)")

PER_SESSION = 50
KINDS = 6


def command(kind: int, pidfile: Path) -> str:
    p = str(pidfile)
    return {
        0: f"echo $$ >> {p}; exec sleep 60",
        1: f"echo $$ >> {p}; sleep 60 & echo $! >> {p}; sleep 60 & echo $! >> {p}; wait",
        2: f"trap '' TERM; echo $$ >> {p}; sleep 60 & echo $! >> {p}; "
           "while :; do sleep 0.2; done",
        3: f"echo $$ >> {p}; echo quick",
        4: f"echo $$ >> {p}; head -c 200000 /dev/zero | tr '\\0' x; echo",
        5: f"echo $$ >> {p}; (trap '' TERM; exec sleep 60) & echo $! >> {p}; wait",
    }[kind]


def proc_table() -> dict[int, tuple[str, int, int]]:
    """pid -> (state, ppid, pgid) for every process (Linux /proc)."""
    out = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                raw = fh.read()
        except OSError:
            continue
        fields = raw[raw.rfind(b")") + 2:].split()
        out[int(name)] = (fields[0].decode(), int(fields[1]), int(fields[2]))
    return out


def leftovers(pids: set[int], groups: set[int]) -> tuple[list[int], list[tuple[int, int]]]:
    """(live processes, (zombie, its parent) pairs) among ``pids`` and members of ``groups``."""
    live, zombies = [], []
    for pid, (state, ppid, pgid) in proc_table().items():
        if pid in pids or pgid in groups:
            if state in ("Z", "X"):
                zombies.append((pid, ppid))
            else:
                live.append(pid)
    return live, zombies


def host_zombies() -> list[int]:
    me = psutil.Process()
    return [c.pid for c in me.children(recursive=True) if c.status() == psutil.STATUS_ZOMBIE]


def shell_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("callgate-shell-")]


def own_threads() -> int:
    """Live threads, leaving out anyio's idle worker threads: anyio keeps a worker it once
    needed until a later ``to_thread`` call finds it idle for 10 s, so how many remain
    says how many calls once overlapped, not that anything leaked. callgate's own tool
    workers (``callgate-tool``) are counted: they end after 30 s idle, which the test waits for."""
    return sum(1 for t in threading.enumerate() if t.name != "AnyIO worker thread")


def wait_for(check: Callable[[], bool], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return check()


def test_background_jobs_started_read_and_killed_leave_nothing_behind(
        callgate_session: Callable[..., Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        cases: Callable[[int, int], int], figure: Callable[..., None]) -> None:
    total = cases(1000, 12)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))  # session scratch dirs land here
    pid_dir = tmp_path / "pids"
    pid_dir.mkdir()
    config = {"shell": {"max_running_jobs": PER_SESSION}}
    warm = callgate_session(entrypoints=["shell"], config=config)  # one host for every session
    warm.call("bash", {"command": "true", "run_in_background": True})
    warm.call("job_output", {"job_id": "bash-1", "wait": True, "timeout_ms": 5000})
    warm.close()
    me = psutil.Process()
    fds_before, threads_before = me.num_fds(), own_threads()
    temps_before = sorted(os.listdir(scratch))
    failures: list[str] = []
    all_pids: set[int] = set()
    all_groups: set[int] = set()
    stats = {"jobs": 0, "killed_by_job_kill": 0, "ended_by_session_close": 0,
             "finished_on_their_own": 0, "ignored_sigterm": 0, "with_grandchildren": 0}
    started_at = 0
    while started_at < total:
        n = min(PER_SESSION, total - started_at)
        s = callgate_session(host=warm.host)
        ids: dict[str, int] = {}
        for i in range(started_at, started_at + n):
            kind = i % KINDS
            r = s.call("bash", {"command": command(kind, pid_dir / f"{i}.pids"),
                                "run_in_background": True, "description": f"job {i}"})
            if r.is_error:
                failures.append(f"job {i}: did not start: {r.text[:200]}")
                continue
            ids[r.meta["job_id"]] = kind
            stats["jobs"] += 1
            stats["ignored_sigterm"] += kind in (2, 5)
            stats["with_grandchildren"] += kind in (1, 2, 5)
        jobs = jobs_of(s)
        # every job has written its pids before it is read, so none is missed later
        batch = range(started_at, started_at + n)
        wait_for(lambda batch=batch: all((pid_dir / f"{i}.pids").exists() for i in batch), 10)
        for job_id in ids:
            r = s.call("job_output", {"job_id": job_id})
            if r.is_error or not r.text.startswith(f"[{job_id}]"):
                failures.append(f"{job_id}: job_output gave {r.text[:120]!r}")
        for job_id, kind in ids.items():
            if kind in (3, 4):
                r = s.call("job_output", {"job_id": job_id, "wait": True, "timeout_ms": 10000})
                if not r.text.startswith(f"[{job_id}] done (exit code 0)"):
                    failures.append(f"{job_id}: expected done, got {r.text[:120]!r}")
                stats["finished_on_their_own"] += 1
        running = [j for j in ids if jobs.get(j).running]
        to_kill = running[::2]
        for job_id in to_kill:
            r = s.call("job_kill", {"job_id": job_id})
            if not r.text.startswith("Kill requested"):
                failures.append(f"{job_id}: job_kill gave {r.text[:120]!r}")
        if not wait_for(lambda jobs=jobs, to_kill=to_kill: all(
                jobs.get(j).finished.is_set() for j in to_kill), 30):
            failures.append("killed jobs did not settle within 30 s")
        stats["killed_by_job_kill"] += len(to_kill)
        stats["ended_by_session_close"] += len(running) - len(to_kill)
        groups = {jobs.get(j).pid for j in ids if jobs.get(j).pid}
        s.close()
        pids = {int(x) for i in batch if (pid_dir / f"{i}.pids").exists()
                for x in (pid_dir / f"{i}.pids").read_text().split()}
        all_pids |= pids
        all_groups |= groups
        if not wait_for(lambda pids=pids, groups=groups: not leftovers(pids, groups)[0], 5):
            failures.append(f"jobs {started_at}-{started_at + n - 1}: surviving processes "
                            f"{leftovers(pids, groups)[0]}")
        started_at += n
    wait_for(lambda: not host_zombies() and not shell_threads(), 10)
    live, orphans = leftovers(all_pids, all_groups)
    zombies = host_zombies()
    adopted = [pid for pid, ppid in orphans if ppid != os.getpid()]
    if len(adopted) != len(orphans):
        failures.append(f"zombies parented by the host: {orphans}")
    # tool workers that overlapping calls needed end after 30 s idle (_worker._IDLE_S)
    wait_for(lambda: own_threads() <= threads_before, 40)
    fds_after, threads_after = me.num_fds(), own_threads()
    temps_after = sorted(os.listdir(scratch))
    if live:
        failures.append(f"surviving processes: {live[:20]}")
    if zombies:
        failures.append(f"zombies of the host process: {zombies[:20]}")
    if fds_after > fds_before:
        failures.append(f"file descriptors grew: {fds_before} -> {fds_after}")
    if shell_threads() or threads_after > threads_before:
        failures.append(f"threads grew: {threads_before} -> {threads_after} "
                        f"{sorted(t.name for t in threading.enumerate())}")
    if temps_after != temps_before:
        failures.append(f"temp entries left: {sorted(set(temps_after) - set(temps_before))}")
    figure("process hygiene", cases=stats["jobs"], processes_tracked=len(all_pids),
           surviving=len(live), host_zombies=len(zombies),
           orphans_awaiting_init=len(adopted),
           orphan_parents=sorted({ppid for _, ppid in orphans}), fds=f"{fds_before}->{fds_after}",
           threads=f"{threads_before}->{threads_after}",
           temp_entries=f"{len(temps_before)}->{len(temps_after)}", failures=len(failures),
           **stats)
    assert not failures, "\n".join(failures[:20])
