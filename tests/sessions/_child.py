"""A host process for the session tests: ``python _child.py MODE WORKSPACE [ARGS...]``.

It boots a host with small test tools (and the files, shell and capability plugins),
records into ``$CALLGATE_HOME``'s store, and prints one JSON line per thing the test
waits for. Modes:

- ``emit ID BYTES``: one call whose result is exactly BYTES bytes; prints the session id.
- ``jobs``: a background job that finishes and one that keeps running; prints the session
  id and the running job's pid once the first has finished, then waits to be killed.
- ``batches NAME``: joins session NAME and runs batches of two slow calls forever,
  printing each batch's number once it is committed (the kill -9 loop).
- ``hammer NAME COUNT``: joins session NAME and runs COUNT trivial calls, one per batch.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

import anyio
import callgate_capability
import callgate_files
import callgate_shell
from callgate import Host, Registry, ToolCall, ToolSpec, hookimpl
from callgate_shell import JOBS

OBJECT = {"type": "object", "additionalProperties": True}


class TestTools:
    """``emit`` (exactly ``bytes`` bytes of text), ``nap`` (sleeps ``ms``), ``noop``."""

    __name__ = "testtools"

    @hookimpl
    def callgate_register_tools(self, registry: Registry) -> None:
        registry.add(ToolSpec(name="emit", description="Return bytes characters.",
                              read_only=True, schema=OBJECT, visibility="surface",
                              execute=lambda ctx, a: "".join(
                                  chr(48 + i % 43) for i in range(a["bytes"]))))
        registry.add(ToolSpec(name="nap", description="Sleep ms milliseconds.",
                              read_only=True, schema=OBJECT, visibility="surface",
                              execute=lambda ctx, a: time.sleep(a["ms"] / 1000) or "slept"))
        registry.add(ToolSpec(name="noop", description="Do nothing.", read_only=True,
                              schema=OBJECT, visibility="surface", blocking=False,
                              execute=lambda ctx, a: "ok"))


def boot() -> Host:
    return Host.boot({}, plugins=[TestTools(), callgate_files, callgate_shell,
                                  callgate_capability], entrypoints=False, surface="lean")


def say(**fields: Any) -> None:
    print(json.dumps(fields), flush=True)


async def emit(workspace: str, call_id: str, size: str) -> None:
    async with boot().open_session(workspace) as session:
        [result] = await session.run_batch([ToolCall(call_id, "emit", {"bytes": int(size)})])
        say(session=session.id, ref=result.meta.get("result_ref"))


async def jobs(workspace: str) -> None:
    session = boot().open_session(workspace)
    [done] = await session.run_batch([ToolCall("j1", "bash", {
        "command": "echo finished-output; echo second line", "run_in_background": True})])
    [running] = await session.run_batch([ToolCall("j2", "bash", {
        "command": "sleep 300", "run_in_background": True})])
    session.extension(JOBS).get(done.meta["job_id"]).finished.wait(30)  # ended, its output unread
    time.sleep(0.3)  # the finished job's record goes out from its supervisor thread
    session.flush()
    say(session=session.id, done=done.meta["job_id"], running=running.meta["job_id"],
        pid=running.meta["pid"])
    time.sleep(600)  # killed here


async def batches(workspace: str, name: str) -> None:
    session = boot().open_session(workspace, name=name)
    number = 0
    while True:
        number += 1
        await session.run_batch([ToolCall(f"{os.getpid()}-{number}-a", "nap", {"ms": 40}),
                                 ToolCall(f"{os.getpid()}-{number}-b", "nap", {"ms": 60})])
        session.flush()
        say(batch=number, session=session.id)


async def hammer(workspace: str, name: str, count: str) -> None:
    async with boot().open_session(workspace, name=name) as session:
        session.record_message("user", f"process {os.getpid()} starts")
        for i in range(int(count)):
            await session.run_batch([ToolCall(f"{os.getpid()}-{i}", "noop", {"i": i})])
        say(session=session.id, pid=os.getpid())


MODES = {"emit": emit, "jobs": jobs, "batches": batches, "hammer": hammer}

if __name__ == "__main__":
    anyio.run(MODES[sys.argv[1]], *sys.argv[2:])
