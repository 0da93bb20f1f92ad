"""``callgate serve`` killed with SIGKILL leaves no shell job behind (issue 23, item 7).

The real ``callgate serve`` over stdio starts a background job and has a foreground command
in flight; the test SIGKILLs the server process and checks every process of both groups is
gone (the core's lifeline helper kills what carries the host's marker when the server's pipe
closes).
"""

from __future__ import annotations

import os
import re
import signal
import sys
import time
from pathlib import Path

import anyio
import psutil
import pytest
from mcp import ClientSession
from mcp.client.stdio import stdio_client

from .test_progress import serve
from .test_server import text_of

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX process groups")


def _alive(proc: psutil.Process) -> bool:
    try:
        return proc.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _members(pgids: set[int]) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter():
        try:
            if os.getpgid(proc.pid) in pgids:
                found.append(proc)
        except OSError:
            pass
    return found


def test_sigkill_of_serve_leaves_no_job_process(tmp_path: Path) -> None:
    groups: set[int] = set()

    async def scenario() -> None:
        async with (
            stdio_client(serve(tmp_path)) as (read, write),
            ClientSession(read, write) as client,
        ):
            await client.initialize()
            r = await client.call_tool(
                "bash", {"command": "sleep 300; echo never", "run_in_background": True}
            )
            assert re.search(r"background job bash-\d+", text_of(r)), text_of(r)
            server = next(
                p
                for p in psutil.Process().children(recursive=True)
                if "serve" in p.cmdline() and "callgate_cli" in p.cmdline()
            )
            async with anyio.create_task_group() as tg:

                async def foreground() -> None:
                    try:
                        await client.call_tool("bash", {"command": "sleep 300; echo never"})
                    except Exception:  # the server is killed under it
                        pass

                tg.start_soon(foreground)
                deadline = time.monotonic() + 30
                found: set[int] = set()
                while time.monotonic() < deadline:
                    # one process group per command; inside the sandbox a command is bwrap
                    # (twice) and bash, all with the command line: count groups, not processes
                    found = set()
                    for p in server.children(recursive=True):
                        try:
                            if "sleep 300; echo never" in " ".join(p.cmdline()):
                                found.add(os.getpgid(p.pid))
                        except (psutil.Error, OSError):
                            continue
                    if len(found) == 2:
                        break
                    await anyio.sleep(0.1)
                groups.update(found)
                assert len(groups) == 2
                os.kill(server.pid, signal.SIGKILL)
                tg.cancel_scope.cancel()

    try:
        anyio.run(scenario)
    except Exception:  # the client sees its server vanish mid-call
        if len(groups) != 2:
            raise
    members = _members(groups)
    deadline = time.monotonic() + 10
    while any(_alive(p) for p in members) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = [p for p in members if _alive(p)]
    for proc in left:
        proc.kill()
    assert not left
