"""``callgate serve --http`` under load (issue 23), beside the MCP SDK's own minimal
streamable-HTTP server doing the same calls in the same run.

For each size (sessions × calls), each server is started fresh on loopback; the client
(this process, asyncio + httpx2, raw JSON-RPC so the client costs little) opens every
session (``initialize`` + ``notifications/initialized``), then all sessions call
``read_file`` on a small file ``calls`` times each, concurrently (each session one call at a
time, as a model does), after one untimed warm-up call per session. Reported: throughput
(calls/s), p50/p99 latency of a call, errors (HTTP errors, JSON-RPC errors, ``isError``
results), the server's CPU time per call (user + system, all its threads: the figure the
machine's load moves least), and the server's RSS per idle session
(RSS with every session open and idle, minus RSS before the first one, over the count).
Sessions are deleted at the end. Targets: 0 errors, p99 ≤ 50 ms, ≤ 2 MiB per idle session.

    uv run python benchmarks/http_sessions.py [--sizes 200x50,50x50] [--only callgate]
        [--profile DIR]

``--profile DIR`` records each server with py-spy (``uv sync --group bench``) during the
timed calls only, as speedscope JSON ``DIR/<server>-<sessions>x<calls>.json`` (the
sampler costs the server some CPU: read the shares, not the numbers of such a run).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import _hermetic  # noqa: F401  (first: a private CALLGATE_HOME and user config)
import httpx2
import psutil

#: set by ``--profile``: where py-spy writes each server's profile of the timed phase
PROFILE_DIR: str | None = None
#: ``--profile-gil``: sample only the thread holding the GIL (who keeps the others waiting)
PROFILE_FLAGS: list[str] = []

HERE = Path(__file__).resolve().parent
PROTOCOL = "2025-06-18"
HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port: int, proc: subprocess.Popen[bytes], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError("server did not listen")


def start(kind: str, workspace: str, home: str) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    env = {
        **os.environ,
        "CALLGATE_HOME": os.path.join(home, "state"),
        "CALLGATE_CONFIG_HOME": os.path.join(home, "config"),
    }
    if kind == "callgate":
        argv = [
            sys.executable,
            "-m",
            "callgate_cli",
            "serve",
            "--http",
            f"127.0.0.1:{port}",
            "--workspace",
            workspace,
        ]
    else:
        argv = [sys.executable, str(HERE / "_sdk_http_server.py"), str(port), workspace]
    proc = subprocess.Popen(
        argv,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    wait_port(port, proc)
    return proc, f"http://127.0.0.1:{port}/mcp"


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


def cpu_seconds(proc: subprocess.Popen[bytes]) -> float:
    """The server's CPU time so far (user + system, every thread)."""
    times = psutil.Process(proc.pid).cpu_times()
    return times.user + times.system


def rss(proc: subprocess.Popen[bytes]) -> int:
    return psutil.Process(proc.pid).memory_info().rss


def _result(text: str) -> dict[str, Any]:
    """The JSON-RPC message of an SSE or JSON answer."""
    text = text.strip()
    if text.startswith("{"):
        return json.loads(text)
    for line in text.splitlines():
        if line.startswith("data:"):
            data = line[5:].strip()
            if data:
                return json.loads(data)
    raise ValueError(f"no message in {text[:200]!r}")


