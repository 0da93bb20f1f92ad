"""Timing helpers shared by the benchmarks this suite owns: repeat with warm-up, summarize.

Every figure is a median with its p95 over the kept samples (warm-up runs are
thrown away); ratios are taken between medians measured in the same run, since
absolute times drift on a shared machine and ratios hold.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any


def pct(values: list[float], q: float) -> float:
    """The ``q`` quantile by rank (no interpolation): p95 of 20 samples is the 19th."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def summary(seconds: list[float], unit: str = "ms") -> dict[str, Any]:
    """Median, p95, min and sample count of ``seconds``, scaled to ``unit`` (s, ms or us)."""
    scale = {"s": 1.0, "ms": 1e3, "us": 1e6}[unit]
    digits = 4 if unit == "s" else 2
    return {
        "unit": unit,
        "n": len(seconds),
        "median": round(statistics.median(seconds) * scale, digits),
        "p95": round(pct(seconds, 0.95) * scale, digits),
        "min": round(min(seconds) * scale, digits),
    }


def repeat(fn: Callable[[], Any], times: int, warmup: int = 1) -> list[float]:
    """Run ``fn`` ``warmup`` times untimed, then ``times`` times; seconds per run."""
    for _ in range(warmup):
        fn()
    out = []
    for _ in range(times):
        started = time.perf_counter()
        fn()
        out.append(time.perf_counter() - started)
    return out


def ratio(a: dict[str, Any], b: dict[str, Any]) -> float:
    """``a``'s median over ``b``'s (both summaries in the same unit)."""
    assert a["unit"] == b["unit"], (a["unit"], b["unit"])
    return round(a["median"] / b["median"], 3) if b["median"] else float("inf")
