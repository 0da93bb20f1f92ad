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
        # the medians are rounded to 0.01 ms and the ratio to 0.01: the ratio of the true
        # medians lies between what the rounded ones allow (a fixed tolerance fails when the
        # unconfined median is small and the ratio large, as on a loaded machine)
        unconfined, sandboxed = row["unconfined_median_ms"], row["sandboxed_median_ms"]
        lowest = (sandboxed - 0.005) / (unconfined + 0.005)
        highest = (sandboxed + 0.005) / max(unconfined - 0.005, 1e-9)
        assert lowest - 0.005 <= row["ratio"] <= highest + 0.005