class Session:
    def __init__(self, http: httpx2.AsyncClient, url: str) -> None:
        self.http, self.url, self.sid = http, url, ""
        self.ids = 0

    def _headers(self) -> dict[str, str]:
        h = dict(HEADERS)
        if self.sid:
            h["mcp-session-id"] = self.sid
            h["mcp-protocol-version"] = PROTOCOL
        return h

    async def open(self) -> None:
        r = await self.http.post(
            self.url,
            headers=self._headers(),
            json={
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": PROTOCOL,
                    "capabilities": {},
                    "clientInfo": {"name": "bench", "version": "0"},
                },
            },
        )
        r.raise_for_status()
        self.sid = r.headers["mcp-session-id"]
        r = await self.http.post(
            self.url,
            headers=self._headers(),
            json={"jsonrpc": "2.0", "method": "notifications/initialized"},
        )
        r.raise_for_status()

    async def call(self, name: str, arguments: dict[str, Any]) -> bool:
        """One tools/call; whether it succeeded (HTTP 200, a result, not isError)."""
        self.ids += 1
        r = await self.http.post(
            self.url,
            headers=self._headers(),
            json={
                "jsonrpc": "2.0",
                "id": self.ids,
                "method": "tools/call",
                "params": {"name": name, "arguments": arguments},
            },
        )
        if r.status_code != 200:
            return False
        message = _result(r.text)
        return "result" in message and not message["result"].get("isError", False)

    async def close(self) -> None:
        await self.http.delete(self.url, headers=self._headers())


def profiler(proc: subprocess.Popen[bytes], name: str) -> subprocess.Popen[bytes] | None:
    """py-spy recording ``proc`` into ``PROFILE_DIR/name.json`` (``--profile``), or None."""
    if PROFILE_DIR is None:
        return None
    spy = Path(sys.executable).with_name("py-spy")
    out = os.path.join(PROFILE_DIR, name + ".json")
    argv = [
        str(spy),
        "record",
        "--format",
        "speedscope",
        "--rate",
        "200",
        "--nonblocking",
        "-o",
        out,
        "-p",
        str(proc.pid),
        *PROFILE_FLAGS,
    ]
    return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def stop_profiler(spy: subprocess.Popen[bytes] | None) -> None:
    if spy is not None and spy.poll() is None:
        spy.send_signal(2)  # SIGINT: py-spy writes what it sampled and exits
        spy.wait(60)


async def load(
    url: str, proc: subprocess.Popen[bytes], sessions: int, calls: int, name: str = ""
) -> dict[str, Any]:
    limits = httpx2.Limits(max_connections=sessions + 8, max_keepalive_connections=sessions + 8)
    timeout = httpx2.Timeout(120.0)
    async with httpx2.AsyncClient(limits=limits, timeout=timeout) as http:
        await asyncio.sleep(0.5)
        rss_before = rss(proc)
        opened = [Session(http, url) for _ in range(sessions)]
        t0 = time.perf_counter()
        results = await asyncio.gather(*(s.open() for s in opened), return_exceptions=True)
        open_s = time.perf_counter() - t0
        open_errors = sum(isinstance(r, BaseException) for r in results)
        live = [s for s, r in zip(opened, results, strict=True) if not isinstance(r, BaseException)]
        await asyncio.sleep(1.0)  # idle: every session open, nothing in flight
        rss_idle = rss(proc)
        # one untimed call per session first (both servers): imports and caches warm up
        warm = await asyncio.gather(
            *(s.call("read_file", {"path": "notes.txt"}) for s in live), return_exceptions=True
        )
        warm_errors = sum(r is not True for r in warm)
        latencies: list[float] = []
        errors = open_errors

        async def drive(s: Session) -> None:
            nonlocal errors
            for _ in range(calls):
                t = time.perf_counter()
                try:
                    ok = await s.call("read_file", {"path": "notes.txt"})
                except Exception:
                    ok = False
                latencies.append((time.perf_counter() - t) * 1000)
                errors += not ok

        spy = profiler(proc, name)
        if spy is not None:
            await asyncio.sleep(1.0)  # py-spy attached
        cpu0 = cpu_seconds(proc)
        t1 = time.perf_counter()
        await asyncio.gather(*(drive(s) for s in live))
        wall = time.perf_counter() - t1
        cpu = cpu_seconds(proc) - cpu0
        stop_profiler(spy)
        rss_after = rss(proc)
        await asyncio.gather(*(s.close() for s in live), return_exceptions=True)
    done = len(latencies)
    return {
        "sessions": sessions,
        "calls_per_session": calls,
        "calls": done,
        "errors": errors,
        "warmup_errors": warm_errors,
        "open_s": round(open_s, 3),
        "wall_s": round(wall, 3),
        "throughput_calls_s": round(done / wall, 1) if wall else None,
        "p50_ms": round(pct(latencies, 0.50), 2),
        "p99_ms": round(pct(latencies, 0.99), 2),
        "mean_ms": round(statistics.fmean(latencies), 2) if latencies else None,
        "server_cpu_ms_per_call": round(cpu * 1000 / done, 3) if done else None,
        "rss_before_mib": round(rss_before / 2**20, 1),
        "rss_idle_mib": round(rss_idle / 2**20, 1),
        "rss_after_calls_mib": round(rss_after / 2**20, 1),
        "rss_per_idle_session_mib": round((rss_idle - rss_before) / 2**20 / max(1, len(live)), 3),
    }


