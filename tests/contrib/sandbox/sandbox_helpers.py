"""Shared checks for the sandbox tests: whether bubblewrap can run here, waiting, and
finding processes by a marker in their command line (psutil)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import callgate_sandbox
import psutil
import pytest

PROBE = callgate_sandbox.BwrapBackend().probe()
needs_bwrap = pytest.mark.skipif(
    not PROBE.ok, reason=f"bubblewrap cannot run here, so nothing can be confined: {PROBE.detail}")


def wait_until(check: Callable[[], Any], timeout: float, step: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(step)
    return bool(check())


def processes_running(marker: str) -> list[psutil.Process]:
    """Live (not zombie) processes whose command line is exactly ``marker``."""
    found = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        try:
            if proc.info["status"] == psutil.STATUS_ZOMBIE:
                continue
            if " ".join(proc.info["cmdline"] or ()) == marker:
                found.append(proc)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return found


def alive(procs: list[psutil.Process]) -> list[psutil.Process]:
    out = []
    for proc in procs:
        try:
            if proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE:
                out.append(proc)
        except psutil.NoSuchProcess:
            continue
    return out
