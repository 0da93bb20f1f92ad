"""``callgate serve`` over stdio: the cost of one ``tools/call`` against the bare SDK (issue 23).

Two real stdio servers run side by side, each driven by the SDK's ``ClientSession`` over
``stdio_client``: ``callgate serve`` (the built-in plugins; ``read_file`` through the whole
pipeline: validation, permission, observation, result store, shaping) and the SDK's own
minimal ``MCPServer`` with a ``read_file`` tool that returns the same line-numbered text
(``_sdk_stdio_server.py``). Calls alternate in rounds of 25 so machine load hits both alike;
each client sends with a progress callback off (the common case). Reports medians and p95 in
milliseconds and the ratio of the medians.

    uv run python benchmarks/serve_stdio.py [--calls 600] [--py-spy DIR]

``--py-spy DIR`` attaches ``py-spy record`` to each server (``uv sync --group bench``) and
leaves their collapsed stacks in ``DIR/callgate.txt`` and ``DIR/bare_sdk.txt`` (the figures
of such a run are the profiler's, not the row's).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import _hermetic  # noqa: F401  (first: a private CALLGATE_HOME and user config)
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

HERE = Path(__file__).resolve().parent
ROUND = 25


def _env(tmp: Path) -> dict[str, str]:
    return {
        "CALLGATE_HOME": str(tmp / "home"),
        "CALLGATE_CONFIG_HOME": str(tmp / "config"),
        "PATH": os.environ.get("PATH", ""),
    }


def ms(seconds: float) -> float:
    return round(seconds * 1000, 3)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _children() -> set[int]:
    """This process's child processes (Linux; empty elsewhere)."""
    found: set[int] = set()
    try:
        for task in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{task}/children") as fh:
                found.update(int(pid) for pid in fh.read().split())
    except OSError:
        pass
    return found


def cpu_seconds(pid: int | None) -> float | None:
    """CPU time the process's live threads have run (``schedstat``, nanoseconds; Linux):
    the server's own work per call, which the machine's load does not inflate the way it
    inflates wall time."""
    if pid is None:
        return None
    total = 0
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/schedstat") as fh:
                total += int(fh.read().split()[0])
    except OSError:
        return None
    return total / 1e9


async def _client(stack: AsyncExitStack, params: StdioServerParameters
                  ) -> tuple[ClientSession, int | None]:
    before = _children()
    read, write = await stack.enter_async_context(stdio_client(params))
    client = await stack.enter_async_context(ClientSession(read, write))
    await client.initialize()
    new = _children() - before
    return client, (new.pop() if len(new) == 1 else None)


def _spy(pid: int | None, out: Path | None, name: str) -> subprocess.Popen[bytes] | None:
    """``py-spy record`` attached to the server ``pid``, writing ``out/name.txt`` (collapsed
    stacks per thread) when the server exits; its own output kept off the MCP stream."""
    if out is None or pid is None:
        return None
    out.mkdir(parents=True, exist_ok=True)
    spy = str(Path(sys.executable).with_name("py-spy"))
    return subprocess.Popen(
        [spy, "record", "--pid", str(pid), "--rate", "250", "--format", "raw", "--threads",
         "--output", str(out / f"{name}.txt")],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


async def main(calls: int, spy: Path | None = None) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        ws = tmp / "ws"
        ws.mkdir()
        (ws / "notes.txt").write_text("".join(f"line {i}\n" for i in range(40)))
        ours_p = StdioServerParameters(
            command=sys.executable,
            args=["-m", "callgate_cli", "serve", "--workspace", str(ws)],
            env=_env(tmp),
        )
        bare_p = StdioServerParameters(
            command=sys.executable,
            args=[str(HERE / "_sdk_stdio_server.py"), str(ws)],
            env=_env(tmp),
        )
        ours: list[float] = []
        bare: list[float] = []
        async with AsyncExitStack() as stack:
            cg, cg_pid = await _client(stack, ours_p)
            sdk, sdk_pid = await _client(stack, bare_p)
            spies = [_spy(cg_pid, spy, "callgate"), _spy(sdk_pid, spy, "bare_sdk")]
            args = {"path": "notes.txt"}
            for client in (cg, sdk):  # warm up both (imports, first-call caches)
                for _ in range(20):
                    r = await client.call_tool("read_file", args)
                    assert not r.is_error, r.content
            cpu_before = cpu_seconds(cg_pid), cpu_seconds(sdk_pid)
            done = 0
            while done < calls:
                for client, sink in ((cg, ours), (sdk, bare)):
                    for _ in range(ROUND):
                        start = time.perf_counter()
                        await client.call_tool("read_file", args)
                        sink.append(time.perf_counter() - start)
                done += ROUND
            cpu_after = cpu_seconds(cg_pid), cpu_seconds(sdk_pid)
        for spying in spies:  # the servers are gone: each py-spy writes its file and ends
            if spying is not None:
                spying.wait(60)
    cpu = [None if a is None or b is None else (b - a) / len(sink)
           for a, b, sink in zip(cpu_before, cpu_after, (ours, bare), strict=True)]
    med_ours, med_bare = statistics.median(ours), statistics.median(bare)
    return {
        "calls": len(ours),
        "callgate_median_ms": ms(med_ours),
        "callgate_p95_ms": ms(pct(ours, 0.95)),
        "bare_sdk_median_ms": ms(med_bare),
        "bare_sdk_p95_ms": ms(pct(bare, 0.95)),
        "overhead_median_ms": ms(med_ours - med_bare),
        "ratio": round(med_ours / med_bare, 2),
        # the servers' CPU time per call, every thread (None where /proc cannot tell)
        "callgate_cpu_ms": None if cpu[0] is None else ms(cpu[0]),
        "bare_sdk_cpu_ms": None if cpu[1] is None else ms(cpu[1]),
        "cpu_ratio": None if None in cpu or not cpu[1] else round(cpu[0] / cpu[1], 2),
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=600)
    parser.add_argument("--py-spy", type=Path, default=None, metavar="DIR",
                        help="profile each server with py-spy into DIR")
    opts = parser.parse_args()
    print(json.dumps(asyncio.run(main(opts.calls, opts.py_spy)), indent=2))
