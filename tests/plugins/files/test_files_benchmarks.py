"""The benchmarks run (tiny inputs): they are measured by hand, but must not rot."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[3] / "benchmarks"


def _load(name):
    sys.path.insert(0, str(BENCH))  # a benchmark imports _hermetic, beside it
    try:
        spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(BENCH))


def test_read_file_benchmark_runs(tmp_path):
    report = _load("read_file").main(["--size-mb", "2", "--line", "15000", "--repeat", "1",
                                      "--dir", str(tmp_path)])
    assert report["line"] == 15000 and report["tail_ms"] > 0 and report["first_read_ms"] > 0
    assert report["later_window_ms"] > 0 and "first_read_vs_tail" in report
    assert list(tmp_path.iterdir()) == []


def test_edit_file_benchmark_runs(tmp_path):
    report = _load("edit_file").main(["--size-mb", "1", "--repeat", "1", "--dir", str(tmp_path)])
    assert report["plain_ms"] > 0 and report["edit_file_ms"] > 0 and "edit_vs_plain" in report
    assert list(tmp_path.iterdir()) == []


def test_apply_patch_benchmark_runs(tmp_path):
    report = _load("apply_patch").main(["--repeat", "1", "--sizes-kib", "32",
                                        "--dir", str(tmp_path)])
    scenarios = report["scenarios"]
    assert scenarios["silently_wrong"] == 0, scenarios["silently_wrong_names"]
    assert scenarios["correct"] + scenarios["refused_loudly"] == scenarios["scenarios"]
    [speed] = report["speed"]
    assert speed["edit_file_ms"] > 0 and speed["apply_patch_ms"] > 0
    assert report["three_files"]["one_patch_ms"] > 0
    assert list(tmp_path.iterdir()) == []
