"""The stale guard: a change made by another program is refused as stale, never overwritten.

Attacks (issue 30, item 7): ``edit_file`` running again and again while another program
appends lines to the same file lost some of them (8 of 1,840): a line appended between the
guard's last check and the replace went to the old file. An mmap writer changes a file's
bytes without changing its size or (while its page stays dirty) its times: a version read
more than two seconds earlier was trusted by ``stat`` alone and overwritten without notice.
Through the front door: ``read_file`` / ``edit_file`` / ``write_file`` in a session with the
files plugin, against a real appender (a thread, and a separate process) and a real
shared mapping.
"""

from __future__ import annotations

import mmap
import os
import random
import subprocess
import sys
import threading
import time
from pathlib import Path

import callgate_files
import pytest
from callgate.testing import CallgateSession

pytestmark = pytest.mark.skipif(os.name != "posix", reason="appenders and mappings")

HEADER = "counter: 0\n"


def _session(callgate_session, files: dict[str, str]) -> CallgateSession:
    return callgate_session(plugins=[callgate_files], files=files)


def _edit_loop(s: CallgateSession, seconds: float) -> tuple[int, int]:
    """Read and edit the counter line until ``seconds`` pass: (edits done, stale refusals).
    A read that raced an append records no observation; the loop then reads again."""
    done = stale = 0
    start = time.monotonic()
    # a slow machine gets longer to land a few edits (the race needs some to happen)
    while time.monotonic() - start < seconds or (done < 5 and time.monotonic() - start < 30):
        text = s.call("read_file", {"path": "log.txt", "limit": 1}).text
        current = next((line for line in text.splitlines() if "counter:" in line), None)
        if current is None:
            continue
        value = int(current.rsplit(":", 1)[1])
        r = s.call("edit_file", {"path": "log.txt", "old_string": f"counter: {value}\n",
                                 "new_string": f"counter: {value + 1}\n"})
        if not r.is_error:
            done += 1
        elif r.error.signature == "FS_STALE_VERSION":
            stale += 1
        elif r.error.signature != "FS_NOT_OBSERVED":  # the read raced an append: read again
            raise AssertionError(r.text)
    return done, stale


def _lost(path: Path, appended: int) -> int:
    """Appended lines missing from the file (and no temp or displaced file left beside it)."""
    assert [p.name for p in path.parent.iterdir()] == [path.name]
    lines = set(path.read_text().splitlines())
    return sum(f"appended {i}" not in lines for i in range(appended))


def test_attack_a_thread_appending_lines_loses_none(callgate_session):
    s = _session(callgate_session, {"log.txt": HEADER})
    path = s.path("log.txt")
    stop = threading.Event()
    count = [0]
    gaps = random.Random(1)

    def append() -> None:
        while not stop.is_set():
            with open(path, "a") as fh:
                fh.write(f"appended {count[0]}\n")
            count[0] += 1
            time.sleep(gaps.uniform(0.0002, 0.006))

    writer = threading.Thread(target=append, daemon=True)
    writer.start()
    try:
        done, stale = _edit_loop(s, 4.0)
    finally:
        stop.set()
        writer.join()
    lost = _lost(path, count[0])
    print(f"thread appender: {lost} of {count[0]} lines lost; {done} edits, {stale} stale")
    assert done > 0 and count[0] > 10
    assert lost == 0, f"{lost} of {count[0]} appended lines lost ({done} edits, {stale} stale)"


APPENDER = """
import os, random, sys, time
path, stop = sys.argv[1], sys.argv[2]
gaps = random.Random(2)
i = 0
while not os.path.exists(stop):
    with open(path, "a") as fh:
        fh.write(f"appended {i}\\n")
    i += 1
    time.sleep(gaps.uniform(0.0002, 0.006))
print(i)
"""


