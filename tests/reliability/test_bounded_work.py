"""Bounded work (issue 16, defect 6): FIFOs never block a tool, parsing has a size cap, and
a cancel frees the session even from a tool stuck in a blocking read.

- A FIFO named ``x.py`` (no writer, so any blocking open or read would wait forever)
  given to every reading tool and to directory walks: each answers within seconds.
- A 20 MB ``.py``: code_index and delete_symbol refuse it before parsing, in a fresh
  interpreter whose peak RSS growth is the figure (it was 4.4 GB and 11.7 GB).
- A third-party tool stuck in a blocking FIFO read, sync or async, ignoring
  ``ctx.cancelled``: ``session.cancel()`` ends the call as ``cancelled`` after the grace
  period and the next batch runs; the interpreter still exits (the worker is a daemon).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import callgate_code
import callgate_files
import callgate_media
import callgate_search
import pytest
from callgate import ToolCall

from . import _stuck_tools

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs need POSIX")

ANSWER_WITHIN_S = 5.0


def _release(fifo: Path) -> None:
    """Open the FIFO for writing and close it: a blocked reader sees end of file."""
    try:
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
    except OSError:
        return  # no reader is waiting
    os.close(fd)


def _timed(s: Any, name: str, arguments: dict[str, Any], fifo: Path) -> tuple[Any, float]:
    """Run one call; fail (after unblocking it) if it does not answer in time."""
    box: list[Any] = []
    started = time.monotonic()
    worker = threading.Thread(target=lambda: box.append(s.call(name, arguments)), daemon=True)
    worker.start()
    worker.join(ANSWER_WITHIN_S)
    took = time.monotonic() - started
    if worker.is_alive():
        _release(fifo)
        worker.join(10)
        pytest.fail(f"{name} {arguments} blocked on a FIFO for {took:.1f} s")
    return box[0], took


READERS = [
    ("code_index", {"action": "outline", "path": "x.py"}),
    ("code_index", {"action": "outline"}),
    ("code_index", {"action": "search", "query": "f"}),
    ("delete_symbol", {"path": "x.py", "name": "f"}),
    ("read_file", {"path": "x.py"}),
    ("edit_file", {"path": "x.py", "old_string": "a", "new_string": "b"}),
    ("write_file", {"path": "x.py", "content": "a"}),
    ("grep", {"pattern": "a", "path": "x.py"}),
    ("grep", {"pattern": "a"}),
    ("glob", {"pattern": "**/*.py"}),
    ("ls", {}),
    ("view_image", {"path": "x.py"}),
]


def test_no_tool_blocks_on_a_fifo(callgate_session, figure) -> None:
    s = callgate_session(plugins=[callgate_files, callgate_search, callgate_code,
                                  callgate_media], files={"ok.py": "def f():\n    pass\n"})
    fifo = s.workspace / "x.py"
    os.mkfifo(fifo)
    slowest = 0.0
    for name, arguments in READERS:
        r, took = _timed(s, name, arguments, fifo)
        slowest = max(slowest, took)
        if "path" in arguments and name != "glob":
            assert r.is_error, (name, r.text)
    r, _ = _timed(s, "code_index", {"action": "outline", "path": "x.py"}, fifo)
    assert "is a FIFO, not a regular file" in r.text
    assert fifo.exists() and not fifo.is_file()  # nothing replaced the FIFO
    figure("fifo: tools answering instead of blocking", cases=len(READERS) + 1, failures=0,
           slowest_s=round(slowest, 2))


PROBE = textwrap.dedent("""
    import json, os, resource, sys
    from callgate import sync, ToolCall
    import callgate_code, callgate_files
    ws, size = sys.argv[1], int(sys.argv[2])
    path = os.path.join(ws, "big.py")
    with open(path, "w") as fh:
        block = "".join(f"def f{i}(a, b):\\n    return a + b\\n" for i in range(1000))
        while fh.tell() < size:
            fh.write(block)
    before_bytes = open(path, "rb").read()
    host = sync.Host.boot({}, plugins=[callgate_files, callgate_code], surface="full")
    s = host.open_session(ws)
    s.run(ToolCall("r", "read_file", {"path": "big.py", "limit": 1}))
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    out = {}
    for name, args in (("code_index", {"action": "outline", "path": "big.py"}),
                       ("delete_symbol", {"path": "big.py", "name": "f1"})):
        r = s.run(ToolCall("c", name, args))
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        out[name] = {"error": r.error.signature if r.error else None, "text": r.text,
                     "growth_mib": (peak - base) / 1024}
    out["unchanged"] = open(path, "rb").read() == before_bytes
    host.close()
    print(json.dumps(out))
