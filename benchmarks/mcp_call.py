"""MCP through ``use_capability`` (issue 7): cold starts and per-call overhead.

Cold start: a fresh session calls ``mcp-server:<s>`` (spawn + initialize + full
listing + cache write) for the fixture server, ``mcp-server-time`` and
``mcp-server-git``; next to it, the bare SDK doing spawn + initialize +
``tools/list`` with ``stdio_client`` and ``ClientSession``.

Per call: a connected fixture ``echo`` through ``session.run_batch`` (envelope
validation, resolution, live-schema validation, permission, the re-checks, the
hop to the session's MCP loop thread, result shaping) against
``ClientSession.call_tool`` on the same kind of server, in its own event loop.
Reports medians and p95 in milliseconds.

    uv run python benchmarks/mcp_call.py [--calls 300] [--starts 3] [--no-cold]

``--no-cold`` measures the per-call rows only (for profiling the call path, e.g. under
``py-spy record``; ``--starts 0`` does the same).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import _hermetic  # noqa: F401  (first: a private CALLGATE_HOME and user config)
import callgate_capability
from callgate import Host, ToolCall
from mcp import ClientSession, StdioServerParameters, stdio_client

FIXTURE = str(Path(__file__).resolve().parents[1] / "tests" / "fixtures" /
              "mcp_fixture_server.py")


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def servers(tmp: Path) -> dict[str, dict[str, Any]]:
    repo = tmp / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    return {
        "fixture": {"command": sys.executable, "args": [FIXTURE]},
        "time": {"command": sys.executable,
                 "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]},
        "git": {"command": sys.executable,
                "args": ["-m", "mcp_server_git", "--repository", str(repo)]},
    }


async def callgate_cold_start(host: Host, workspace: str, name: str) -> float:
    async with host.open_session(workspace) as session:
        started = time.perf_counter()
        result = await session.run(ToolCall("c", "use_capability", {
            "action": "call", "capability_id": f"mcp-server:{name}"}))
        elapsed = time.perf_counter() - started
        assert not result.is_error, result.text
    return elapsed


async def bare_cold_start(table: dict[str, Any]) -> float:
    params = StdioServerParameters(command=table["command"], args=table["args"])
    started = time.perf_counter()
    with open("/dev/null", "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), \
                ClientSession(read, write) as client:
            await client.initialize()
            await client.list_tools()
            elapsed = time.perf_counter() - started
    return elapsed


async def callgate_calls(host: Host, workspace: str, calls: int) -> list[float]:
    async with host.open_session(workspace) as session:
        await session.run(ToolCall("c0", "use_capability", {
            "action": "call", "capability_id": "mcp-server:fixture"}))
        times = []
        for i in range(calls):
            call = ToolCall(f"c{i + 1}", "use_capability", {
                "action": "call", "capability_id": "mcp-tool:fixture/echo",
                "arguments": {"text": "hi"}})
            started = time.perf_counter()
            result = await session.run(call)
            times.append(time.perf_counter() - started)
            assert result.text == "hi", result.text
    return times


async def bare_calls(calls: int) -> list[float]:
    params = StdioServerParameters(command=sys.executable, args=[FIXTURE])
    times = []
    with open("/dev/null", "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), \
                ClientSession(read, write) as client:
            await client.initialize()
            await client.list_tools()
            for _ in range(calls):
                started = time.perf_counter()
                result = await client.call_tool("echo", {"text": "hi"})
                times.append(time.perf_counter() - started)
                assert result.content[0].text == "hi"
    return times


def ms(value: float) -> float:
    return round(value * 1000, 2)


async def main(calls: int, starts: int) -> dict[str, Any]:
    report: dict[str, Any] = {"cold_start_ms": {}, "call_ms": {}}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        table = servers(tmp)
        host = Host.boot({"capability": {"cache_dir": str(tmp / "cache")},
                          "mcp_servers": table},
                         plugins=[callgate_capability], entrypoints=False)
        workspace = tmp / "ws"
        workspace.mkdir()
        for name in ("fixture", "time", "git") if starts > 0 else ():
            ours = [await callgate_cold_start(host, str(workspace), name) for _ in range(starts)]
            bare = [await bare_cold_start(table[name]) for _ in range(starts)]
            report["cold_start_ms"][name] = {"callgate_median": ms(statistics.median(ours)),
                                             "bare_sdk_median": ms(statistics.median(bare))}
        ours = await callgate_calls(host, str(workspace), calls)
        bare = await bare_calls(calls)
    med_ours, med_bare = statistics.median(ours), statistics.median(bare)
    report["call_ms"] = {
        "calls": calls,
        "callgate_median": ms(med_ours), "callgate_p95": ms(pct(ours, 0.95)),
        "bare_sdk_median": ms(med_bare), "bare_sdk_p95": ms(pct(bare, 0.95)),
        "overhead_median": ms(med_ours - med_bare),
        "ratio": round(med_ours / med_bare, 2),
    }
    return report


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--starts", type=int, default=3)
    parser.add_argument("--no-cold", action="store_true",
                        help="skip the cold starts: the per-call rows only")
    opts = parser.parse_args()
    starts = 0 if opts.no_cold else opts.starts
    print(json.dumps(asyncio.run(main(opts.calls, starts)), indent=2))
