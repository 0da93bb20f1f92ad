"""move_file (files.md §6.6; statements 48-49)."""

from __future__ import annotations

import errno
import os

import callgate._fs.atomic as atomic

from .conftest import err


def test_move_makes_parents_and_moves_the_observation(fs):  # 48
    s = fs({"a.txt": "a\n"})
    s.call("read_file", path="a.txt")
    r = s.call("move_file", source_path="a.txt", destination_path="new/dir/b.txt")
    assert r.text == "moved a.txt to new/dir/b.txt"
    assert not s.path("a.txt").exists() and s.read("new/dir/b.txt") == b"a\n"
    assert not s.call("edit_file", path="new/dir/b.txt", old_string="a", new_string="b").is_error
    assert s.call("write_file", path="a.txt", content="fresh").text == "created a.txt (5 bytes)"


def test_move_refusals(fs, unchanged, tmp_path):  # 49
    outside = tmp_path / "out"
    outside.mkdir()
    s = fs({"a.txt": "a\n", "b.txt": "b\n", "c.txt": "c\n"})
    s.call("read_file", path="a.txt")
    before = unchanged(s.workspace, "a.txt", "b.txt")
    r = s.call("move_file", source_path="a.txt", destination_path="b.txt")
    assert r.text == "FS_ALREADY_EXISTS: b.txt already exists; move_file never overwrites; " \
        "pick another destination" and r.error.kind == "already_exists"
    r = s.call("move_file", source_path="a.txt", destination_path=str(outside / "d" / "x.txt"))
    assert err(r) == "FS_OUTSIDE_WORKSPACE"
    assert err(s.call("move_file", source_path="c.txt", destination_path="d.txt")) == \
        "FS_NOT_OBSERVED"
    before.check()
    assert list(outside.iterdir()) == []
    r = s.call("move_file", source_path="a.txt", destination_path="./a.txt")
    assert r.text == "a.txt is already at a.txt; nothing changed"


def test_symlinks_directories_and_dangling_destinations(fs, unchanged):
    s = fs({"a.txt": "a\n", "d/x": "x"})
    os.symlink("a.txt", s.path("l.txt"))
    os.symlink("nowhere.txt", s.path("dangling"))
    s.call("read_file", path="a.txt")
    before = unchanged(s.workspace, "a.txt", "l.txt")
    r = s.call("move_file", source_path="l.txt", destination_path="m.txt")
    assert r.text.startswith("FS_NOT_REGULAR: l.txt is a symbolic link; move_file moves regular "
                             "files; use the shell")
    r = s.call("move_file", source_path="d", destination_path="e")
    assert r.text == "FS_IS_DIRECTORY: d is a directory; move_file moves regular files; use the " \
        "shell"
    assert err(s.call("move_file", source_path="a.txt", destination_path="dangling")) == \
        "FS_ALREADY_EXISTS"
    assert err(s.call("move_file", source_path="a.txt", destination_path="d")) == \
        "FS_IS_DIRECTORY"
    assert err(s.call("move_file", source_path="gone.txt", destination_path="x")) == \
        "FS_NOT_FOUND"
    before.check()


def test_moving_onto_a_hard_link_of_itself(fs):
    s = fs({"a.txt": "a\n"})
    os.link(s.path("a.txt"), s.path("b.txt"))
    s.call("read_file", path="a.txt")
    assert s.call("move_file", source_path="a.txt", destination_path="b.txt").text == \
        "moved a.txt to b.txt"
    assert sorted(os.listdir(s.workspace)) == ["b.txt"]


def test_cross_device_move_copies_then_removes(fs, monkeypatch):
    s = fs({"a.txt": "payload\n"})
    os.chmod(s.path("a.txt"), 0o640)
    mtime = os.stat(s.path("a.txt")).st_mtime_ns
    s.call("read_file", path="a.txt")

    def exdev(src, dst):
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    monkeypatch.setattr(atomic, "rename_noreplace", exdev)
    import callgate_files.tools.move_file as mf
    monkeypatch.setattr(mf, "rename_noreplace", exdev)
    r = s.call("move_file", source_path="a.txt", destination_path="x/b.txt")
    assert r.text == "moved a.txt to x/b.txt"
    st = os.stat(s.path("x/b.txt"))
    assert s.read("x/b.txt") == b"payload\n" and st.st_mode & 0o777 == 0o640
    assert st.st_mtime_ns == mtime and not s.path("a.txt").exists()
    assert sorted(os.listdir(s.path("x"))) == ["b.txt"]