def test_attack_a_process_appending_lines_loses_none(callgate_session, tmp_path):
    s = _session(callgate_session, {"log.txt": HEADER})
    path = s.path("log.txt")
    stop = tmp_path / "stop"
    proc = subprocess.Popen([sys.executable, "-c", APPENDER, str(path), str(stop)],
                            stdout=subprocess.PIPE, text=True)
    try:
        done, stale = _edit_loop(s, 4.0)
    finally:
        stop.touch()
        out, _ = proc.communicate(timeout=60)
    appended = int(out)
    lost = _lost(path, appended)
    print(f"process appender: {lost} of {appended} lines lost; {done} edits, {stale} stale")
    assert done > 0 and appended > 10
    assert lost == 0, f"{lost} of {appended} appended lines lost ({done} edits, {stale} stale)"


def _mapped(path: Path) -> tuple[mmap.mmap, int]:
    """A shared writable mapping of ``path`` whose page is already dirty, and the file's
    times set two minutes back: later writes through it change neither size nor times."""
    fd = os.open(path, os.O_RDWR)
    mapping = mmap.mmap(fd, 0)
    mapping[0:1] = mapping[0:1]  # the write fault: the page is writable and dirty from now on
    old = time.time_ns() - 120 * 10**9
    os.utime(path, ns=(old, old))
    return mapping, fd


@pytest.mark.parametrize("still_mapped", [True, False], ids=["mapped", "unmapped"])
@pytest.mark.parametrize("tool", ["write_file", "edit_file"])
def test_attack_an_mmap_writer_is_never_overwritten(callgate_session, tool, still_mapped):
    """The other program writes through its mapping after the session's read; size and times
    stay. Still mapped (it may write again) or done and unmapped, the change is refused."""
    s = _session(callgate_session, {"data.txt": "alpha: 1\nbeta: 2\ngamma: 3\n"})
    path = s.path("data.txt")
    mapping, fd = _mapped(path)
    try:
        s.expect_ok("read_file", {"path": "data.txt"})
        before = os.stat(path)
        mapping[7:8] = b"9"  # alpha: 9, written by the other program
        if not still_mapped:
            mapping.close()
            os.close(fd)
        after = os.stat(path)
        assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
        if tool == "write_file":
            args = {"path": "data.txt", "content": "alpha: 1\nbeta: 2\ngamma: 4\n"}
        else:
            args = {"path": "data.txt", "old_string": "gamma: 3", "new_string": "gamma: 4"}
        r = s.call(tool, args)
        assert r.is_error and r.error.signature == "FS_STALE_VERSION", r.text
        assert path.read_bytes() == b"alpha: 9\nbeta: 2\ngamma: 3\n"
    finally:
        if still_mapped:
            mapping.close()
            os.close(fd)
    # once the other program is done, a fresh read lets the change through
    s.expect_ok("read_file", {"path": "data.txt"})
    s.expect_ok("edit_file", {"path": "data.txt", "old_string": "gamma: 3",
                              "new_string": "gamma: 4"})
    assert path.read_bytes() == b"alpha: 9\nbeta: 2\ngamma: 4\n"


def test_attack_a_file_held_open_for_writing_is_not_replaced(callgate_session):
    """A writer that keeps the file open (a logger, a mapping) would write into the replaced
    file from then on: the edit is refused while the file is open for writing elsewhere."""
    s = _session(callgate_session, {"log.txt": HEADER})
    path = s.path("log.txt")
    s.expect_ok("read_file", {"path": "log.txt"})
    proc = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\n"
         "fh = open(sys.argv[1], 'a')\nprint('open', flush=True)\nsys.stdin.read()\n"
         "fh.write('written after the edit\\n')\nfh.close()\n", str(path)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline() == "open\n"
        r = s.call("edit_file", {"path": "log.txt", "old_string": "counter: 0",
                                 "new_string": "counter: 1"})
    finally:
        proc.communicate("", timeout=60)
    if not r.is_error:
        pytest.fail("the edit replaced a file another program still had open: its next "
                    f"line went to the old file ({path.read_text()!r})")
    assert r.error.signature == "FS_STALE_VERSION" and "open" in r.text, r.text
    assert path.read_text() == HEADER + "written after the edit\n"
