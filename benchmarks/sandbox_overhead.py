"""Per-command overhead of the sandbox (issue 13): the median time of ``true`` through the
whole pipeline with the shell plugin alone, with ``[sandbox] enabled = true`` (bwrap), and
with ``network = false`` too (the Unix-socket seccomp filter and its launcher), measured in
the same run, calls interleaved so all see the same machine load.

Also reports the bare process cost (``bash -c true`` started with ``subprocess``,
wrapped and not) to show how much of the difference is ``bwrap`` itself.

    uv run python benchmarks/sandbox_overhead.py [--calls 200] [--json]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

import _hermetic  # noqa: F401  (first: a private CALLGATE_HOME and user config)
import callgate_sandbox
import callgate_shell
from callgate import ToolCall, process, sync


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def row(plain: list[float], boxed: list[float]) -> dict[str, float]:
    p, b = statistics.median(plain), statistics.median(boxed)
    return {"unconfined_median_ms": round(p, 2), "unconfined_p95_ms": round(pct(plain, .95), 2),
            "sandboxed_median_ms": round(b, 2), "sandboxed_p95_ms": round(pct(boxed, .95), 2),
            "overhead_median_ms": round(b - p, 2), "ratio": round(b / p, 2)}


def timed_call(session: Any, i: int) -> float:
    started = time.perf_counter()
    [result] = session.run_batch([ToolCall(f"c{i}", "bash", {"command": "true"})])
    elapsed = (time.perf_counter() - started) * 1000
    if result.is_error:
        raise SystemExit(f"`true` failed: {result.content[0].text}")
    return elapsed


def measure(calls: int) -> dict[str, Any]:
    probe = callgate_sandbox.BwrapBackend().probe()
    if not probe.ok:
        raise SystemExit(f"bubblewrap cannot run here: {probe.detail}")
    plugins = [callgate_shell, callgate_sandbox]
    plain_host = sync.Host.boot({"sandbox": {"enabled": False}}, plugins=plugins,
                                entrypoints=False)
    boxed_host = sync.Host.boot({"sandbox": {"enabled": True}}, plugins=plugins,
                                entrypoints=False)
    # network off adds the seccomp filter (Unix sockets) and its /bin/sh launcher
    offline_host = sync.Host.boot({"sandbox": {"enabled": True, "network": False}},
                                  plugins=plugins, entrypoints=False)
    out: dict[str, Any] = {"backend": probe.detail, "calls": calls}
    with tempfile.TemporaryDirectory() as ws:
        plain = plain_host.open_session(ws)
        boxed = boxed_host.open_session(ws)
        offline = offline_host.open_session(ws)
        try:
            for i in range(10):  # warm-up: threads, caches, the private temp dir
                timed_call(plain, i)
                timed_call(boxed, i)
                timed_call(offline, i)
            pipeline_plain, pipeline_boxed, pipeline_offline = [], [], []
            for i in range(calls):
                pipeline_plain.append(timed_call(plain, i))
                pipeline_boxed.append(timed_call(boxed, i))
                pipeline_offline.append(timed_call(offline, i))
            out["pipeline"] = row(pipeline_plain, pipeline_boxed)
            out["pipeline_network_off"] = row(pipeline_plain, pipeline_offline)

            bash = shutil.which("bash") or "bash"
            argv = [bash, "-c", "true"]
            prepared = process.prepare(boxed.session, argv, workspace="write", network=True,
                                       env=process.Environment(set={"PATH": "/usr/bin:/bin"},
                                                               inherit="minimal"), cwd=ws)
            wrapped, env = list(prepared.argv), dict(prepared.env)
            raw_plain, raw_boxed = [], []
            for _ in range(calls):
                for target, samples in ((argv, raw_plain), (wrapped, raw_boxed)):
                    started = time.perf_counter()
                    subprocess.run(target, env=env, cwd=ws, stdin=subprocess.DEVNULL,
                                   check=True)
                    samples.append((time.perf_counter() - started) * 1000)
            out["process"] = row(raw_plain, raw_boxed)
        finally:
            plain.close()
            boxed.close()
            offline.close()
            plain_host.close()
            boxed_host.close()
            offline_host.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = measure(args.calls)
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"backend: {result['backend']}; {result['calls']} calls each, interleaved")
    for name in ("pipeline", "pipeline_network_off", "process"):
        print(f"{name}:")
        for key, value in result[name].items():
            print(f"  {key:24} {value}")


if __name__ == "__main__":
    sys.exit(main())
