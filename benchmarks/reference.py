"""Issue 11's reference figures that no callgate benchmark already re-measures.

The issue lists figures measured on this machine to be re-measured in each run.
The others come out of the benchmarks themselves (``tail | head``, ``rg -n``,
GNU grep, one plain ``str_replace``, openhands-aci, ``MCPServer.call_tool``,
``mcp.Client``, ``python -c pass``, the core's imports, ``yes | head > file``);
this module times the rest, none of which involves callgate:

- 100 lines at line 5,000,001 of a 1 GiB file (the files benchmark's generator):
  ``tail -n +K | head``, ``sed -n 'K,K+99p;K+99q'``, and Python ``islice`` over the
  file's byte lines;
- a naive ``os.walk`` + ``re`` loop over the interpreter's stdlib (every file,
  every line, no skipping): the floor a grep with no index and no rg would have;
- ``Draft202012Validator.validate`` of a 3-property object (what the
  pipeline's fast schema check avoids paying per call).

    uv run --group bench python benchmarks/reference.py [--size-mb 1024] [--json]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
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

import jsonschema
from _timing import summary
from grep_tree import PATTERN, make_tree
from read_file import generate

SCHEMA = {
    "type": "object",
    "properties": {"path": {"type": "string", "minLength": 1},
                   "limit": {"type": "integer", "minimum": 1},
                   "verbose": {"type": "boolean"}},
    "required": ["path"],
    "additionalProperties": False,
}


def _shell(command: str) -> float:
    started = time.perf_counter()
    subprocess.run(["sh", "-c", command], stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - started


def _islice(path: str, line: int, limit: int) -> float:
    started = time.perf_counter()
    with open(path, "rb") as fh:
        got = list(itertools.islice(fh, line - 1, line - 1 + limit))
    elapsed = time.perf_counter() - started
    assert len(got) == limit, len(got)
    return elapsed


def naive_grep(root: str, pattern: str) -> tuple[float, int]:
    """Every file under ``root``, decoded leniently, every line searched with ``re``."""
    rx = re.compile(pattern)
    found = 0
    started = time.perf_counter()
    for base, _dirs, names in os.walk(root):
        for name in names:
            try:
                with open(os.path.join(base, name), encoding="utf-8", errors="replace") as fh:
                    for text in fh:
                        if rx.search(text):
                            found += 1
            except OSError:
                pass
    return time.perf_counter() - started, found


def validate_us(calls: int) -> dict[str, Any]:
    validator = jsonschema.Draft202012Validator(SCHEMA)
    value = {"path": "a.txt", "limit": 10, "verbose": False}
    for _ in range(200):
        validator.validate(value)
    samples = []
    for _ in range(calls):
        started = time.perf_counter_ns()
        validator.validate(value)
        samples.append((time.perf_counter_ns() - started) / 1e9)
    return summary(samples, "us")


def run(size_mb: int = 1024, line: int = 5_000_001, limit: int = 100, repeat: int = 5,
        tree: str | None = None, naive_repeat: int = 2, directory: str | None = None,
        smoke_files: int = 0) -> dict[str, Any]:
    tmp = tempfile.mkdtemp(prefix="callgate-bench-ref-", dir=directory)
    try:
        size = size_mb << 20
        if shutil.disk_usage(tmp).free < size * 1.5:
            raise SystemExit(f"not enough free disk in {tmp} for a {size_mb} MiB file")
        path = os.path.join(tmp, "big.txt")
        total = generate(path, size)
        line = min(line, max(1, total - limit))
        last = line + limit - 1
        contenders = {
            "tail_head": lambda: _shell(f"tail -n +{line} {path} | head -n {limit}"),
            "sed": lambda: _shell(f"sed -n '{line},{last}p;{last}q' {path}"),
            "python_islice": lambda: _islice(path, line, limit),
        }
        for fn in contenders.values():  # warm-up: the page cache
            fn()
        samples: dict[str, list[float]] = {name: [] for name in contenders}
        for _ in range(repeat):
            for name, fn in contenders.items():
                samples[name].append(fn())
        os.unlink(path)
        if smoke_files:
            tree = os.path.join(tmp, "tree")
            make_tree(tree, smoke_files)
        root = tree or sysconfig.get_paths()["stdlib"]
        naive = [naive_grep(root, PATTERN) for _ in range(naive_repeat)]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    out: dict[str, Any] = {"file_mb": size_mb, "line": line, "limit": limit,
                           "pattern": PATTERN,
                           "tree": "a generated tree" if smoke_files else root}
    for name, values in samples.items():
        out[name] = summary(values)
    out["naive_walk_re"] = summary([t for t, _ in naive], "s")
    out["naive_walk_re_matches"] = naive[0][1]
    out["jsonschema_validate"] = validate_us(2000 if smoke_files else 20_000)
    out["issue_reference"] = {"tail_head_ms": 107, "sed_ms": 249, "python_islice_ms": 252,
                              "naive_walk_re_s": 7.9, "jsonschema_validate_us": 19.6}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size-mb", type=int, default=1024)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--naive-repeat", type=int, default=2)
    parser.add_argument("--tree", default=None)
    parser.add_argument("--dir", default=None)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    result = run(args.size_mb, repeat=args.repeat, tree=args.tree,
                 naive_repeat=args.naive_repeat, directory=args.dir)
    print(json.dumps(result, indent=2 if args.json else None))
    return 0


if __name__ == "__main__":
    sys.exit(main())
