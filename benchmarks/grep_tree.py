"""grep over a big source tree (the interpreter's standard library) vs raw ``rg`` and GNU grep.

In one run, on a warm page cache, interleaved per repetition, the same regex
(few enough matches that no tool stops early at callgate's 200-line cap):

- ``rg -n PATTERN .`` — the ``rg`` binary of the PyPI ``ripgrep`` package in this
  venv, the same binary callgate's grep runs (parallel, unordered output);
- ``rg -n --sort path PATTERN .`` — the same, in path order (single-threaded: what
  callgate asked rg for before issue 38's third round, and what it still asks for when
  the output floods, so reading stops at the match cap);
- ``rg -n --sort path -g '!node_modules' -g '!__pycache__' PATTERN .`` — the same work
  callgate's grep asked of rg then (it skips dependency and bytecode folders);
- ``rg -n -g '!node_modules' -g '!__pycache__' PATTERN .`` — the same work, parallel:
  what callgate asks of rg now (it puts the files in path order itself);
- ``grep -rnE PATTERN .`` — GNU grep;
- callgate's ``grep`` tool through the pipeline (workspace = the tree, ``path = "."``).

Match counts are reported next to the times (GNU grep also searches hidden and
ignored files and reports binary matches, so its count may differ). Target
(issue 38): callgate grep <= 1.1x raw ``rg -n``.

    uv run --group bench python benchmarks/grep_tree.py [--tree DIR] [--repeat 5] [--json]
        [--skip-gnu]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import Any

import _hermetic  # noqa: F401  (first: a private CALLGATE_HOME and user config)

sys.path.insert(0, str(Path(__file__).resolve().parent))

import callgate_search
from _timing import ratio, summary
from callgate import ToolCall, sync

PATTERN = r"class .*Mixin\("


def find_rg() -> str | None:
    beside = Path(sys.executable).with_name("rg.exe" if os.name == "nt" else "rg")
    return str(beside) if beside.exists() else shutil.which("rg")


def tree_size(root: str) -> tuple[int, int]:
    files = size = 0
    for base, _dirs, names in os.walk(root):
        for name in names:
            try:
                size += os.lstat(os.path.join(base, name)).st_size
                files += 1
            except OSError:
                pass
    return files, size


def _timed(argv: list[str], cwd: str) -> tuple[float, int]:
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, capture_output=True)
    elapsed = time.perf_counter() - started
    # 1: no match; 2: an error (GNU grep also says 2 for an unreadable file among matches)
    partial = argv[0].endswith("grep") and done.returncode == 2 and done.stdout
    if done.returncode not in (0, 1) and not partial:
        raise SystemExit(f"{' '.join(argv)} failed: {done.stderr[-300:]!r}")
    return elapsed, done.stdout.count(b"\n")


def make_tree(root: str, files: int = 200) -> None:
    """A small tree for smoke runs: Python-like files, a few with the pattern."""
    for i in range(files):
        sub = os.path.join(root, f"pkg{i % 10}")
        os.makedirs(sub, exist_ok=True)
        body = "".join(f"def f{j}(x):\n    return x + {j}\n" for j in range(50))
        if i % 7 == 0:
            body += f"class Thing{i}Mixin(object):\n    pass\n"
        Path(sub, f"mod{i}.py").write_text(body)


def run(tree: str | None = None, repeat: int = 5, pattern: str = PATTERN,
        smoke_files: int = 0, gnu: bool = True) -> dict[str, Any]:
    rg = find_rg()
    if rg is None:
        return {"skipped": "no rg binary (install the PyPI package ripgrep)"}
    scratch = tempfile.mkdtemp(prefix="callgate-bench-grep-")
    try:
        if smoke_files:
            tree = os.path.join(scratch, "tree")
            make_tree(tree, smoke_files)
        root = os.path.realpath(tree or sysconfig.get_paths()["stdlib"])
        files, size = tree_size(root)
        commands = {
            "rg": [rg, "-n", pattern, "."],
            "rg_sorted": [rg, "-n", "--sort", "path", pattern, "."],
            "rg_same_work": [rg, "-n", "--sort", "path", "-g", "!node_modules", "-g",
                             "!__pycache__", pattern, "."],
            "rg_parallel_same_work": [rg, "-n", "-g", "!node_modules", "-g", "!__pycache__",
                                      pattern, "."],
        }
        gnu_grep = shutil.which("grep") if gnu else None
        if gnu_grep:
            commands["gnu_grep"] = [gnu_grep, "-rnE", pattern, "."]
        host = sync.Host.boot({"search": {"timeout_s": 600}}, plugins=[callgate_search],
                              entrypoints=False, surface="full")
        try:
            session = host.open_session(root, session_dir=os.path.join(scratch, "session"))
            seq = iter(range(10**9))

            def ours() -> tuple[float, int]:
                call = ToolCall(f"g{next(seq)}", "grep", {"pattern": pattern, "path": "."})
                started = time.perf_counter()
                result = session.run(call)
                elapsed = time.perf_counter() - started
                if result.is_error:
                    raise SystemExit(f"grep failed: {result.text[:300]}")
                if result.meta.get("truncated") or result.meta.get("timed_out"):
                    raise SystemExit("grep stopped early; pick a rarer pattern")
                return elapsed, int(result.meta.get("matches", 0))

            runners = {name: (lambda argv=argv: _timed(argv, root))
                       for name, argv in commands.items()}
            runners["callgate"] = ours
            counts: dict[str, int] = {}
            for runner in runners.values():  # warm-up: the page cache, rg's first start
                runner()
            samples: dict[str, list[float]] = {name: [] for name in runners}
            for _ in range(repeat):
                for name, runner in runners.items():
                    elapsed, counts[name] = runner()
                    samples[name].append(elapsed)
            engine = session.run(ToolCall("e", "grep", {"pattern": pattern, "path": "."}))
        finally:
            host.close()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    out: dict[str, Any] = {
        "tree": root if not smoke_files else f"(generated, {smoke_files} files)",
        "tree_label": "a generated tree" if smoke_files else "the interpreter's stdlib",
        "files": files, "mb": round(size / 1e6, 1), "pattern": pattern, "repeat": repeat,
        "engine": engine.meta.get("engine"), "matches": counts,
    }
    for name, values in samples.items():
        out[name] = summary(values)
    out["callgate_vs_rg"] = ratio(out["callgate"], out["rg"])
    out["callgate_vs_rg_sorted"] = ratio(out["callgate"], out["rg_sorted"])
    out["callgate_vs_rg_same_work"] = ratio(out["callgate"], out["rg_same_work"])
    out["callgate_vs_rg_parallel_same_work"] = ratio(out["callgate"],
                                                     out["rg_parallel_same_work"])
    if "gnu_grep" in out:
        out["callgate_vs_gnu_grep"] = ratio(out["callgate"], out["gnu_grep"])
    out["targets"] = {"callgate_vs_rg_max": 1.1}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tree", default=None, help="default: the interpreter's stdlib dir")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--pattern", default=PATTERN)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--skip-gnu", action="store_true", help="leave GNU grep out (slow)")
    args = parser.parse_args(argv)
    result = run(args.tree, args.repeat, args.pattern, gnu=not args.skip_gnu)
    if args.json or "skipped" in result:
        print(json.dumps(result, indent=2))
        return 0
    print(f"{result['tree']}: {result['files']} files, {result['mb']} MB; "
          f"matches {result['matches']}")
    for name in ("rg", "rg_sorted", "rg_same_work", "rg_parallel_same_work", "gnu_grep",
                 "callgate"):
        if name in result:
            print(f"{name:21} median {result[name]['median']:8.1f} ms  "
                  f"p95 {result[name]['p95']:8.1f} ms")
    print(f"callgate / rg = {result['callgate_vs_rg']}; / rg --sort path same work = "
          f"{result['callgate_vs_rg_same_work']}; / rg same work = "
          f"{result['callgate_vs_rg_parallel_same_work']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