def run(
    sizes: list[tuple[int, int]], kinds: tuple[str, ...] = ("sdk", "callgate")
) -> dict[str, Any]:
    out: dict[str, Any] = {"sizes": []}
    with tempfile.TemporaryDirectory(prefix="callgate-http-bench-") as tmp:
        ws = os.path.join(tmp, "ws")
        os.mkdir(ws)
        Path(ws, "notes.txt").write_text("".join(f"line {i} of a small file\n" for i in range(40)))
        for sessions, calls in sizes:
            row: dict[str, Any] = {"sessions": sessions, "calls": calls}
            for kind in kinds:
                home = tempfile.mkdtemp(dir=tmp)
                proc, url = start(kind, ws, home)
                try:
                    name = f"{kind}-{sessions}x{calls}"
                    row[kind] = asyncio.run(load(url, proc, sessions, calls, name))
                finally:
                    stop(proc)
            if len(kinds) < 2:
                out["sizes"].append(row)
                continue
            c, b = row["callgate"], row["sdk"]
            row["ratios"] = {
                "throughput": round(c["throughput_calls_s"] / b["throughput_calls_s"], 3),
                "p50": round(c["p50_ms"] / b["p50_ms"], 3),
                "p99": round(c["p99_ms"] / b["p99_ms"], 3),
                # None when the SDK's CPU time rounds to 0 (a smoke run: 10 ms clock ticks)
                "server_cpu_per_call": round(
                    c["server_cpu_ms_per_call"] / b["server_cpu_ms_per_call"], 3
                )
                if b["server_cpu_ms_per_call"] and c["server_cpu_ms_per_call"] is not None
                else None,
                "rss_per_idle_session": round(
                    c["rss_per_idle_session_mib"] / b["rss_per_idle_session_mib"], 3
                )
                if b["rss_per_idle_session_mib"] > 0
                else None,
            }
            row["targets"] = {
                "errors_0": c["errors"] == 0,
                "p99_le_50ms": c["p99_ms"] <= 50,
                "rss_per_idle_session_le_2mib": c["rss_per_idle_session_mib"] <= 2.0,
            }
            out["sizes"].append(row)
    out["cpus"] = os.cpu_count()
    out["load"] = os.getloadavg()
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sizes",
        default="200x50,50x50",
        help="comma-separated SESSIONSxCALLS (default 200x50,50x50)",
    )
    parser.add_argument("--only", choices=("sdk", "callgate"), help="run one server only")
    parser.add_argument(
        "--profile", metavar="DIR", help="record each server's timed phase with py-spy into DIR"
    )
    parser.add_argument(
        "--profile-gil", action="store_true", help="with --profile: only the GIL's holder"
    )
    args = parser.parse_args(argv)
    global PROFILE_DIR
    if args.profile_gil:
        PROFILE_FLAGS.append("--gil")
    if args.profile:
        os.makedirs(args.profile, exist_ok=True)
        PROFILE_DIR = os.path.abspath(args.profile)
    sizes = [tuple(int(n) for n in s.split("x")) for s in args.sizes.split(",")]
    kinds = (args.only,) if args.only else ("sdk", "callgate")
    result = run(sizes, kinds)  # type: ignore[arg-type]
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