""")


def test_a_20_mb_source_file_is_refused_before_it_is_parsed(tmp_path: Path, figure) -> None:
    size = 20_000_000
    proc = subprocess.run([sys.executable, "-c", PROBE, str(tmp_path), str(size)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout)
    for name in ("code_index", "delete_symbol"):
        assert out[name]["error"] == "CODE_TOO_LARGE", out[name]["text"]
        assert "[code] max_file_bytes" in out[name]["text"]
        assert out[name]["growth_mib"] < 32, out
    assert out["unchanged"]
    figure("20 MB .py: code_index and delete_symbol peak RSS growth",
           cases=2, failures=0, code_index_mib=round(out["code_index"]["growth_mib"], 1),
           delete_symbol_mib=round(out["delete_symbol"]["growth_mib"], 1))


# --- cancellation of a tool stuck in I/O ------------------------------------------------------


@pytest.mark.parametrize("tool", ["stuck_read", "stuck_wait"])
def test_cancel_frees_the_session_from_a_tool_stuck_in_io(callgate_session, tmp_path: Path,
                                                           figure, tool: str) -> None:
    fifo = tmp_path / "stuck.fifo"
    os.mkfifo(fifo)
    s = callgate_session(plugins=[_stuck_tools, callgate_files], files={"a.txt": "a\n"})
    s.session.cancel_grace_s = 0.5
    box: list[Any] = []
    worker = threading.Thread(target=lambda: box.append(s.call(tool, {"fifo": str(fifo)})),
                              daemon=True)
    worker.start()
    time.sleep(0.3)
    assert worker.is_alive()  # it is stuck
    cancelled_at = time.monotonic()
    s.sync.cancel()
    worker.join(ANSWER_WITHIN_S)
    freed_after = time.monotonic() - cancelled_at
    try:
        assert not worker.is_alive(), "the cancelled call still holds the session"
        [r] = box
        assert r.error.kind == "cancelled" and r.meta.get("abandoned") is True, r.text
        assert "stopped waiting" in r.text
        # the batch lock is free: the next call runs at once
        started = time.monotonic()
        assert s.call("read_file", {"path": "a.txt"}).text == "1→a"
        next_call_s = time.monotonic() - started
    finally:
        _release(fifo)
    figure(f"cancel: {tool} stuck in I/O", cases=1, failures=0,
           freed_after_s=round(freed_after, 2), next_call_s=round(next_call_s, 3))
    assert next_call_s < 2


EXITS = textwrap.dedent("""
    import os, sys, threading, time
    from callgate import sync, ToolCall
    from tests.reliability import _stuck_tools
    fifo = sys.argv[1]

    host = sync.Host.boot({}, plugins=[_stuck_tools], surface="full")
    s = host.open_session(os.path.dirname(fifo))
    s.session.cancel_grace_s = 0.2
    threading.Timer(0.3, s.session.cancel).start()
    r = s.run(ToolCall("c", "stuck_read", {"fifo": fifo}))
    print(r.error.kind)
    host.close()
""")


def test_a_stuck_tool_does_not_keep_the_process_from_exiting(tmp_path: Path) -> None:
    fifo = tmp_path / "stuck.fifo"
    os.mkfifo(fifo)
    try:
        proc = subprocess.run([sys.executable, "-c", EXITS, str(fifo)], capture_output=True,
                              text=True, timeout=30)
    finally:
        _release(fifo)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip() == "cancelled"


def test_a_cooperative_tool_still_reports_its_own_cancel(callgate_session) -> None:
    """bash notices the cancel and kills its process group: its result, not an abandon."""
    import callgate_shell

    s = callgate_session(plugins=[callgate_shell])
    threading.Timer(0.5, s.sync.cancel).start()
    r = s.call("bash", {"command": "sleep 30"})
    assert r.error.kind == "cancelled" and not r.meta.get("abandoned"), r.text
    assert "process group killed" in r.text
    assert ToolCall  # the public type the other tests use
