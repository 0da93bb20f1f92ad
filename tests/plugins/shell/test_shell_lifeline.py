"""Shell process groups die with the host process, even when it is SIGKILLed (issue 23, item 7).

A child Python process boots a host with the shell plugin, starts a background job and a
foreground command (each a shell with a ``sleep`` child of its own), reports their process
groups, and waits; the test SIGKILLs it and checks that no member of either group is left
(the core's lifeline helper ends every process carrying the host's marker: tests/core/
test_process.py tests the helper itself).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX process groups")

SCRIPT = r"""
import json, sys, threading, time
import anyio, callgate_shell
from callgate import Host, ToolCall

ws, out = sys.argv[1], sys.argv[2]
host = Host.boot({"permissions": {"allow": ["Bash"]}}, plugins=[callgate_shell],
                 entrypoints=False)

async def main():
    session = host.open_session(ws)
    bg = await session.run(ToolCall("1", "bash", {"command": "sleep 300; echo never",
                                                  "run_in_background": True}))
    async def foreground():
        await session.run(ToolCall("2", "bash", {"command": "echo fg; sleep 300; echo never"}))
    async with anyio.create_task_group() as tg:
        tg.start_soon(foreground)
        await anyio.sleep(1.0)
        with open(out, "w") as fh:
            json.dump({"bg": bg.meta}, fh)
        await anyio.sleep(300)

anyio.run(main)
"""


def _alive(proc: psutil.Process) -> bool:
    try:
        return proc.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_sigkill_of_the_host_leaves_no_job_process(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    out = tmp_path / "started.json"
    env = {
        **os.environ,
        "CALLGATE_HOME": str(tmp_path / "home"),
        "CALLGATE_CONFIG_HOME": str(tmp_path / "config"),
    }
    host = subprocess.Popen(
        [sys.executable, "-c", SCRIPT, str(ws), str(out)],
        env=env,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    groups: set[int] = set()
    try:
        deadline = time.monotonic() + 30
        while not out.exists() and time.monotonic() < deadline and host.poll() is None:
            time.sleep(0.05)
        assert out.exists(), "the host did not start its commands"
        time.sleep(0.2)
        shells = [
            p
            for p in psutil.Process(host.pid).children(recursive=True)
            if "sleep 300" in " ".join(p.cmdline())
        ]
        groups = {os.getpgid(p.pid) for p in shells}
        assert len(groups) == 2, shells  # the background job and the foreground command
        members = [p for p in psutil.process_iter() if _pgid(p) in groups]
        assert len(members) >= 4  # each shell and its sleep
        os.kill(host.pid, signal.SIGKILL)
        host.wait(10)
        deadline = time.monotonic() + 10
        while any(_alive(p) for p in members) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not [p for p in members if _alive(p)]
    finally:
        if host.poll() is None:
            host.kill()
            host.wait()
        for proc in psutil.process_iter():
            if _pgid(proc) in groups:
                proc.kill()


def _pgid(proc: psutil.Process) -> int | None:
    try:
        return os.getpgid(proc.pid)
    except OSError:
        return None

