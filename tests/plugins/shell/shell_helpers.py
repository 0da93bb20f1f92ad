"""Process helpers for the shell plugin's tests: liveness that counts zombies as dead,
polling, and finding the members of a process group."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from pathlib import Path

import psutil


def pid_alive(pid: int) -> bool:
    """``os.kill(pid, 0)`` as the spec says, with a zombie (dead, not yet reaped) as dead."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def wait_until(condition: Callable[[], bool], timeout: float, interval: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(interval)
    return condition()


def read_pid(path: Path, timeout: float = 5.0) -> int:
    assert wait_until(lambda: path.exists() and path.read_text().strip().isdigit(), timeout), \
        f"{path} never got a PID"
    return int(path.read_text().strip())


def group_members(pgid: int) -> list[psutil.Process]:
    out = []
    for proc in psutil.process_iter(["pid"]):
        with contextlib.suppress(psutil.Error, OSError):
            if os.getpgid(proc.pid) == pgid and proc.status() != psutil.STATUS_ZOMBIE:
                out.append(proc)
    return out


from tests.jobs_view import jobs_of  # noqa: E402  (re-exported for the shell tests)

__all__ = ["group_members", "jobs_of", "pid_alive", "read_pid", "wait_until"]
