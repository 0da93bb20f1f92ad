"""Profiles behind the missed targets in results.md, reproducible (bench dependency group).

    uv run --group bench python benchmarks/profile_misses.py cold_start  # pyinstrument
    uv run --group bench python benchmarks/profile_misses.py pipeline    # cProfile
    uv run --group bench python benchmarks/profile_misses.py edit --size 1M  # py-spy
    uv run --group bench python benchmarks/profile_misses.py cold_pyspy      # py-spy
    uv run --group bench python benchmarks/profile_misses.py dispatch_pyspy [--tool T]

``cold_start`` runs pyinstrument over a fresh ``callgate tools`` process and
prints the call tree (imports collapsed to the modules that trigger them).
``pipeline`` runs 5,000 batches of one trivial async call under cProfile and
prints the functions by own time. ``edit`` samples a loop of ``edit_file`` calls
with py-spy (the edit runs in a worker thread, out of reach of in-process
profilers) and prints each frame's share of the samples taken inside the edit.
``cold_pyspy`` samples a cold ``callgate tools`` and ``dispatch_pyspy`` a loop of
30,000 one-call batches of a ``pipeline_overhead.py`` tool, both with py-spy (issue 38).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import cProfile
import io
import os
import pstats
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _hermetic  # noqa: F401  (first: a private CALLGATE_HOME and user config)

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def cold_start() -> str:
    from cold_start import callgate_command

    with tempfile.TemporaryDirectory() as cwd:
        done = subprocess.run([sys.executable, "-m", "pyinstrument", "-r", "text",
                               "--show", "*callgate*", *callgate_command()],
                              cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout[done.stdout.find("  _     ._"):] if "  _     ._" in done.stdout \
        else done.stdout + done.stderr


async def _pipeline(calls: int) -> str:
    from callgate import Host, ToolCall
    from pipeline_overhead import ARGS, Bench

    host = Host.boot({}, plugins=[Bench()], entrypoints=False, surface="full")
    with tempfile.TemporaryDirectory() as ws:
        async with host.open_session(ws) as session:
            for i in range(500):
                await session.run_batch([ToolCall(f"w{i}", "noop_async", ARGS)])
            profiler = cProfile.Profile()
            started = time.perf_counter()
            profiler.enable()
            for i in range(calls):
                await session.run_batch([ToolCall(f"c{i}", "noop_async", ARGS)])
            profiler.disable()
            elapsed = time.perf_counter() - started
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.sort_stats("tottime").print_stats(30)
    return (f"{calls} calls, {elapsed / calls * 1e6:.1f} us per call under cProfile\n"
            + out.getvalue())


EDIT_LOOP = r"""
import asyncio, os, sys, tempfile, time
sys.path.insert(0, sys.argv[3])
import callgate_files
from callgate import Host, ToolCall
from edit_sizes import MARKERS, generate
size, n = int(sys.argv[1]), int(sys.argv[2])
tmp = tempfile.mkdtemp()
generate(os.path.join(tmp, "a.py"), size)
async def main():
    host = Host.boot({"files": {"watch": False}}, plugins=[callgate_files],
                     entrypoints=False, surface="full")
    async with host.open_session(tmp) as s:
        await s.run(ToolCall("r", "read_file", {"path": "a.py", "limit": 1}))
        for k in range(n):
            old, new = MARKERS[k % 2], MARKERS[(k + 1) % 2]
            r = await s.run(ToolCall(f"e{k}", "edit_file", {"path": "a.py", "old_string": old,
                                                          "new_string": new}))
            assert not r.is_error, r.text
