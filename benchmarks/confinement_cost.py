"""What race-free resolution costs read_file and edit_file: this checkout vs a baseline tree.

Issue 16 made every confined path resolve again beneath a held root (``openat2`` or a
no-follow walk, ``*at`` calls in a held parent) instead of reusing the checked string. This
benchmark runs the same calls through the whole pipeline on two trees in one run:

- the baseline: ``--baseline DIR``, a checkout of the code before (e.g. ``git worktree add
  /tmp/base main``), imported from its ``core`` and ``plugins/files`` directories;
- this checkout, imported the same way.

Each tree runs in its own worker process (same interpreter, same venv for the
dependencies), on its own copies of the same generated files (Python-like lines with one
marker, as in ``edit_sizes.py``). The parent interleaves rounds, baseline then candidate,
per cell (tool and size): ``--calls`` calls on one tree, then on the other, the order
flipping every round, so load drift on a shared machine hits both alike. read_file reads
the default window; edit_file flips the marker (the file read once beforehand); each
call is awaited on the async session as an agent host would. Reports each cell's median
and p95, the ratio candidate / baseline of the medians (target <= 1.10), and of the
fastest calls (the least disturbed by other load: an edit's two fsyncs vary most), for
wall time and for the process's CPU time (which a busy machine's run queue does not
inflate: the change is CPU and system-call work, so that ratio is the steadier one).

    uv run python benchmarks/confinement_cost.py --baseline /tmp/base [--sizes 1K,1M]
        [--rounds 15] [--calls 20] [--no-fsync] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import _hermetic  # noqa: F401  (first: a private CALLGATE_HOME and user config)

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _timing import ratio, summary  # noqa: E402

MARKERS = ("MARKER_ALPHA = 1", "MARKER_BETA = 2")
UNITS = {"K": 1 << 10, "M": 1 << 20}
TARGET = 1.10


def parse_size(text: str) -> int:
    text = text.strip().upper()
    return int(float(text[:-1]) * UNITS[text[-1]]) if text[-1:] in UNITS else int(text)


def label(size: int) -> str:
    for unit in ("M", "K"):
        if size >= UNITS[unit] and size % UNITS[unit] == 0:
            return f"{size // UNITS[unit]} {unit}iB"
    return f"{size} B"


def generate(path: str, size: int) -> None:
    """``size`` bytes (to a line) of Python-like lines with the marker line in the middle."""
    line = b"    value_%07d = compute(%d)  # filler to make the file big\n"
    count = max(2, size // len(line % (0, 0)))
    lines = [line % (i, i) for i in range(count)]
    lines[count // 2] = MARKERS[0].encode() + b"\n"
    with open(path, "wb") as fh:
        fh.write(b"".join(lines)[:size] if size > 200 else b"".join(lines))


# --- the worker: one tree, one session -----------------------------------------------------

def worker(sizes: list[int], fsync: bool = True) -> None:
    """Answer each ``<tool> <size> <calls>`` line on stdin with one JSON line of timings."""
    import asyncio

    if not fsync:  # both trees alike: what is left is the work the change is about
        os.fsync = lambda fd: None

    import callgate
    import callgate_files
    from callgate import Host, ToolCall

    tmp = tempfile.mkdtemp(prefix="callgate-bench-confine-")
    for size in sizes:
        for kind in ("r", "e"):
            generate(os.path.join(tmp, f"{kind}_{size}.py"), size)
    host = Host.boot({"files": {"watch": False}}, plugins=[callgate_files], entrypoints=False,
                     surface="full")

    async def serve() -> None:
        async with host.open_session(tmp) as session:
            for size in sizes:
                seen = await session.run(ToolCall("r", "read_file",
                                                  {"path": f"e_{size}.py", "limit": 1}))
                assert not seen.is_error, seen.text
            try:  # callgate.paths since the API was made small; a tree before that: none
                from callgate.paths import confinement_mechanism
            except ImportError:
                confinement_mechanism = getattr(callgate, "confinement_mechanism",
                                                lambda: "string paths")
            print(json.dumps({"ready": callgate.__file__,
                              "mechanism": confinement_mechanism()}), flush=True)
            flips = dict.fromkeys(sizes, 0)
            for line in sys.stdin:  # "<tool> <size> <calls>"
                tool, size_text, calls_text = line.split()
                size, times = int(size_text), []
                for i in range(int(calls_text)):
                    if tool == "read_file":
                        call = ToolCall(f"r{i}", "read_file", {"path": f"r_{size}.py"})
                    else:
                        k = flips[size]
                        flips[size] += 1
                        call = ToolCall(f"e{i}", "edit_file", {
                            "path": f"e_{size}.py", "old_string": MARKERS[k % 2],
                            "new_string": MARKERS[(k + 1) % 2]})
                    started, cpu = time.perf_counter(), time.process_time()
                    r = await session.run(call)
                    times.append((time.perf_counter() - started, time.process_time() - cpu))
                    assert not r.is_error, r.text
                print(json.dumps(times), flush=True)

    try:
        asyncio.run(serve())
    finally:
        for name in os.listdir(tmp):
            os.unlink(os.path.join(tmp, name))
        os.rmdir(tmp)


# --- the parent: two workers, interleaved rounds -------------------------------------------

def _start(tree: Path, sizes: str, fsync: bool) -> subprocess.Popen[str]:
    path = os.pathsep.join(str(tree / p) for p in ("core", "plugins/files"))
    env = {**os.environ, "PYTHONPATH": path + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.Popen([sys.executable, __file__, "--worker", "--sizes", sizes,
                             *([] if fsync else ["--no-fsync"])],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)


def run(baseline: Path, sizes: str = "1K,1M", rounds: int = 15, calls: int = 20,
        candidate: Path = HERE.parent, fsync: bool = True) -> dict[str, Any]:
    """Interleave at the finest useful grain: per round and cell, ``calls`` calls on one
    tree then on the other, the order flipping every round (so neither always goes first)."""
    workers = {"baseline": _start(baseline, sizes, fsync),
               "candidate": _start(candidate, sizes, fsync)}
    report: dict[str, Any] = {"trees": {}, "rounds": rounds, "calls_per_round": calls,
                              "fsync": fsync, "target_max_ratio": TARGET, "rows": []}
    cells = [(tool, size) for size in (parse_size(x) for x in sizes.split(",") if x.strip())
             for tool in ("read_file", "edit_file")]
    samples: dict[str, dict[tuple[str, int], list[list[float]]]] = {"baseline": {},
                                                                     "candidate": {}}
    try:
        for name, proc in workers.items():
            assert proc.stdout is not None
            report["trees"][name] = json.loads(proc.stdout.readline())
        for k in range(rounds + 1):  # round 0 warms both up and is thrown away
            order = list(workers) if k % 2 else list(reversed(workers))
            for cell in cells:
                for name in order:
                    proc = workers[name]
                    assert proc.stdin is not None and proc.stdout is not None
                    proc.stdin.write(f"{cell[0]} {cell[1]} {calls}\n")
                    proc.stdin.flush()
                    got = json.loads(proc.stdout.readline())
                    if k:
                        samples[name].setdefault(cell, []).extend(got)
    finally:
        for proc in workers.values():
            if proc.stdin is not None:
                proc.stdin.close()
            proc.wait(timeout=60)
    for cell in cells:
        row: dict[str, Any] = {"cell": f"{cell[0]} {label(cell[1])}"}
        for i, clock in enumerate(("wall", "cpu")):
            before = summary([x[i] for x in samples["baseline"][cell]], "us")
            after = summary([x[i] for x in samples["candidate"][cell]], "us")
            row[clock] = {"baseline": before, "candidate": after, "ratio": ratio(after, before),
                          "min_ratio": round(after["min"] / before["min"], 3)}
        report["rows"].append(row)
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--baseline", type=Path, help="a checkout of the code before")
    parser.add_argument("--sizes", default="1K,1M")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--no-fsync", action="store_true",
                        help="make fsync a no-op in both trees (it dominates, and varies most)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    sizes = [parse_size(s) for s in args.sizes.split(",") if s.strip()]
    if args.worker:
        worker(sizes, fsync=not args.no_fsync)
        return 0
    if args.baseline is None:
        parser.error("--baseline is required")
    report = run(args.baseline, args.sizes, args.rounds, args.calls, fsync=not args.no_fsync)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    for name, tree in report["trees"].items():
        print(f"{name}: {tree['ready']} ({tree['mechanism']})")
    for row in report["rows"]:
        for clock in ("wall", "cpu"):
            b, c, r = row[clock]["baseline"], row[clock]["candidate"], row[clock]
            print(f"{row['cell']:>16} {clock:>4}: before {b['median']:8.1f} us (p95 "
                  f"{b['p95']:8.1f})  after {c['median']:8.1f} us (p95 {c['p95']:8.1f})  "
                  f"x{r['ratio']} (fastest x{r['min_ratio']})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
