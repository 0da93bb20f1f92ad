"""One background job writing N bytes (default 500 MB) through callgate-shell (issue 4).

Measures, in one run and interleaved so that machine load hits both alike:

- the peak RSS growth of the host process while the job runs (target ≤ 64 MiB):
  output streams from the pipe to the job log, memory keeps only a 64 KiB tail;
- the job's throughput (bytes from start to ``done``, seen through
  ``job_output(wait=true)``) against the same producer writing straight into a
  file (``yes | head -c N > file``) and through one extra pipe
  (``yes | head -c N | cat > file``); target ≥ 50 % of each. Ratios use the
  medians over ``--repeat`` runs; best-of ratios are reported too.

Prints one JSON object on stdout and a readable summary on stderr.

    .venv/bin/python benchmarks/job_output.py [--bytes 500000000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any

import _hermetic  # noqa: F401  (first: a private CALLGATE_HOME and user config)
import callgate_shell
from callgate import ToolCall, sync
from callgate_shell import JOBS

MIB = 1 << 20


def rss() -> int:
    """Current resident set size in bytes (Linux /proc; psutil elsewhere)."""
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        import psutil

        return psutil.Process().memory_info().rss


class PeakSampler:
    """Samples RSS every 2 ms in a thread; ``growth`` is the peak minus the start."""

    def __init__(self) -> None:
        self.start = rss()
        self.peak = self.start
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, rss())
            time.sleep(0.002)

    def __enter__(self) -> PeakSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, rss())

    @property
    def growth(self) -> int:
        return self.peak - self.start


def shell_time(command: str) -> float:
    t0 = time.perf_counter()
    subprocess.run(["bash", "-c", command], check=True)
    return time.perf_counter() - t0


def run_job(session: sync.Session, n: int, seq: int) -> tuple[float, int, int]:
    """Seconds from start to done, RSS growth, and the log's size."""
    with PeakSampler() as sampler:
        t0 = time.perf_counter()
        started = session.run(ToolCall(f"s{seq}", "bash", {
            "command": f"yes | head -c {n}", "run_in_background": True}))
        job_id = started.meta["job_id"]
        listed = session.run(ToolCall(f"w{seq}", "job_output",
                                      {"wait": True, "timeout_ms": 600_000}))
        elapsed = time.perf_counter() - t0
    job = session.session.extension(JOBS).get(job_id)
    if job is None or not job.finished.is_set() or job.status != "done":
        raise SystemExit(f"the job did not finish: {listed.text}")
    size = os.path.getsize(job.log_path)
    return elapsed, sampler.growth, size


def measure(n: int, repeat: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="callgate-bench-") as tmp:
        workspace = os.path.join(tmp, "ws")
        os.mkdir(workspace)
        host = sync.Host.boot({"shell": {"max_running_jobs": 4}}, plugins=[callgate_shell],
                              entrypoints=False, surface="full")
        try:
            # here, whatever the user config's [executor] says: the figures are this
            # process's throughput and peak RSS (a worker's would be another process's)
            session = host.open_session(workspace, session_dir=os.path.join(tmp, "session"),
                                        executor=[])
            run_job(session, 1024, 0)  # warm up: imports, threads, the job directory
            direct_file = os.path.join(tmp, "direct.out")
            cat_file = os.path.join(tmp, "cat.out")
            jobs, growth, direct, via_cat, sizes = [], [], [], [], []
            for i in range(1, repeat + 1):
                direct.append(shell_time(f"yes | head -c {n} > {direct_file}"))
                os.unlink(direct_file)
                elapsed, grew, size = run_job(session, n, i)
                jobs.append(elapsed)
                growth.append(grew)
                sizes.append(size)
                via_cat.append(shell_time(f"yes | head -c {n} | cat > {cat_file}"))
                os.unlink(cat_file)
                # each job's log stays until the session closes; free the disk now
                os.truncate(session.session.extension(JOBS).get(f"bash-{i + 1}").log_path, 0)
        finally:
            host.close()
    job_s, direct_s, cat_s = (statistics.median(v) for v in (jobs, direct, via_cat))
    return {
        "bytes": n,
        "repeat": repeat,
        "log_bytes": sizes,
        "job_seconds": [round(v, 3) for v in jobs],
        "direct_seconds": [round(v, 3) for v in direct],
        "cat_seconds": [round(v, 3) for v in via_cat],
        "job_mb_per_s": round(n / job_s / 1e6, 1),
        "direct_mb_per_s": round(n / direct_s / 1e6, 1),
        "cat_mb_per_s": round(n / cat_s / 1e6, 1),
        "throughput_vs_direct": round(direct_s / job_s, 3),
        "throughput_vs_cat": round(cat_s / job_s, 3),
        "best_of_vs_direct": round(min(direct) / min(jobs), 3),
        "best_of_vs_cat": round(min(via_cat) / min(jobs), 3),
        "peak_rss_growth_mib": round(max(growth) / MIB, 2),
        "targets": {"peak_rss_growth_mib_max": 64, "throughput_ratio_min": 0.5},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bytes", type=int, default=500_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    result = measure(args.bytes, args.repeat)
    print(json.dumps(result))
    print(f"job: {result['job_mb_per_s']} MB/s; yes|head > file: {result['direct_mb_per_s']} "
          f"MB/s (ratio {result['throughput_vs_direct']}); via cat: {result['cat_mb_per_s']} "
          f"MB/s (ratio {result['throughput_vs_cat']}); peak RSS growth "
          f"{result['peak_rss_growth_mib']} MiB", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