asyncio.run(main())
os.unlink(os.path.join(tmp, "a.py"))
os.rmdir(tmp)
"""


def edit(size: int, calls: int) -> str:
    py_spy = Path(sys.executable).with_name("py-spy")
    with tempfile.TemporaryDirectory() as tmp:
        raw = os.path.join(tmp, "edit.raw")
        subprocess.run([str(py_spy), "record", "-r", "1000", "-f", "raw", "-o", raw,
                        "--threads", "--", sys.executable, "-c", EDIT_LOOP, str(size),
                        str(calls), str(HERE)], capture_output=True, check=True)
        inclusive: collections.Counter[str] = collections.Counter()
        total = 0
        with open(raw) as fh:
            for line in fh:
                stack, n = line.rsplit(" ", 1)
                frames = stack.split(";")
                if not any("edit_file.py" in f for f in frames):
                    continue
                total += int(n)
                for frame in set(frames):
                    inclusive[frame] += int(n)
    lines = [f"{total} samples inside edit_file ({calls} edits of {size} bytes)"]
    for frame, n in inclusive.most_common(60):
        if "threading" in frame or "anyio" in frame or frame.startswith("thread ("):
            continue
        lines.append(f"{n / max(total, 1) * 100:5.1f}%  {frame[:150]}")
    return "\n".join(lines)


DISPATCH_LOOP = r"""
import asyncio, sys, tempfile
sys.path.insert(0, sys.argv[3])
import _hermetic
from callgate import Host, ToolCall
from pipeline_overhead import ARGS, Bench
tool, n = sys.argv[1], int(sys.argv[2])
async def main():
    host = Host.boot({}, plugins=[Bench()], entrypoints=False, surface="full")
    with tempfile.TemporaryDirectory() as ws:
        async with host.open_session(ws) as s:
            for i in range(n):
                await s.run_batch([ToolCall(f"c{i}", tool, ARGS)])
asyncio.run(main())
"""


def pyspy(argv: list[str], keep: str, top: int = 45) -> str:
    """py-spy's inclusive share of each frame over the samples whose stack holds ``keep``
    (1,000 samples a second, every thread)."""
    py_spy = Path(sys.executable).with_name("py-spy")
    with tempfile.TemporaryDirectory() as tmp:
        raw = os.path.join(tmp, "out.raw")
        subprocess.run([str(py_spy), "record", "-r", "1000", "-f", "raw", "-o", raw,
                        "--threads", "--", *argv], capture_output=True, check=True, cwd=tmp)
        inclusive: collections.Counter[str] = collections.Counter()
        total = 0
        with open(raw) as fh:
            for line in fh:
                stack, n = line.rsplit(" ", 1)
                frames = stack.split(";")
                if not any(keep in f for f in frames):
                    continue
                total += int(n)
                for frame in set(frames):
                    inclusive[frame] += int(n)
    lines = [f"{total} samples with {keep} on the stack"]
    for frame, n in inclusive.most_common(top):
        if frame.startswith(("thread (", "process ")):
            continue
        lines.append(f"{n / max(total, 1) * 100:5.1f}%  {frame[:150]}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("what", choices=["cold_start", "pipeline", "edit", "cold_pyspy",
                                         "dispatch_pyspy"])
    parser.add_argument("--tool", default="noop_async_inline",
                        help="dispatch_pyspy: a tool of pipeline_overhead.py")
    parser.add_argument("--size", default="1M", help="edit: file size (1K, 1M, 50M)")
    parser.add_argument("--calls", type=int, default=0)
    args = parser.parse_args(argv)
    if args.what == "cold_start":
        print(cold_start())
    elif args.what == "cold_pyspy":
        from cold_start import callgate_command

        print(pyspy(callgate_command(), "<module>", 60))
    elif args.what == "dispatch_pyspy":
        print(pyspy([sys.executable, "-c", DISPATCH_LOOP, args.tool, str(args.calls or 30000),
                     str(HERE)], "run_batch"))
    elif args.what == "pipeline":
        print(asyncio.run(_pipeline(args.calls or 5000)))
    else:
        from edit_sizes import parse_size

        size = parse_size(args.size)
        print(edit(size, args.calls or max(20, min(800, (200 << 20) // max(size, 1)))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
