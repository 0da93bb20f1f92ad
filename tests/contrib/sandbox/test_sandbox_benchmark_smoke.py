"""The overhead benchmark runs end to end on a few calls (the real run takes 200)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from .sandbox_helpers import needs_bwrap

SCRIPT = Path(__file__).resolve().parents[3] / "benchmarks" / "sandbox_overhead.py"


@needs_bwrap
def test_the_benchmark_reports_both_medians_and_the_ratio():
    done = subprocess.run([sys.executable, str(SCRIPT), "--calls", "5", "--json"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["calls"] == 5 and result["backend"].startswith("bubblewrap")
    for name in ("pipeline", "process"):
        row = result[name]
        assert row["unconfined_median_ms"] > 0 and row["sandboxed_median_ms"] > 0
        ratio = row["sandboxed_median_ms"] / row["unconfined_median_ms"]
        assert abs(row["ratio"] - ratio) < 0.05  # the medians are rounded to 0.01 ms
