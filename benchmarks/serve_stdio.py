"""``callgate serve`` over stdio: the cost of one ``tools/call`` against the bare SDK (issue 23).

Two real stdio servers run side by side, each driven by the SDK's ``ClientSession`` over
``stdio_client``: ``callgate serve`` (the built-in plugins; ``read_file`` through the whole
pipeline: validation, permission, observation, result store, shaping) and the SDK's own
minimal ``MCPServer`` with a ``read_file`` tool that returns the same line-numbered text
(``_sdk_stdio_server.py``). Calls alternate in rounds of 25 so machine load hits both alike;
each client sends with a progress callback off (the common case). Reports medians and p95 in
milliseconds and the ratio of the medians.

    uv run python benchmarks/serve_stdio.py [--calls 600]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
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


async def _client(stack: AsyncExitStack, params: StdioServerParameters) -> ClientSession:
    read, write = await stack.enter_async_context(stdio_client(params))
    client = await stack.enter_async_context(ClientSession(read, write))
    await client.initialize()
    return client


async def main(calls: int) -> dict[str, Any]:
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
            cg = await _client(stack, ours_p)
            sdk = await _client(stack, bare_p)
            args = {"path": "notes.txt"}
            for client in (cg, sdk):  # warm up both (imports, first-call caches)
                for _ in range(20):
                    r = await client.call_tool("read_file", args)
                    assert not r.is_error, r.content
            done = 0
            while done < calls:
                for client, sink in ((cg, ours), (sdk, bare)):
                    for _ in range(ROUND):
                        start = time.perf_counter()
                        await client.call_tool("read_file", args)
                        sink.append(time.perf_counter() - start)
                done += ROUND
    med_ours, med_bare = statistics.median(ours), statistics.median(bare)
    return {
        "calls": len(ours),
        "callgate_median_ms": ms(med_ours),
        "callgate_p95_ms": ms(pct(ours, 0.95)),
        "bare_sdk_median_ms": ms(med_bare),
        "bare_sdk_p95_ms": ms(pct(bare, 0.95)),
        "overhead_median_ms": ms(med_ours - med_bare),
        "ratio": round(med_ours / med_bare, 2),
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=600)
    opts = parser.parse_args()
    print(json.dumps(asyncio.run(main(opts.calls)), indent=2))
