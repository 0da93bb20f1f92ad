"""What a remote executor costs (issue 37), in one run.

1. **Per call**: read_file, edit_file and bash through ``session.run`` on a local session
   and on a session bound to ``callgate worker`` over stdio (the worker started directly:
   the transport any backend puts ssh, podman, kubectl or bwrap in front of), alternating
   local and remote calls so both see the same machine. Median and p95 in ms, and the
   remote overhead (remote median − local median; target ≤ +1 ms).
2. **Concurrent sessions**: N sessions on one host, each with a worker of its own, each
   running a read, an edit and a bash call concurrently; errors counted.
3. **Other backends, per call** (same alternation, each against a local session of the
   same run): ``callgate worker`` in a podman container reached with ``podman exec -i``
   (the image of tests/core/worker_image.py, built offline; skipped, saying why, where
   containers cannot run), and ``callgate worker --listen`` over a loopback websocket with a
   bearer token.

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


async def per_call(
    host: Host, calls: int, remote_ws: str | None = None, executor: Any = None
) -> dict[str, Any]:
    """Local against remote, alternating; the remote side is ``callgate worker`` over
    stdio on a fresh directory unless ``remote_ws`` (seeded already) and ``executor`` say
    otherwise."""
    timings: dict[str, dict[str, list[float]]] = {}
    with (
        tempfile.TemporaryDirectory(dir=DIR) as local_ws,
        tempfile.TemporaryDirectory(dir=DIR) as fresh_ws,
    ):
        _seed(local_ws)
        if remote_ws is None:
            remote_ws = fresh_ws
            _seed(remote_ws)
        local = host.open_session(local_ws, executor=[])
        remote = host.open_session(remote_ws, executor=executor or WORKER)
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


def _container_worker() -> tuple[list[str] | None, str, Any]:
    """A running container of the worker image and its transport, or why there is none."""
    import shutil
    import subprocess
    import uuid

    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "core"))
    import worker_image

    engine = shutil.which("podman") or shutil.which("docker")
    if engine is None:
        return None, "neither podman nor docker is installed", None
    try:
        image = worker_image.build(engine)
    except worker_image.CannotBuild as exc:
        return None, f"the worker image cannot be built: {exc}", None
    options, why = worker_image.runtime_options(engine, image)
    if options is None:
        return None, f"containers cannot run here: {why}", None
    name = f"callgate-bench-{uuid.uuid4().hex[:8]}"
    # the workspace on a tmpfs, as the local one in /dev/shm: an edit's fsyncs are not timed
    subprocess.run(
        [engine, "run", "-d", "--name", name, "--tmpfs", "/ws", *options, image],
        check=True,
        capture_output=True,
    )
    seed = (
        "mkdir -p /ws && { echo alpha; for i in $(seq 0 99); do echo line $i; done; } > /ws/a.txt"
    )
    subprocess.run([engine, "exec", name, "sh", "-c", seed], check=True, capture_output=True)

    def remove() -> None:
        subprocess.run([engine, "rm", "-f", "-t", "0", name], capture_output=True)

    return [engine, "exec", "-i", name, "callgate", "worker", "--workspace", "/ws"], "", remove


def _websocket_worker(ws: str) -> tuple[Any, str, Any]:
    """``callgate worker --listen`` on a loopback port, its token in a variable."""
    import re
    import secrets
    import subprocess

    from callgate._executor.remote import RemoteExecutor
    from callgate._executor.websocket import SocketLink

    try:
        import websockets  # noqa: F401
    except ImportError:
        return None, "websockets is not installed (callgate[websocket])", None
    token = secrets.token_hex(24)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "callgate_cli",
            "worker",
            "--workspace",
            ws,
            "--listen",
            "127.0.0.1:0",
            "--token-env",
            "BENCH_WORKER_TOKEN",
        ],
        env={**os.environ, "BENCH_WORKER_TOKEN": token},
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    url = ""
    for line in proc.stderr:
        found = re.search(r"listening on (ws://\S+)", line)
        if found:
            url = found.group(1)
            break
    os.environ["BENCH_HOST_TOKEN"] = token
    link = SocketLink(url, None, "BENCH_HOST_TOKEN", 60.0)
    return RemoteExecutor([url], ws, link=link), "", proc.terminate


async def backends(calls: int) -> dict[str, Any]:
    """Per-call overhead of the container and websocket backends (each beside a local
    session of the same run). The container's worker has the file, search and shell
    plugins, so this host loads just those."""
    host = Host.boot(
        {**CONFIG, "plugins": {"enable": ["files", "search", "shell"]}}, user_config=False
    )
    out: dict[str, Any] = {}
    transport, why, remove = _container_worker()
    if transport is None:
        out["container"] = {"skipped": why}
    else:
        try:
            out["container"] = await per_call(host, calls, "/ws", transport)
        finally:
            remove()
    with tempfile.TemporaryDirectory(dir=DIR) as ws:
        _seed(ws)
        executor, why, stop = _websocket_worker(ws)
        if executor is None:
            out["websocket"] = {"skipped": why}
        else:
            try:
                out["websocket"] = await per_call(host, calls, ws, executor)
            finally:
                stop()
    return out


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    host = Host.boot(CONFIG, user_config=False)
    return {
        "workspace_dir": DIR,
        "per_call": await per_call(host, args.calls),
        "concurrent": await concurrent(host, args.sessions),
        "per_call_backends": await backends(args.calls),
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
