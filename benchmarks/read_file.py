"""read_file on a huge file vs ``tail -n +K | head -n 100`` (issue 3).

Generates a text file (default 1 GiB, lines of 60-140 bytes), then, in one run
on a warm page cache, measures:

- ``tail -n +K FILE | head -n 100`` (K = the line),
- the first read_file window of 100 lines at line K through the whole pipeline
  (a fresh line index each time: what a session pays the first time),
- later windows of the same file version (the sparse index lets them seek).

Reports medians and the ratio first-read / tail (target <= 1.5) and the later
windows' median (target <= 5 ms). The file is deleted afterwards.

    .venv/bin/python benchmarks/read_file.py [--size-mb 1024] [--line 5000000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

import _hermetic  # noqa: F401  (first: a private CALLGATE_HOME and user config)
import callgate_files
import callgate_files._window as window
from callgate import ToolCall, sync


def generate(path: str, size: int) -> int:
    """Write ``size`` bytes of lines of 60-140 bytes; returns the line count."""
    lines = [(b"%07d " % i) + b"abcdefghij" * ((i * 7919) % 9 + 5) + b"\n" for i in range(10_000)]
    block = b"".join(lines)
    lines_per_block = len(lines)
    written = count = 0
    with open(path, "wb") as fh:
        while written + len(block) <= size:
            fh.write(block)
            written += len(block)
            count += lines_per_block
        rest = block[: size - written]
        rest = rest[: rest.rfind(b"\n") + 1]
        fh.write(rest)
        count += rest.count(b"\n")
    return count


def _median_ms(values: list[float]) -> float:
    return round(statistics.median(values) * 1000, 2)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=int, default=1024)
    parser.add_argument("--line", type=int, default=5_000_000)
    parser.add_argument("--limit", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--dir", default=None, help="where to generate the file")
    args = parser.parse_args(argv)
    size = args.size_mb << 20
    tmp = tempfile.mkdtemp(prefix="callgate-bench-read-", dir=args.dir)
    try:
        if shutil.disk_usage(tmp).free < size * 1.5:
            raise SystemExit(f"not enough free disk in {tmp} for a {args.size_mb} MiB file")
        path = os.path.join(tmp, "big.txt")
        total = generate(path, size)
        line = min(args.line, max(1, total - args.limit))
        shell = f"tail -n +{line} {path} | head -n {args.limit}"
        expected = subprocess.run(["sh", "-c", shell], capture_output=True, check=True).stdout
        host = sync.Host.boot({"files": {"watch": False}}, plugins=[callgate_files],
                              entrypoints=False, surface="full")
        try:
            session = host.open_session(tmp)

            def read(offset: int) -> Any:
                return session.run(ToolCall("b", "read_file", {"path": "big.txt",
                                                               "offset": offset,
                                                               "limit": args.limit}))

            # tail and first reads alternate, so a change in machine load hits both alike
            tail_times, first_times = [], []
            for _ in range(args.repeat):
                t = time.perf_counter()
                subprocess.run(["sh", "-c", shell], stdout=subprocess.DEVNULL, check=True)
                tail_times.append(time.perf_counter() - t)
                window.INDEXES = window.IndexCache()  # forget the line index: a first read
                t = time.perf_counter()
                result = read(line - 1)
                first_times.append(time.perf_counter() - t)
            shown = [row.split("→", 1)[1] for row in result.text.split("\n\n")[0].split("\n")]
            if "\n".join(shown).encode() + b"\n" != expected:
                raise SystemExit("read_file and tail disagree about the window")
            later_times = []
            for k in range(max(args.repeat, 5) * 4):
                offset = max(0, line - 1 - (k * 7_777) % max(1, line - 1))
                t = time.perf_counter()
                read(offset)
                later_times.append(time.perf_counter() - t)
        finally:
            host.close()
        report = {
            "file_mb": args.size_mb, "lines": total, "line": line, "limit": args.limit,
            "tail_ms": _median_ms(tail_times), "first_read_ms": _median_ms(first_times),
            "later_window_ms": _median_ms(later_times),
        }
        report["first_read_vs_tail"] = round(report["first_read_ms"] / report["tail_ms"], 2)
        return report
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1:]), indent=2))
