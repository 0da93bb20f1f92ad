"""The job_output benchmark runs end to end on a tiny input (the real run is 500 MB)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(os.name != "posix", reason="needs POSIX")

SCRIPT = Path(__file__).resolve().parents[3] / "benchmarks" / "job_output.py"


def test_the_benchmark_reports_throughput_ratios_and_memory_growth():
    done = subprocess.run([sys.executable, str(SCRIPT), "--bytes", "2000000", "--repeat", "1"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["log_bytes"] == [2_000_000]
    assert result["throughput_vs_direct"] > 0 and result["throughput_vs_cat"] > 0
    assert 0 <= result["peak_rss_growth_mib"] < 64
    assert "peak RSS growth" in done.stderr
