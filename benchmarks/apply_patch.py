"""apply_patch against Codex's reference semantics, and its speed against edit_file (issue 32).

Two parts, one run, a private ``CALLGATE_HOME``:

1. **Scenarios.** Every scenario of ``tests/fixtures/codex_apply_patch/scenarios.json``
   (Codex's 23 fixtures, its unit and CLI tests, and cases its rules decide) runs through
   the whole pipeline on a fresh workspace: each input file is read with read_file (the
   stale guard wants an observation, as a model's session has), then the patch is sent.
   Against Codex's expectation (the files it leaves, and whether it fails) each is
   *correct* (same files, same outcome), *refused loudly* (an error, and every file as it
   was: where callgate refuses on purpose, or a patch it could not place) or *silently
   wrong* (anything else: files that differ from Codex's without an error).
2. **Speed.** The same one-line change made alternately with edit_file and apply_patch on a
   generated file (default 1 MiB and 20 MiB), and a change to three files as one patch
   against three edit_file calls; medians and the apply_patch / edit_file ratio of the same
   run.

    CALLGATE_HOME=$(mktemp -d) .venv/bin/python benchmarks/apply_patch.py [--repeat 9]
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
from pathlib import Path
from typing import Any

import _hermetic  # noqa: F401  (first: a private CALLGATE_HOME and user config)
import callgate_files
from callgate import ToolCall, sync

SCENARIOS = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "codex_apply_patch" \
    / "scenarios.json"
MARKERS = ("MARKER_ALPHA = 1", "MARKER_BETA = 2")
WARMUP = 4  # calls (two of each tool) left out of the medians
_ids = iter(range(1, 1 << 30))


def _call(session: sync.Session, name: str, arguments: dict[str, Any]) -> Any:
    return session.run(ToolCall(f"b{next(_ids)}", name, arguments))


def _tree(root: Path) -> dict[str, bytes]:
    out = {}
    for directory, _dirs, files in os.walk(root):
        for name in files:
            full = Path(directory) / name
            out[str(full.relative_to(root))] = full.read_bytes()
    return out


def run_scenarios(host: sync.Host, scratch: Path) -> dict[str, Any]:
    data = json.loads(SCENARIOS.read_text(encoding="utf-8"))["scenarios"]
    counts = {"correct": 0, "refused_loudly": 0, "silently_wrong": 0}
    refused: list[str] = []
    wrong: list[str] = []
    for k, scenario in enumerate(data):
        ws = scratch / f"s{k}"
        ws.mkdir()
        for rel, text in scenario["input"].items():
            (ws / rel).parent.mkdir(parents=True, exist_ok=True)
            (ws / rel).write_bytes(text.encode())
        session = host.open_session(ws)
        try:
            for rel in scenario["input"]:
                _call(session, "read_file", {"path": rel})
            result = _call(session, "apply_patch", {"patch": scenario["patch"]})
        finally:
            session.close()
        after = _tree(ws)
        expected = {p: t.encode() for p, t in scenario["expected"].items()}
        before = {p: t.encode() for p, t in scenario["input"].items()}
        codex_failed = scenario["codex"] == "error"
        if after == expected and result.is_error == codex_failed:
            counts["correct"] += 1
        elif result.is_error and after == before:
            counts["refused_loudly"] += 1
            why = scenario.get("why", result.error.signature if result.error else "error")
            refused.append(f"{scenario['name']}: {why}")
        else:
            counts["silently_wrong"] += 1
            wrong.append(scenario["name"])
    return {"scenarios": len(data), **counts, "refused": refused, "silently_wrong_names": wrong}


def _generate(path: Path, size: int) -> None:
    block = b"".join(b"    value_%06d = compute(%d)  # filler\n" % (i, i) for i in range(2_000))
    half = size // 2
    with open(path, "wb") as fh:
        written = 0
        while written + len(block) <= half:
            fh.write(block)
            written += len(block)
        fh.write(b"def marked():\n    " + MARKERS[0].encode() + b"\n    return 0\n")
        written = 0
        while written + len(block) <= half:
            fh.write(block)
            written += len(block)


def _edit(k: int, path: str = "big.py") -> dict[str, Any]:
    old, new = MARKERS[k % 2], MARKERS[(k + 1) % 2]
    return {"path": path, "old_string": old, "new_string": new}


def _patch(k: int, paths: tuple[str, ...] = ("big.py",)) -> dict[str, Any]:
    old, new = MARKERS[k % 2], MARKERS[(k + 1) % 2]
    body = "".join(f"*** Update File: {p}\n@@ def marked():\n-    {old}\n+    {new}\n"
                   for p in paths)
    return {"patch": f"*** Begin Patch\n{body}*** End Patch\n"}


def _timed(session: sync.Session, calls: list[tuple[str, dict[str, Any]]]) -> float:
    t = time.perf_counter()
    for name, arguments in calls:
        result = _call(session, name, arguments)
        if result.is_error:
            raise SystemExit(f"{name} failed: {result.text}")
    return time.perf_counter() - t


def run_speed(host: sync.Host, scratch: Path, size_kib: int, repeat: int) -> dict[str, Any]:
    ws = scratch / f"speed{size_kib}"
    ws.mkdir()
    _generate(ws / "big.py", size_kib << 10)
    session = host.open_session(ws)
    try:
        _call(session, "read_file", {"path": "big.py", "limit": 1})
        edit_times, patch_times = [], []
        for k in range(repeat * 2 + WARMUP):  # alternate, so both see the same file sizes
            if k % 2 == 0:
                took = _timed(session, [("edit_file", _edit(k))])
                bucket = edit_times
            else:
                took = _timed(session, [("apply_patch", _patch(k))])
                bucket = patch_times
            if k >= WARMUP:
                bucket.append(took)
    finally:
        session.close()
    edit, patch = statistics.median(edit_times) * 1e3, statistics.median(patch_times) * 1e3
    return {"file_kib": size_kib, "edit_file_ms": round(edit, 2),
            "apply_patch_ms": round(patch, 2), "apply_patch_vs_edit_file": round(patch / edit, 2)}


def run_three_files(host: sync.Host, scratch: Path, repeat: int) -> dict[str, Any]:
    """One change in each of three 64 KiB files: one patch against three edit_file calls."""
    ws = scratch / "three"
    ws.mkdir()
    paths = ("a.py", "b.py", "c.py")
    for p in paths:
        _generate(ws / p, 64 << 10)
    session = host.open_session(ws)
    try:
        for p in paths:
            _call(session, "read_file", {"path": p, "limit": 1})
        edit_times, patch_times = [], []
        for k in range(repeat * 2 + WARMUP):
            if k % 2 == 0:
                took = _timed(session, [("edit_file", _edit(k, p)) for p in paths])
                bucket = edit_times
            else:
                took = _timed(session, [("apply_patch", _patch(k, paths))])
                bucket = patch_times
            if k >= WARMUP:
                bucket.append(took)
    finally:
        session.close()
    edit, patch = statistics.median(edit_times) * 1e3, statistics.median(patch_times) * 1e3
    return {"three_edit_file_calls_ms": round(edit, 2), "one_patch_ms": round(patch, 2),
            "patch_vs_edit_calls": round(patch / edit, 2)}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--sizes-kib", default="1024,20480",
                        help="comma-separated sizes of the generated file, in KiB")
    parser.add_argument("--dir", default=None)
    args = parser.parse_args(argv)
    scratch = Path(tempfile.mkdtemp(prefix="callgate-bench-patch-", dir=args.dir))
    home = os.environ.get("CALLGATE_HOME")
    os.environ["CALLGATE_HOME"] = str(scratch / "home")  # never the user's callgate state
    try:
        host = sync.Host.boot({"files": {"watch": False}}, plugins=[callgate_files],
                              entrypoints=False, surface="full")
        try:
            report: dict[str, Any] = {"scenarios": run_scenarios(host, scratch)}
            report["speed"] = [run_speed(host, scratch, int(size), args.repeat)
                               for size in args.sizes_kib.split(",")]
            report["three_files"] = run_three_files(host, scratch, args.repeat)
        finally:
            host.close()
        return report
    finally:
        if home is None:
            os.environ.pop("CALLGATE_HOME", None)
        else:
            os.environ["CALLGATE_HOME"] = home
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1:]), indent=2))
