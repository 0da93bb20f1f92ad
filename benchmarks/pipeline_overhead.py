"""Per-call cost of the callgate pipeline for a trivial read-only tool (issues 2 and 17).

Compares, in one run: calling the tool function directly, and running the same
call through ``session.run_batch`` (resolve, validate, hooks, permission,
dispatch, shaping, storm). Three tools are measured, as batches of one call and
as batches of 64 calls: an ``async`` one, a plain one that declares itself
non-blocking (``blocking=False``: it runs inline on the event loop) and a plain
one as most are (it runs in a worker thread). Reports median and p95 in
microseconds and the overhead per call.

    uv run python benchmarks/pipeline_overhead.py [--calls 3000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from typing import Any

import _hermetic  # noqa: F401  (first: a private CALLGATE_HOME and user config)
from callgate import Host, Registry, ToolCall, ToolSpec, hookimpl

SCHEMA = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "minLength": 1},
        "limit": {"type": "integer", "minimum": 1},
        "verbose": {"type": "boolean"},
    },
    "required": ["path"],
    "additionalProperties": False,
}
ARGS = {"path": "a.txt", "limit": 10, "verbose": False}


async def noop_async(ctx: Any, args: dict[str, Any]) -> str:
    return "ok"


def noop_sync(ctx: Any, args: dict[str, Any]) -> str:
    return "ok"


class Bench:
    """``noop_async`` (the default: awaited under the cancel guard); ``noop_async_inline``
    (declared non-blocking: awaited as is); ``noop_sync`` (plain, declared non-blocking:
    inline); ``noop_sync_thread`` (plain, the default: a worker thread)."""

    __name__ = "bench"

    @hookimpl
    def callgate_register_tools(self, registry: Registry) -> None:
        for name, fn, blocking in (("noop_async", noop_async, True),
                                   ("noop_async_inline", noop_async, False),
                                   ("noop_sync", noop_sync, False),
                                   ("noop_sync_thread", noop_sync, True)):
            registry.add(ToolSpec(name=name, description="Does nothing.", schema=SCHEMA,
                                  read_only=True, execute=fn, blocking=blocking))


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def measure(calls: int) -> dict[str, Any]:
    host = Host.boot({}, plugins=[Bench()], entrypoints=False, surface="full")
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as ws:
        async with host.open_session(ws) as session:
            # direct baselines
            direct = []
            for _ in range(calls):
                t = time.perf_counter_ns()
                await noop_async(None, ARGS)
                direct.append((time.perf_counter_ns() - t) / 1000)
            direct_sync = []
            for _ in range(calls):
                t = time.perf_counter_ns()
                noop_sync(None, ARGS)
                direct_sync.append((time.perf_counter_ns() - t) / 1000)
            for tool, base in (("noop_async", direct), ("noop_async_inline", direct),
                               ("noop_sync", direct_sync), ("noop_sync_thread", direct_sync)):
                for _ in range(200):  # warm-up
                    await session.run_batch([ToolCall("w", tool, ARGS)])
                single = []
                for i in range(calls):
                    call = [ToolCall(f"c{i}", tool, ARGS)]
                    t = time.perf_counter_ns()
                    await session.run_batch(call)
                    single.append((time.perf_counter_ns() - t) / 1000)
                batched = []
                for i in range(max(1, calls // 64)):
                    batch = [ToolCall(f"b{i}-{j}", tool, ARGS) for j in range(64)]
                    t = time.perf_counter_ns()
                    await session.run_batch(batch)
                    batched.append((time.perf_counter_ns() - t) / 1000 / 64)
                out[tool] = {
                    "direct_median_us": round(statistics.median(base), 2),
                    "batch_of_1_median_us": round(statistics.median(single), 1),
                    "batch_of_1_p95_us": round(pct(single, 0.95), 1),
                    "batch_of_64_per_call_median_us": round(statistics.median(batched), 1),
                    "batch_of_64_per_call_p95_us": round(pct(batched, 0.95), 1),
                    "overhead_median_us": round(statistics.median(single)
                                                - statistics.median(base), 1),
                    "ratio_to_direct": round(statistics.median(single)
                                             / max(statistics.median(base), 0.01), 1),
                }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = asyncio.run(measure(args.calls))
    if args.json:
        print(json.dumps(result, indent=2))
        return
    for tool, row in result.items():
        print(f"{tool}:")
        for key, value in row.items():
            print(f"  {key:32} {value}")
    print("targets (issue 17): overhead_median_us <= 15 (async), <= 40 (noop_sync, inline)")


if __name__ == "__main__":
    main()
