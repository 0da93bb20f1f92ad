"""What a remote executor costs (issue 37), in one run.

1. **Per call**: read_file, edit_file and bash through ``session.run`` on a local session
   and on a session bound to ``callgate worker`` over stdio (the worker started directly:
   the transport any backend puts ssh, podman, kubectl or bwrap in front of), alternating
   local and remote calls so both see the same machine. Median and p95 in ms, and the
   remote overhead (remote median − local median; target ≤ +1 ms).
2. **Concurrent sessions**: N sessions on one host, each with a worker of its own, each
   running a read, an edit and a bash call concurrently; errors counted.

Workspaces are made in ``--dir`` (default ``/dev/shm`` where it exists): on a disk, an
edit's two fsyncs (the file, its directory) take milliseconds that vary with whatever else
writes to the disk, and would hide the executor's own cost.

    CALLGATE_HOME=$(mktemp -d) uv run python benchmarks/executor.py [--calls 300] [--sessions 50]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from typing import Any

import _hermetic  # noqa: F401  (first: a private CALLGATE_HOME and user config)
import anyio
from callgate import Host, ToolCall

WORKER = [sys.executable, "-m", "callgate_cli", "worker", "--workspace", "{workspace}"]
CONFIG = {"files": {"watch": False}}
_ids = iter(range(1, 1 << 30))
DIR: str | None = "/dev/shm" if os.path.isdir("/dev/shm") else None


def _call(name: str, arguments: dict[str, Any]) -> ToolCall:
    return ToolCall(f"b{next(_ids)}", name, arguments)


def _calls(i: int) -> dict[str, ToolCall]:
    old, new = ("alpha", "beta") if i % 2 == 0 else ("beta", "alpha")
    return {
        "read_file": _call("read_file", {"path": "a.txt"}),
        "edit_file": _call("edit_file", {"path": "a.txt", "old_string": old, "new_string": new}),
        "bash": _call("bash", {"command": "true"}),
    }


def _seed(ws: str) -> None:
    with open(os.path.join(ws, "a.txt"), "w") as fh:
        fh.write("alpha\n" + "".join(f"line {i}\n" for i in range(100)))


def _summary(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {
        "median_ms": round(ordered[len(ordered) // 2] * 1e3, 3),
        "p95_ms": round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))] * 1e3, 3),
    }


async def per_call(host: Host, calls: int) -> dict[str, Any]:
    timings: dict[str, dict[str, list[float]]] = {}
    with (
        tempfile.TemporaryDirectory(dir=DIR) as local_ws,
        tempfile.TemporaryDirectory(dir=DIR) as remote_ws,
    ):
        _seed(local_ws)
        _seed(remote_ws)
        local = host.open_session(local_ws, executor=[])
        remote = host.open_session(remote_ws, executor=WORKER)
        try:
            for session in (local, remote):  # warm-up: the worker starts, caches fill
                for i in range(10):
                    for c in _calls(i).values():
                        [r] = await session.run_batch([c])
                        assert not r.is_error, r.text
            for i in range(calls):
                for where, session in (("local", local), ("remote", remote)):
                    for name, c in _calls(i).items():
                        t = time.perf_counter()
                        [r] = await session.run_batch([c])
                        elapsed = time.perf_counter() - t
                        assert not r.is_error, r.text
                        timings.setdefault(name, {}).setdefault(where, []).append(elapsed)
        finally:
            await local.close()
            await remote.close()
    out: dict[str, Any] = {}
    for name, by in timings.items():
        lo, re = _summary(by["local"]), _summary(by["remote"])
        out[name] = {
            "local": lo,
            "remote": re,
            "overhead_ms": round(re["median_ms"] - lo["median_ms"], 3),
        }
    return out


async def concurrent(host: Host, sessions: int) -> dict[str, Any]:
    errors: list[str] = []
    dirs = [tempfile.mkdtemp(prefix="callgate-bench-", dir=DIR) for _ in range(sessions)]
    for d in dirs:
        _seed(d)
    opened = [host.open_session(d, executor=WORKER) for d in dirs]
    started = time.perf_counter()

    async def one(session: Any) -> None:
        try:
            for i in range(3):
                for c in _calls(i).values():
                    [r] = await session.run_batch([c])
                    if r.is_error:
                        errors.append(f"{c.name}: {r.text[:200]}")
        except Exception as exc:  # counted, never raised: every session is measured
            errors.append(f"{type(exc).__name__}: {exc}")

    try:
        async with anyio.create_task_group() as tg:
            for session in opened:
                tg.start_soon(one, session)
    finally:
        elapsed = time.perf_counter() - started
        for session in opened:
            await session.close()
        for d in dirs:
            import shutil

            shutil.rmtree(d, ignore_errors=True)
    return {
        "sessions": sessions,
        "calls": sessions * 9,
        "errors": len(errors),
        "first_errors": errors[:3],
        "seconds": round(elapsed, 2),
    }


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    host = Host.boot(CONFIG, user_config=False)
    return {
        "workspace_dir": DIR,
        "per_call": await per_call(host, args.calls),
        "concurrent": await concurrent(host, args.sessions),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--dir", default=DIR, help="where the workspaces are made")
    args = parser.parse_args()
    globals()["DIR"] = args.dir
    print(json.dumps(anyio.run(main_async, args), indent=2))


if __name__ == "__main__":
    main()
