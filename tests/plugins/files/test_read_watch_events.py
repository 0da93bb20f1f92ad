"""A read below the root wakes the outside-change watcher no more than it must (issue 38):
watchfiles watches every directory of the tree with IN_OPEN among its events and offers no
way to narrow them, so each descriptor a read opens is an event its inotify thread wakes
for. The file's own open is one; the directory it lies in is held by ``O_PATH`` (only to
stat and open the name beneath the root, as race-free as before), which is none (it was
two: the directory's own watch and its parent's)."""

from __future__ import annotations

import ctypes
import os
import struct
import sys

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify")

IN_OPEN = 0x20
IN_ISDIR = 0x40000000
#: what watchfiles (notify) subscribes each directory to, as /proc/<pid>/fdinfo shows it
WATCHFILES_MASK = 0xFEE


class Inotify:
    def __init__(self, *dirs: os.PathLike[str]) -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        self.fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        assert self.fd >= 0
        self.names = {}
        for d in dirs:
            wd = libc.inotify_add_watch(self.fd, os.fsencode(d), WATCHFILES_MASK)
            assert wd >= 0
            self.names[wd] = os.path.basename(d)

    def events(self) -> list[tuple[str, int, str]]:
        out = []
        while True:
            try:
                buf = os.read(self.fd, 65536)
            except BlockingIOError:
                return out
            i = 0
            while i < len(buf):
                wd, mask, _cookie, size = struct.unpack_from("iIII", buf, i)
                name = buf[i + 16:i + 16 + size].rstrip(b"\0").decode()
                out.append((self.names[wd], mask, name))
                i += 16 + size

    def close(self) -> None:
        os.close(self.fd)


def test_a_read_below_the_root_makes_one_open_event_the_file_s(fs):
    s = fs({"src/pkg/mod.py": "".join(f"x{i} = {i}\n" for i in range(40))})
    ws = s.workspace
    s.expect_ok("read_file", {"path": "src/pkg/mod.py"})  # warm: roots held
    watch = Inotify(ws, ws / "src", ws / "src" / "pkg")
    try:
        text = s.expect_ok("read_file", {"path": "src/pkg/mod.py", "offset": 3, "limit": 2})
        assert text.splitlines()[0] == "4→x3 = 3"
        opens = [e for e in watch.events() if e[1] & IN_OPEN]
    finally:
        watch.close()
    # before: also ("src", IN_OPEN|IN_ISDIR, "pkg") and ("pkg", IN_OPEN|IN_ISDIR, "")
    assert opens == [("pkg", IN_OPEN, "mod.py")]


def test_a_stat_below_the_root_makes_no_event(fs):
    s = fs({"src/pkg/mod.py": "x = 1\n"})
    rp = s.session.workspace.resolve("src/pkg/mod.py")
    watch = Inotify(s.workspace / "src", s.workspace / "src" / "pkg")
    try:
        assert rp.stat().st_size == 6
        assert watch.events() == []  # the parent was opened readable before: two IN_OPENs
    finally:
        watch.close()
