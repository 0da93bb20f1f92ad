"""Atomic publishing, stale temps and writer leases (files.md §4), directly."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading

import pytest
from callgate.files import (
    WriterLease,
    create_file,
    held_paths,
    rename_noreplace,
    replace_file,
    sweep_stale_temps,
    temp_name,
)


def test_replace_keeps_mode_and_failure_leaves_nothing(tmp_path):
    f = tmp_path / "a"
    f.write_bytes(b"old")
    os.chmod(f, 0o751)
    replace_file(str(f), b"new")
    assert f.read_bytes() == b"new" and stat.S_IMODE(os.stat(f).st_mode) == 0o751

    def refuse():
        raise RuntimeError("no")

    with pytest.raises(RuntimeError):
        replace_file(str(f), b"other", before_publish=refuse)
    assert f.read_bytes() == b"new" and os.listdir(tmp_path) == ["a"]


def test_create_only_never_overwrites_and_cleans_its_parents(tmp_path):
    target = tmp_path / "x" / "y" / "f.txt"
    assert create_file(str(target), b"1") == [str(tmp_path / "x"), str(tmp_path / "x" / "y")]
    with pytest.raises(FileExistsError):
        create_file(str(target), b"2")
    assert target.read_bytes() == b"1"
    other = tmp_path / "p" / "q" / "g.txt"

    def refuse():
        raise RuntimeError("no")

    with pytest.raises(RuntimeError):
        create_file(str(other), b"3", before_publish=refuse)
    assert not (tmp_path / "p").exists()


def test_rename_noreplace(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_text("a")
    b.write_text("b")
    with pytest.raises(FileExistsError):
        rename_noreplace(str(a), str(b))
    assert a.read_text() == "a" and b.read_text() == "b"
    rename_noreplace(str(a), str(tmp_path / "c"))
    assert not a.exists() and (tmp_path / "c").read_text() == "a"


def test_sweep_removes_dead_writers_temps_only(tmp_path):
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    dead = tmp_path / f".a.callgate-{proc.pid}-ab.tmp"
    live = tmp_path / os.path.basename(temp_name(str(tmp_path / "a")))
    other = tmp_path / ".a.callgate-notapid-x.tmp"
    for p in (dead, live, other):
        p.write_text("t")
    assert sweep_stale_temps(str(tmp_path)) == 1
    assert sorted(os.listdir(tmp_path)) == sorted([live.name, other.name])


def test_leases_serialize_one_path_and_sort_several(tmp_path):
    order = []
    first = WriterLease(["/b", "/a"])
    first.acquire()
    assert first.paths == ["/a", "/b"] and held_paths() == ["/a", "/b"]

    def second():
        with WriterLease(["/a"]):
            order.append("second")

    t = threading.Thread(target=second)
    t.start()
    t.join(0.2)
    assert order == [] and not WriterLease(["/b"]).try_acquire()
    first.release()
    t.join(5)
    assert order == ["second"] and held_paths() == []
