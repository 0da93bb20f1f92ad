"""``callgate serve --http`` memory over a long session (issue 34, item 1), beside the MCP SDK's
own minimal streamable-HTTP server doing the same calls in the same run.

Each server is started fresh on loopback (``http_sessions``' servers and client: raw
JSON-RPC over httpx2, so the client costs little); one MCP session is opened and calls
``read_file`` on a small file ``--calls`` times (default 10,000), one at a time, as a model
does. The server's RSS is sampled before the first call and every ``--every`` calls.
Reported per server: RSS before, after, the growth, the growth over the second half of the
run (a plateau shows as ~0) and the samples; and the ratios callgate / SDK of the final RSS
and of the growth. The servers run one after the other, so each has the machine alone.

    uv run python benchmarks/http_memory.py [--calls 10000] [--every 1000]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import _hermetic  # noqa: F401  (first: a private CALLGATE_HOME and user config)
import httpx2

HERE = Path(__file__).resolve().parent


def _sessions_module() -> Any:
    spec = importlib.util.spec_from_file_location("http_sessions", HERE / "http_sessions.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["http_sessions"] = module
    spec.loader.exec_module(module)
    return module


hs = _sessions_module()


async def drive(url: str, proc: Any, calls: int, every: int) -> dict[str, Any]:
    timeout = httpx2.Timeout(120.0)
    async with httpx2.AsyncClient(timeout=timeout) as http:
        session = hs.Session(http, url)
        await session.open()
        for _ in range(20):  # warm-up: imports, caches
            await session.call("read_file", {"path": "notes.txt"})
        await asyncio.sleep(0.5)
        samples = [(0, hs.rss(proc))]
        errors = 0
        t0 = time.perf_counter()
        for n in range(1, calls + 1):
            ok = await session.call("read_file", {"path": "notes.txt"})
            errors += not ok
            if n % every == 0:
                samples.append((n, hs.rss(proc)))
        wall = time.perf_counter() - t0
        await session.close()
    mib = [(n, round(r / 2**20, 2)) for n, r in samples]
    half = next((r for n, r in samples if n >= calls // 2), samples[-1][1])
    return {
        "calls": calls,
        "errors": errors,
        "throughput_calls_s": round(calls / wall, 1),
        "rss_before_mib": mib[0][1],
        "rss_after_mib": mib[-1][1],
        "growth_mib": round((samples[-1][1] - samples[0][1]) / 2**20, 2),
        "growth_second_half_mib": round((samples[-1][1] - half) / 2**20, 2),
        "samples_mib": mib,
    }


def run(calls: int, every: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="callgate-http-memory-") as tmp:
        ws = os.path.join(tmp, "ws")
        os.mkdir(ws)
        Path(ws, "notes.txt").write_text(
            "".join(f"line {i} of a small file\n" for i in range(40)))
        for kind in ("sdk", "callgate"):
            home = tempfile.mkdtemp(dir=tmp)
            proc, url = hs.start(kind, ws, home)
            try:
                out[kind] = asyncio.run(drive(url, proc, calls, every))
            finally:
                hs.stop(proc)
    c, b = out["callgate"], out["sdk"]
    out["ratios"] = {
        "rss_after": round(c["rss_after_mib"] / b["rss_after_mib"], 3),
        "growth_mib_callgate_minus_sdk": round(c["growth_mib"] - b["growth_mib"], 2),
    }
    out["cpus"] = os.cpu_count()
    out["load"] = os.getloadavg()
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=10_000)
    parser.add_argument("--every", type=int, default=1_000)
    args = parser.parse_args(argv)
    result = run(args.calls, max(1, args.every))
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
