"""Figure 2, atomicity: a writer process publishing a file through write_file, edit_file
or multi_edit is killed with SIGKILL at a random moment; the file is always exactly one
complete version (never a torn or truncated mix), and the temp file a killed writer left
behind is gone once the next session's stale-temp sweep has run.

The writers fork from one zygote (`_writer.py`) that imported callgate once. Each
version is ~1.1 MiB with a header and a tail naming its number, so a partial or mixed
file can never equal a version.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import callgate_files
import pytest
from callgate import sync
from callgate_files import FILE_WATCH

from ._writer import content, versions_in

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the writer zygote forks")

TOOLS = ("write_file", "edit_file", "multi_edit")
WRITER = Path(__file__).with_name("_writer.py")
MAX_DELAY_S = 0.4


def temps(directory: Path) -> list[str]:
    return sorted(n for n in os.listdir(directory) if ".callgate-" in n)


def kill_and_wait_gone(pid: int) -> None:
    """Kill a worker that publishes for a killed writer and wait until its pid is gone (not
    even a zombie): the stale-temp sweep must see the publisher dead, as the zygote's reap
    makes it for a writer that publishes itself."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.01)


def test_writers_killed_mid_publish_leave_old_or_new_content_and_no_temp(
        tmp_path: Path, cases: Callable[[int, int], int], figure: Callable[..., None]) -> None:
    total = cases(200, 9)
    ws = tmp_path / "ws"
    ws.mkdir()
    target = ws / "f.txt"
    target.write_text(content(0))
    rng = random.Random(1202)
    zygote = subprocess.Popen([sys.executable, str(WRITER)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, cwd=tmp_path)
    host = sync.Host.boot({"files": {"watch": False}}, plugins=[callgate_files],
                          entrypoints=False)
    failures: list[str] = []
    stats = {"runs": 0, "killed_with_temp_left": 0, "versions_published": 0,
             "temps_swept_at_session_start": 0}
    last = 0
    try:
        assert zygote.stdin is not None and zygote.stdout is not None
        for i in range(total):
            tool = TOOLS[i % len(TOOLS)]
            zygote.stdin.write(json.dumps({"ws": str(ws), "file": "f.txt", "tool": tool}) + "\n")
            zygote.stdin.flush()
            ready = json.loads(zygote.stdout.readline())
            assert "ready" in ready, f"run {i}: the writer did not start"
            time.sleep(rng.uniform(0, MAX_DELAY_S))
            os.kill(ready["ready"], signal.SIGKILL)
            if ready["publisher"] != ready["ready"]:  # its session's worker publishes
                kill_and_wait_gone(ready["publisher"])
            ended = json.loads(zygote.stdout.readline())
            assert ended["exit"] == ready["ready"]
            stats["runs"] += 1
            data = target.read_bytes()
            found = versions_in(data)
            if found is None or max(found) < last:
                failures.append(f"run {i} ({tool}): the file is not one whole version "
                                f"({len(data)} bytes, header {data[:17]!r}), or an older one")
                target.write_text(content(last))
                continue
            stats["versions_published"] += max(found) - last
            last = max(found)
            left = temps(ws)
            if left:
                stats["killed_with_temp_left"] += 1
            session = host.open_session(ws)
            assert session.session.extension(FILE_WATCH).sweep_done.wait(30)
            if temps(ws):
                failures.append(f"run {i} ({tool}): the session-start sweep left {temps(ws)}")
            else:
                stats["temps_swept_at_session_start"] += len(left)
            session.close()
    finally:
        zygote.stdin.close()  # type: ignore[union-attr]
        zygote.wait(timeout=30)
        host.close()
    figure("atomicity", cases=stats["runs"], failures=len(failures), **stats)
    assert not failures, "\n".join(failures[:20])
