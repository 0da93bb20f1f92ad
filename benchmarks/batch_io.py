"""A batch of read-only calls that each wait ~100 ms on I/O vs the same calls one by one.

Two real I/O-bound tools, each against a server on this machine:

- ``web_fetch`` of a loopback HTTP endpoint that answers after ``--delay-ms``
  (a threaded ``http.server``; ``[web] allow_loopback = true``);
- an MCP ``tools/call`` through ``use_capability`` to the test fixture server's
  ``slow`` tool (a stdio child that sleeps ``--delay-ms`` before answering).

For each, in one run: one call alone (the unit), ``--batch`` calls one by one
(a batch of one each, as a host without concurrency would), and the same calls
in one batch (callgate runs read-only calls concurrently). Target (issue 11):
the batch takes <= 1.5x one call. ``--sweep`` also times batches of 1, 2, 4,
8 and 16 for the cost-vs-batch-size plot.

    uv run --group bench python benchmarks/batch_io.py [--batch 8] [--repeat 5] [--json]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import _hermetic  # noqa: F401  (first: a private CALLGATE_HOME and user config)

sys.path.insert(0, str(Path(__file__).resolve().parent))

import callgate_capability
import callgate_web
from _timing import ratio, summary
from callgate import ToolCall, sync

FIXTURE = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "mcp_fixture_server.py"
SWEEP = (1, 2, 4, 8, 16)


class _SlowHandler(BaseHTTPRequestHandler):
    delay = 0.1

    def do_GET(self) -> None:
        time.sleep(self.delay)
        body = b"slow answer\n"
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass


@contextlib.contextmanager
def slow_http_server(delay: float) -> Iterator[str]:
    """A loopback HTTP server answering every GET after ``delay`` seconds; yields its URL."""
    handler = type("Handler", (_SlowHandler,), {"delay": delay})
    # the default listen backlog (5) drops connects past it: a 1 s SYN retry, not ours
    server_class = type("Server", (ThreadingHTTPServer,), {"request_queue_size": 128})
    server = server_class(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/slow"
    finally:
        server.shutdown()
        server.server_close()


class _Runner:
    """Times batches of ``n`` copies of one call through a sync session."""

    def __init__(self, session: sync.Session, name: str, arguments: dict[str, Any],
                 expect: str) -> None:
        self.session, self.name, self.arguments, self.expect = session, name, arguments, expect
        self.seq = 0

    def _calls(self, n: int) -> list[ToolCall]:
        self.seq += 1
        return [ToolCall(f"c{self.seq}-{i}", self.name, self.arguments) for i in range(n)]

    def _check(self, results: list[Any]) -> None:
        for result in results:
            if result.is_error or self.expect not in result.text:
                raise SystemExit(f"{self.name} failed: {result.text[:300]}")

    def batch(self, n: int) -> float:
        calls = self._calls(n)
        started = time.perf_counter()
        results = self.session.run_batch(calls)
        elapsed = time.perf_counter() - started
        self._check(results)
        return elapsed

    def one_by_one(self, n: int) -> float:
        calls = self._calls(n)
        started = time.perf_counter()
        results = [self.session.run(call) for call in calls]
        elapsed = time.perf_counter() - started
        self._check(results)
        return elapsed


def _measure(runner: _Runner, batch: int, repeat: int, sweep: bool) -> dict[str, Any]:
    runner.batch(batch)  # warm-up: connections, threads, caches
    one, serial, together = [], [], []
    for _ in range(repeat):  # interleaved, so load drift hits all three alike
        one.append(runner.batch(1))
        serial.append(runner.one_by_one(batch))
        together.append(runner.batch(batch))
    out: dict[str, Any] = {
        "one_call": summary(one), "one_by_one": summary(serial), "batch": summary(together),
    }
    out["batch_vs_one_call"] = ratio(out["batch"], out["one_call"])
    out["one_by_one_vs_batch"] = ratio(out["one_by_one"], out["batch"])
    if sweep:
        out["sweep"] = {str(n): summary([runner.batch(n) for _ in range(max(2, repeat // 2))])
                        for n in SWEEP}
    return out


def run(batch: int = 8, repeat: int = 5, delay_ms: int = 100, sweep: bool = True,
        mcp: bool = True) -> dict[str, Any]:
    delay = delay_ms / 1000
    report: dict[str, Any] = {"batch": batch, "repeat": repeat, "delay_ms": delay_ms,
                              "targets": {"batch_vs_one_call_max": 1.5}}
    with tempfile.TemporaryDirectory(prefix="callgate-bench-batch-") as tmp, \
            slow_http_server(delay) as url:
        config = {
            "web": {"allow_loopback": True, "timeout_s": 30},
            "capability": {"cache_dir": str(Path(tmp) / "cache")},
            "mcp_servers": {"fixture": {"command": sys.executable, "args": [str(FIXTURE)]}},
        }
        plugins: list[Any] = [callgate_web, callgate_capability]
        host = sync.Host.boot(config, plugins=plugins, entrypoints=False, surface="full")
        try:
            workspace = Path(tmp) / "ws"
            workspace.mkdir()
            session = host.open_session(str(workspace))
            web = _Runner(session, "web_fetch", {"url": url}, "slow answer")
            report["web_fetch"] = _measure(web, batch, repeat, sweep)
            if mcp:
                connect = session.run(ToolCall("connect", "use_capability", {
                    "action": "call", "capability_id": "mcp-server:fixture"}))
                if connect.is_error:
                    report["mcp_slow"] = {"skipped": f"fixture server: {connect.text[:200]}"}
                else:
                    slow = _Runner(session, "use_capability", {
                        "action": "call", "capability_id": "mcp-tool:fixture/slow",
                        "arguments": {"seconds": delay}}, "slow answer")
                    report["mcp_slow"] = _measure(slow, batch, repeat, sweep)
        finally:
            host.close()
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--delay-ms", type=int, default=100)
    parser.add_argument("--no-sweep", action="store_true")
    parser.add_argument("--no-mcp", action="store_true")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    result = run(args.batch, args.repeat, args.delay_ms, not args.no_sweep, not args.no_mcp)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    for tool in ("web_fetch", "mcp_slow"):
        row = result.get(tool)
        if not row or "skipped" in row:
            print(f"{tool}: {row}")
            continue
        print(f"{tool}: one call {row['one_call']['median']} ms, {args.batch} one by one "
              f"{row['one_by_one']['median']} ms, {args.batch} in one batch "
              f"{row['batch']['median']} ms -> batch/one = {row['batch_vs_one_call']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
