"""Size limits, stale temps and "a refusal changes nothing" (statements 56, 57, 59, 60)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from callgate_files import FILE_WATCH

from .conftest import err

MIB = 1 << 20


@pytest.fixture(scope="module")
def big_text(tmp_path_factory):
    path = tmp_path_factory.mktemp("big") / "big.txt"
    with open(path, "wb") as fh:
        line = b"z" * 63 + b"\n"
        fh.write(b"head" + line[4:] + line * (65 * MIB // 64 - 1))
    return path


def _with_big(fs, big_text, **kw):
    s = fs(**kw)
    s.path("big.txt").write_bytes(big_text.read_bytes())
    return s


def test_large_files_read_but_do_not_edit_until_the_cap_is_raised(fs, big_text, unchanged):  # 56
    s = _with_big(fs, big_text)
    r = s.call("read_file", path="big.txt", limit=1)
    assert r.text.startswith("1→headzzz")
    before = unchanged(s.workspace, "big.txt")
    r = s.call("edit_file", path="big.txt", old_string="z" * 63 + "\n", new_string="y")
    assert r.text == "FS_TOO_LARGE: big.txt is 65 MiB, above the 64 MiB edit limit; use the " \
        "shell or raise files.max_edit_bytes"
    r = s.call("write_file", path="new.txt", content="x" * (64 * MIB + 1))
    assert err(r) == "FS_TOO_LARGE"
    before.check()
    raised = fs(config={"files": {"max_edit_bytes": 100 * MIB}}, workspace=s.workspace)
    raised.call("read_file", path="big.txt", limit=1)
    r = raised.call("edit_file", path="big.txt", old_string="head", new_string="HEAD")
    assert r.text.startswith("edited big.txt"), r.text[:300]
    assert s.path("big.txt").read_bytes()[:6] == b"HEADzz"


def test_unread_huge_file_is_not_observed_before_the_size_check(fs, big_text):  # 60
    s = _with_big(fs, big_text)
    assert err(s.call("edit_file", path="big.txt", old_string="z", new_string="y")) == \
        "FS_NOT_OBSERVED"


def _dead_pid():
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_stale_temps_are_swept(fs, tmp_path):  # 59
    ws = tmp_path / "ws"
    (ws / "sub").mkdir(parents=True)
    (ws / "node_modules").mkdir()
    dead, live = _dead_pid(), os.getpid()
    names = {"dead": f".a.txt.callgate-{dead}-x.tmp", "live": f".a.txt.callgate-{live}-x.tmp"}
    (ws / "sub" / names["dead"]).write_text("junk")
    (ws / "sub" / names["live"]).write_text("mine")
    (ws / "node_modules" / names["dead"]).write_text("pruned")
    s = fs(workspace=ws)
    assert s.session.extension(FILE_WATCH).sweep_done.wait(10)
    assert sorted(os.listdir(ws / "sub")) == [names["live"]]
    assert os.listdir(ws / "node_modules") == [names["dead"]]
    (ws / "sub" / "a.txt").write_text("a\n")
    s.call("read_file", path="sub/a.txt")
    (ws / "sub" / names["dead"]).write_text("junk again")
    assert not s.call("edit_file", path="sub/a.txt", old_string="a", new_string="b").is_error
    assert sorted(os.listdir(ws / "sub")) == sorted(["a.txt", names["live"]])


REFUSALS = [
    # (files, setup, reads, call)
    ({"a.txt": "a\n"}, None, [], ("edit_file", {"path": "a.txt", "old_string": "a",
                                                "new_string": "b"})),
    ({"a.txt": "a\n"}, "append", ["a.txt"], ("edit_file", {"path": "a.txt", "old_string": "a",
                                                           "new_string": "b"})),
    ({"a.txt": "a\n"}, None, ["a.txt"], ("edit_file", {"path": "a.txt", "old_string": "q",
                                                       "new_string": "b"})),
    ({"a.txt": "a\na\n"}, None, ["a.txt"], ("edit_file", {"path": "a.txt", "old_string": "a",
                                                          "new_string": "b"})),
    ({"a.txt": "a\n", "b.txt": "b"}, None, ["a.txt"],
     ("move_file", {"source_path": "a.txt", "destination_path": "b.txt"})),
    ({"a.txt": "a\n"}, None, ["a.txt"], ("write_file", {"path": "../x.txt", "content": "x"})),
    ({"a.bin": b"\x00\x01"}, None, ["a.bin"], ("write_file", {"path": "a.bin", "content": "x"})),
    ({"d/a.txt": "a"}, None, [], ("edit_file", {"path": "d", "old_string": "a",
                                                "new_string": "b"})),
    ({"a.txt": "a\nb\n"}, None, ["a.txt"], ("delete_range", {"path": "a.txt",
                                                             "start_anchor": "b",
                                                             "end_anchor": "a"})),
    ({"a.txt": "a\n"}, None, [], ("edit_file", {"path": "missing.txt", "old_string": "a",
                                                "new_string": "b"})),
]


@pytest.mark.parametrize("files,setup,reads,call", REFUSALS)
def test_every_refusal_changes_nothing(fs, unchanged, files, setup, reads, call):  # 57
    s = fs(files)
    for path in reads:
        s.call("read_file", path=path)
    if setup == "append":
        with open(s.path("a.txt"), "a") as fh:
            fh.write("more\n")
    before = unchanged(s.workspace, *files)
    r = s.call(*call)
    assert r.is_error, r.text
    assert r.text.split(":", 1)[0].startswith("FS_")
    before.check()
    assert not (s.workspace.parent / "x.txt").exists()
