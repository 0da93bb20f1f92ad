"""edit_file on a large file vs plain Python read + replace + atomic write (issue 3).

Generates a text file (default 50 MiB) with one unique marker in the middle and,
in one run, times alternating edits of the marker:

- plain Python: read the bytes, decode, ``str.replace(old, new, 1)``, encode,
  write a temp file, fsync, ``os.replace``;
- edit_file through the whole pipeline (gate, lease, read once, encoding
  detection, matching, diff, double check, atomic publish, ledger update).

Reports medians and the ratio edit_file / plain (target <= 1.5). The file is
deleted afterwards.

    .venv/bin/python benchmarks/edit_file.py [--size-mb 50] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from typing import Any

import _hermetic  # noqa: F401  (first: a private CALLGATE_HOME and user config)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import callgate_files
from _plain import plain_edit
from callgate import ToolCall, sync

MARKERS = ("MARKER_ALPHA = 1", "MARKER_BETA = 2")


def generate(path: str, size: int) -> None:
    block = b"".join(b"    value_%06d = compute(%d)  # filler\n" % (i, i) for i in range(20_000))
    half = size // 2
    with open(path, "wb") as fh:
        written = 0
        while written + len(block) <= half:
            fh.write(block)
            written += len(block)
        fh.write(MARKERS[0].encode() + b"\n")
        written = 0
        while written + len(block) <= half:
            fh.write(block)
            written += len(block)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--dir", default=None)
    args = parser.parse_args(argv)
    size = args.size_mb << 20
    tmp = tempfile.mkdtemp(prefix="callgate-bench-edit-", dir=args.dir)
    try:
        if shutil.disk_usage(tmp).free < size * 4:
            raise SystemExit(f"not enough free disk in {tmp} for a {args.size_mb} MiB file")
        path = os.path.join(tmp, "big.py")
        generate(path, size)
        plain_times = []
        for k in range(args.repeat * 2):
            old, new = MARKERS[k % 2], MARKERS[(k + 1) % 2]
            t = time.perf_counter()
            plain_edit(path, old, new)
            plain_times.append(time.perf_counter() - t)
        host = sync.Host.boot({"files": {"watch": False}}, plugins=[callgate_files],
                              entrypoints=False, surface="full")
        try:
            session = host.open_session(tmp)
            session.run(ToolCall("r", "read_file", {"path": "big.py", "limit": 1}))
            edit_times = []
            for k in range(args.repeat * 2):
                old, new = MARKERS[k % 2], MARKERS[(k + 1) % 2]
                t = time.perf_counter()
                result = session.run(ToolCall("e", "edit_file", {
                    "path": "big.py", "old_string": old, "new_string": new}))
                edit_times.append(time.perf_counter() - t)
                if result.is_error:
                    raise SystemExit(result.text)
        finally:
            host.close()
        plain = statistics.median(plain_times) * 1000
        edit = statistics.median(edit_times) * 1000
        return {"file_mb": args.size_mb, "plain_ms": round(plain, 1),
                "edit_file_ms": round(edit, 1), "edit_vs_plain": round(edit / plain, 2)}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1:]), indent=2))
