"""Which unit to send to a remote executor (issue 37): the whole tool call, or fs/process
primitives (Codex's exec-server ``fs/*`` RPCs)?

Measured in one run, on one machine:

1. **Primitives per call.** Every file-system and process primitive a tool call makes,
   counted at the Python level (``os.open``, ``os.stat``/``lstat``/``fstat``, ``os.read``,
   ``os.write``, ``os.scandir``, ``os.rename``/``replace``, ``os.unlink``, ``os.fsync``,
   ``open()``, ``subprocess``/``os.posix_spawn``...) for read_file, edit_file, grep, glob and
   bash on a small tree. A primitive executor would send each of them across the
   transport (a generous lower bound: Codex batches ``readFile`` into one RPC, but the
   held-root ``openat`` walk that makes confinement race-free cannot be batched without
   moving confinement to the worker, which is the tool).
2. **One round trip** of a JSON-RPC message over a stdio pipe pair to a child process
   (median, 200-byte and 8 KiB replies).

The estimate for a primitive executor is primitives × round trip; for a whole-call
executor it is one round trip (plus the result's size), over the local pipe and over a
network link (``--link-ms``). Prints JSON.

    CALLGATE_HOME=$(mktemp -d) uv run python benchmarks/executor_unit.py
"""

from __future__ import annotations

import argparse
import builtins
import collections
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

import _hermetic  # noqa: F401  (first: a private CALLGATE_HOME and user config)
from callgate import sync

#: the os-level primitives a remote fs/process API would have to carry
OS_PRIMITIVES = (
    "open", "stat", "lstat", "fstat", "read", "write", "pread", "pwrite", "scandir", "listdir",
    "rename", "replace", "unlink", "mkdir", "rmdir", "fsync", "readlink", "fchmod", "chmod",
    "utime", "link", "symlink", "truncate", "ftruncate", "posix_spawn", "fork", "execve",
    "fdopen", "getcwd", "access",
)

ECHO_CHILD = r"""
import sys
out = sys.stdout.buffer
for line in sys.stdin.buffer:
    n = int(line[1:line.index(b",")])
    out.write(b'{"id":1,"result":"' + b"x" * n + b'"}\n')
    out.flush()
"""


class Counter:
    """Wraps the `OS_PRIMITIVES` (and ``open``, ``subprocess.Popen``) to count calls."""

    def __init__(self) -> None:
        self.counts: collections.Counter[str] = collections.Counter()
        self.active = False
        self._saved: list[tuple[Any, str, Any]] = []

    def _wrap(self, owner: Any, name: str, label: str) -> None:
        original = getattr(owner, name, None)
        if original is None:
            return

        def counted(*args: Any, **kwargs: Any) -> Any:
            if self.active:
                self.counts[label] += 1
            return original(*args, **kwargs)

        self._saved.append((owner, name, original))
        setattr(owner, name, counted)

    def __enter__(self) -> Counter:
        for name in OS_PRIMITIVES:
            self._wrap(os, name, f"os.{name}")
        self._wrap(builtins, "open", "open")
        self._wrap(subprocess.Popen, "_execute_child", "spawn")
        return self

    def __exit__(self, *exc: object) -> None:
        for owner, name, original in reversed(self._saved):
            setattr(owner, name, original)


def make_tree(root: str, files: int) -> None:
    for i in range(files):
        sub = os.path.join(root, f"pkg{i % 10}")
        os.makedirs(sub, exist_ok=True)
        with open(os.path.join(sub, f"mod{i}.py"), "w") as fh:
            fh.write("".join(f"def f{j}(x):\n    return x + {j}\n" for j in range(40)))
    with open(os.path.join(root, "a.txt"), "w") as fh:
        fh.write("".join(f"line {i}\n" for i in range(200)))


def primitives(files: int, repeat: int) -> dict[str, Any]:
    """Primitives per call of each tool (mean over ``repeat`` calls, after a warm-up)."""
    cases = {
        "read_file": ("read_file", {"path": "a.txt"}),
        "edit_file": None,  # alternates two edits (each call changes the file)
        "grep": ("grep", {"pattern": "return x \\+ 7", "max_matches": 50}),
        "glob": ("glob", {"pattern": "**/*.py"}),
        "bash": ("bash", {"command": "true"}),
    }
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as ws:
        make_tree(ws, files)
        host = sync.Host.boot({"files": {"watch": False}}, user_config=False, surface="full")
        with host, host.open_session(ws) as session:
            session.run_batch([_call("read_file", {"path": "a.txt"})])
            for label, case in cases.items():
                with Counter() as counter:
                    for i in range(repeat + 1):
                        if case is None:
                            old, new = ("line 7\n", "LINE 7\n") if i % 2 == 0 else (
                                "LINE 7\n", "line 7\n")
                            call = _call("edit_file", {"path": "a.txt", "old_string": old,
                                                       "new_string": new})
                        else:
                            call = _call(*case)
                        counter.active = i > 0  # the first call warms caches up
                        [result] = session.run_batch([call])
                        assert not result.is_error, result.text
                total = sum(counter.counts.values())
                out[label] = {
                    "per_call": round(total / repeat, 1),
                    "by_kind": {k: round(v / repeat, 1) for k, v in counter.counts.most_common(8)},
                }
    return out


def round_trip(n: int) -> dict[str, Any]:
    """Median seconds of one line-JSON request/reply over stdio to a child process."""
    child = subprocess.Popen([sys.executable, "-c", ECHO_CHILD], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE)
    assert child.stdin is not None and child.stdout is not None
    out: dict[str, Any] = {}
    try:
        for size in (200, 8192):
            samples = []
            request = json.dumps({"id": 1, "method": "fs/read", "params": {"path": "a.txt"}})
            for i in range(n + 50):
                t = time.perf_counter()
                child.stdin.write(f"[{size},{request}]\n".encode())
                child.stdin.flush()
                reply = child.stdout.readline()
                json.loads(reply)
                if i >= 50:
                    samples.append(time.perf_counter() - t)
            out[f"{size}B_us"] = round(statistics.median(samples) * 1e6, 1)
    finally:
        child.stdin.close()
        child.wait()
    return out


_ids = iter(range(1, 1 << 30))


def _call(name: str, arguments: dict[str, Any]) -> Any:
    from callgate import ToolCall

    return ToolCall(f"c{next(_ids)}", name, arguments)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=200, help="files in the tree (grep, glob)")
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--trips", type=int, default=2000)
    parser.add_argument("--link-ms", type=float, default=0.5,
                        help="a network transport's round trip (ssh, kubectl exec) for the "
                        "second estimate (default 0.5 ms: one LAN hop)")
    args = parser.parse_args()
    counts = primitives(args.files, args.repeat)
    rtt = round_trip(args.trips)
    small = rtt["200B_us"]
    estimate = {
        tool: {
            "primitives": c["per_call"],
            "primitive_executor_ms": round(c["per_call"] * small / 1000, 2),
            "whole_call_executor_ms": round(small / 1000, 3),
            f"primitive_executor_ms_at_{args.link_ms:g}ms_link": round(
                c["per_call"] * args.link_ms, 1),
            f"whole_call_executor_ms_at_{args.link_ms:g}ms_link": args.link_ms,
        }
        for tool, c in counts.items()
    }
    print(json.dumps({"tree_files": args.files, "primitives": counts, "round_trip": rtt,
                      "estimate": estimate}, indent=2))


if __name__ == "__main__":
    main()
