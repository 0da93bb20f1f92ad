"""benchmarks/grep.py runs end to end on a tiny tree (the real run is by hand)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[3] / "benchmarks" / "grep.py"


def test_grep_benchmark_runs_on_a_tiny_tree(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text("class FooMixin(object):\n    pass\n")
    (tmp_path / "b.py").write_text("def __init_subclass__(cls):\n    pass\n")
    done = subprocess.run([sys.executable, str(SCRIPT), "--tree", str(tmp_path), "--repeat",
                           "1", "--json"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert [row["pattern"] for row in report["rows"]][:2] == [r"def __init_subclass__",
                                                             r"class \w+Mixin\("]
    for row in report["rows"]:
        counts = row["matches"]
        assert counts["rg"] == counts["tool"] == counts["python"]
        assert row["tool_over_rg"] > 0 and row["python_over_rg"] > 0
    assert report["rows"][0]["matches"]["rg"] == 1
    assert report["rows"][1]["matches"]["python"] == 1
