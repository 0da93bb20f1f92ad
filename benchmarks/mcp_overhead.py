"""Per-call cost of a trivial tool: callgate's pipeline vs the ``mcp`` SDK serving it in process.

The same do-nothing tool (three arguments, validated: ``path`` non-empty,
``limit`` >= 1, ``verbose`` boolean) is called, interleaved in rounds so that
machine load hits every path alike:

- directly (the function itself, awaited or called);
- through callgate: ``session.run_batch([call])`` (resolve, validate, hooks,
  permission, dispatch, shaping, storm), the tools from ``pipeline_overhead.py``;
- through the SDK's ``MCPServer.call_tool`` (pydantic validation of the
  arguments, the call, conversion to a ``CallToolResult``);
- through an in-process ``mcp.Client`` connected to that ``MCPServer`` (JSON-RPC
  over memory streams: what an MCP host really pays per call without a process hop).

An ``async`` tool and a plain one are measured. The SDK runs every plain tool in a
worker thread; callgate runs a plain tool that declares itself non-blocking
(``blocking=False``) inline (``callgate_sync``) and any other in a worker thread
(``callgate_sync_thread``); it awaits an async tool under its cancel guard (a
cancelled call that does not stop in time is abandoned: ``callgate_async``), or as is
when the tool declares itself non-blocking (``callgate_async_inline``). Targets
(issue 17): callgate's overhead over the direct call <= 15 us median for the async
tool and <= 40 us for the plain one, and callgate >= 1.5x faster than
``MCPServer.call_tool`` on both.

    uv run --group bench python benchmarks/mcp_overhead.py [--calls 3000] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Annotated, Any

import _hermetic  # noqa: F401  (first: a private CALLGATE_HOME and user config)

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _timing import summary
from callgate import Host, ToolCall
from mcp import Client
from mcp.server import MCPServer
from pipeline_overhead import ARGS, Bench, noop_async, noop_sync
from pydantic import Field

ROUNDS = 10


def sdk_server() -> MCPServer:
    """An ``MCPServer`` with the same two do-nothing tools and the same argument rules."""
    server = MCPServer("bench")

    @server.tool(name="noop_async", description="Does nothing.")
    async def noop_async_tool(path: Annotated[str, Field(min_length=1)],
                              limit: Annotated[int, Field(ge=1)] = 10,
                              verbose: bool = False) -> str:
        return "ok"

    @server.tool(name="noop_sync", description="Does nothing.")
    def noop_sync_tool(path: Annotated[str, Field(min_length=1)],
                       limit: Annotated[int, Field(ge=1)] = 10,
                       verbose: bool = False) -> str:
        return "ok"

    return server


async def _timed(fn: Callable[[], Awaitable[Any]], n: int, out: list[float]) -> None:
    for _ in range(n):
        started = time.perf_counter_ns()
        await fn()
        out.append((time.perf_counter_ns() - started) / 1e9)


async def measure(calls: int) -> dict[str, Any]:
    """Median/p95 per call (us) of every path, and the overhead and ratios the targets use."""
    host = Host.boot({}, plugins=[Bench()], entrypoints=False, surface="full")
    server = sdk_server()
    per_round = max(1, calls // ROUNDS)
    samples: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as ws:
        async with host.open_session(ws) as session, Client(server) as client:
            counter = iter(range(10**9))

            def through_callgate(tool: str) -> Callable[[], Awaitable[Any]]:
                async def go() -> None:
                    [result] = await session.run_batch([ToolCall(f"c{next(counter)}", tool,
                                                                 ARGS)])
                    assert result.text == "ok", result.text
                return go

            def through_sdk(tool: str) -> Callable[[], Awaitable[Any]]:
                async def go() -> None:
                    result = await server.call_tool(tool, ARGS)
                    assert result.content[0].text == "ok"
                return go

            def through_client(tool: str) -> Callable[[], Awaitable[Any]]:
                async def go() -> None:
                    result = await client.call_tool(tool, ARGS)
                    assert result.content[0].text == "ok"
                return go

            async def direct_async() -> None:
                await noop_async(None, ARGS)

            async def direct_sync() -> None:
                noop_sync(None, ARGS)

            paths: dict[str, Callable[[], Awaitable[Any]]] = {
                "direct_async": direct_async,
                "callgate_async": through_callgate("noop_async"),
                "callgate_async_inline": through_callgate("noop_async_inline"),
                "mcp_call_tool_async": through_sdk("noop_async"),
                "mcp_client_async": through_client("noop_async"),
                "direct_sync": direct_sync,
                "callgate_sync": through_callgate("noop_sync"),
                "callgate_sync_thread": through_callgate("noop_sync_thread"),
                "mcp_call_tool_sync": through_sdk("noop_sync"),
                "mcp_client_sync": through_client("noop_sync"),
            }
            for name, fn in paths.items():  # warm-up: imports, caches, thread pools
                await _timed(fn, min(200, per_round), [])
                samples[name] = []
            for _ in range(ROUNDS):
                for name, fn in paths.items():
                    await _timed(fn, per_round, samples[name])
    out: dict[str, Any] = {"calls_per_path": per_round * ROUNDS, "rounds": ROUNDS}
    for name, values in samples.items():
        out[name] = summary(values, "us")
    for kind, sdk in (("async", "async"), ("async_inline", "async"), ("sync", "sync"),
                      ("sync_thread", "sync")):
        ours = out[f"callgate_{kind}"]["median"]
        base = "async" if kind.startswith("async") else "sync"
        out[f"overhead_{kind}_us"] = round(ours - out[f"direct_{base}"]["median"], 2)
        out[f"mcp_call_tool_vs_callgate_{kind}"] = round(
            out[f"mcp_call_tool_{sdk}"]["median"] / ours, 2)
        out[f"mcp_client_vs_callgate_{kind}"] = round(
            out[f"mcp_client_{sdk}"]["median"] / ours, 2)
    out["targets"] = {"overhead_async_us_max": 15, "overhead_sync_us_max": 40,
                      "sdk_over_callgate_min": 1.5}
    return out


def run(calls: int = 3000) -> dict[str, Any]:
    return asyncio.run(measure(calls))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    result = run(args.calls)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    for key, value in result.items():
        if isinstance(value, dict) and "median" in value:
            print(f"{key:24} median {value['median']:8.1f} us   p95 {value['p95']:8.1f} us")
        else:
            print(f"{key:32} {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
