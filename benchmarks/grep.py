"""The grep tool through the host vs raw ``rg`` vs the pure-Python engine, in one run.

The tree is the running interpreter's standard library directory (a real,
large tree every machine has; ``--tree`` picks another). For each pattern,
repetitions are interleaved (rg, tool on rg, tool on the Python engine) after
one warm-up round, so all three see the same page cache and machine load;
the figures are medians, and the ratios are taken between medians of the
same run:

- ``rg``: the ``rg`` binary callgate finds, run with the flags the rg engine passes
  (``--json --no-config ...``: parallel, unordered, as the engine runs it unless the
  output floods; issue 38), its output drained;
- ``tool``: ``grep`` through ``Session.run_batch`` (validation, gates, result
  shaping), ``[search] grep_engine = "rg"``;
- ``python``: the same call with ``grep_engine = "python"``.

Patterns have fewer matches than the 200-line cap, so no variant stops early.
Targets (issue 6): tool <= 1.2x rg; Python engine <= 10x rg.

    .venv/bin/python benchmarks/grep.py [--tree DIR] [--repeat 5] [--pattern RE ...] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import sysconfig
import time
from typing import Any

import _hermetic  # noqa: F401  (first: a private CALLGATE_HOME and user config)
import callgate_search
from callgate import ToolCall, sync
from callgate_search._engine_rg import BASE_FLAGS
from callgate_search._rg import find_rg

PATTERNS = (
    r"def __init_subclass__",  # a rare identifier: literal-led (78 lines in CPython 3.11's tree)
    r"class \w+Mixin\(",       # a regex with a literal prefix (127)
    r"(?i)not thread.safe",    # case-insensitive (36)
)
# Not in the default set: a pattern with no literal at all (``\w+_[0-9]{5}x``) leaves the
# Python engine nothing to prefilter with; it then runs the regex over every text file
# (tens of times rg's time on this tree). Pass it with --pattern to see it.


def _timed(fn: Any) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def run(tree: str, patterns: list[str], repeat: int) -> dict[str, Any]:
    rg = find_rg()
    if rg is None:
        raise SystemExit("no rg binary found next to the interpreter or on PATH")
    hosts = {engine: sync.Host.boot({"search": {"grep_engine": engine, "timeout_s": 600}},
                                    plugins=[callgate_search], entrypoints=False,
                                    surface="full")
             for engine in ("rg", "python")}
    sessions = {engine: host.open_session(tree) for engine, host in hosts.items()}
    rows = []
    try:
        for pattern in patterns:
            counts: dict[str, int] = {}

            def raw(pattern: str = pattern, counts: dict[str, int] = counts) -> None:
                done = subprocess.run([rg, *BASE_FLAGS, "--regexp", pattern, "--", "."],
                                      cwd=tree, stdout=subprocess.PIPE,
                                      stderr=subprocess.DEVNULL, check=False)
                counts["rg"] = sum(1 for line in done.stdout.splitlines()
                                   if line.startswith(b'{"type":"match"'))

            def tool(engine: str, label: str, pattern: str = pattern,
                     counts: dict[str, int] = counts) -> None:
                [result] = sessions[engine].run_batch(
                    [ToolCall("b", "grep", {"pattern": pattern})])
                assert not result.is_error, result.text
                assert result.meta["engine"] == engine
                counts[label] = result.meta["matches"]

            variants = {"rg": raw, "tool": lambda: tool("rg", "tool"),
                        "python": lambda: tool("python", "python")}
            samples: dict[str, list[float]] = {name: [] for name in variants}
            for round_ in range(repeat + 1):
                for name, fn in variants.items():
                    seconds = _timed(fn)
                    if round_:
                        samples[name].append(seconds)
            medians = {name: statistics.median(values) for name, values in samples.items()}
            rows.append({
                "pattern": pattern,
                "matches": counts,
                "median_ms": {name: round(value * 1e3, 2) for name, value in medians.items()},
                "min_ms": {name: round(min(values) * 1e3, 2) for name, values in samples.items()},
                "tool_over_rg": round(medians["tool"] / medians["rg"], 3),
                "python_over_rg": round(medians["python"] / medians["rg"], 3),
            })
    finally:
        for host in hosts.values():
            host.close()
    return {"tree": tree, "repeat": repeat, "rg": rg, "python": sys.version.split()[0],
            "rows": rows,
            "targets": {"tool_over_rg": 1.2, "python_over_rg": 10.0}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--tree", default=sysconfig.get_paths()["stdlib"])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--pattern", action="append", dest="patterns")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    report = run(args.tree, args.patterns or list(PATTERNS), max(1, args.repeat))
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"tree {report['tree']}  repeat {report['repeat']}  (medians, ms)")
    print(f"{'pattern':34} {'matches':>8} {'rg':>9} {'tool':>9} {'python':>9} "
          f"{'tool/rg':>8} {'py/rg':>7}")
    for row in report["rows"]:
        m = row["median_ms"]
        print(f"{row['pattern'][:34]:34} {row['matches'].get('rg', 0):>8} {m['rg']:>9} "
              f"{m['tool']:>9} {m['python']:>9} {row['tool_over_rg']:>8} "
              f"{row['python_over_rg']:>7}")
    print("targets: tool/rg <= 1.2, python/rg <= 10")
    return 0


if __name__ == "__main__":
    sys.exit(main())
