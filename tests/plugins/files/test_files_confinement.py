"""Workspace confinement through the tools (files.md §2; statements 19-21)."""

from __future__ import annotations

import os

from .conftest import err


def test_symlink_inside_edits_its_target_and_stays_a_link(fs):  # 19
    s = fs({"real.txt": "v = 1\n"})
    os.symlink("real.txt", s.path("l.txt"))
    assert s.call("read_file", path="l.txt").text == "1→v = 1"
    r = s.call("edit_file", path="l.txt", old_string="v = 1", new_string="v = 2")
    assert not r.is_error, r.text
    assert os.path.islink(s.path("l.txt"))
    assert s.read("real.txt") == b"v = 2\n"


def test_prefix_sibling_and_dotdot_escapes_are_refused(fs, tmp_path, unchanged):  # 20
    root = tmp_path / "w"
    (root / "proj").mkdir(parents=True)
    (root / "proj" / "sub").mkdir()
    (root / "proj-2").mkdir()
    s = fs(workspace=root / "proj")
    before = unchanged(root)
    for path in ("../proj-2/x.txt", str(root / "proj-2" / "x.txt"), "sub/../../x.txt"):
        r = s.call("write_file", path=path, content="x")
        assert err(r) == "FS_OUTSIDE_WORKSPACE" and r.error.kind == "outside_workspace"
        assert "resolves outside the workspace" in r.text
    before.check()
    assert s.call("write_file", path="sub/../x.txt", content="x").text == "created x.txt (1 bytes)"
    assert (root / "proj" / "x.txt").read_bytes() == b"x"


def test_symlinks_leading_out_are_refused_for_every_tool(fs, tmp_path, unchanged):  # 21
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret").write_text("s")
    (outside / "f.txt").write_text("f")
    s = fs({"a.txt": "a\n"})
    os.symlink(outside, s.path("link"))
    os.symlink(outside / "f.txt", s.path("flink.txt"))
    before = unchanged(tmp_path)
    s.call("read_file", path="a.txt")
    cases = [("write_file", {"path": "link/new.txt", "content": "x"}),
             ("read_file", {"path": "link/secret"}),
             ("move_file", {"source_path": "a.txt", "destination_path": "link/x"}),
             ("read_file", {"path": "flink.txt"}),
             ("write_file", {"path": "flink.txt", "content": "x"}),
             ("edit_file", {"path": "flink.txt", "old_string": "f", "new_string": "g"})]
    for name, args in cases:
        assert err(s.call(name, args)) == "FS_OUTSIDE_WORKSPACE", (name, args)
    before.check()


def test_outside_message_is_the_same_whether_or_not_the_path_exists(fs, tmp_path):
    other = tmp_path / "elsewhere"
    other.mkdir()
    (other / "there.txt").write_text("x")
    s = fs()
    a = s.call("read_file", path=str(other / "there.txt")).text
    b = s.call("read_file", path=str(other / "missing.txt")).text
    assert a.replace("there", "X") == b.replace("missing", "X")


def test_extra_roots_extend_reads_and_writes(fs, tmp_path):
    extra = tmp_path / "extra"
    extra.mkdir()
    ro = tmp_path / "ro"
    ro.mkdir()
    (ro / "r.txt").write_text("r")
    s = fs(config={"workspace": {"extra_roots": [str(extra)], "extra_read_roots": [str(ro)]}})
    assert s.call("write_file", path=str(extra / "n.txt"), content="n").text.startswith("created")
    assert s.call("read_file", path=str(ro / "r.txt")).text == "1→r"
    assert err(s.call("write_file", path=str(ro / "w.txt"), content="w")) == \
        "FS_OUTSIDE_WORKSPACE"
