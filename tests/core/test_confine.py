"""Race-free resolution beneath held roots (`callgate._fs.confine`, issue 16): what each mechanism
follows and refuses, the ``*at`` operations never following a final link, extra roots,
closing, and the by-name fallback that Windows gets (run here by switching descriptors off)."""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from callgate._fs import confine
from callgate.paths import HeldDir, PathChanged, Workspace, confinement_mechanism, root_path

posix_only = pytest.mark.skipif(not confine.HELD, reason="no directory descriptors here")


@pytest.fixture(params=["openat2", "walk"])
def mechanism(request: pytest.FixtureRequest) -> Iterator[str]:
    if request.param == "openat2":
        confine.use_openat2(True)
        if confinement_mechanism() != "openat2":
            pytest.skip("this kernel has no openat2")
    else:
        confine.use_openat2(False)
    yield request.param
    confine.use_openat2(True)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """``root/`` with ``sub/f.txt``, an inside link ``in -> sub`` (relative: openat2 refuses
    every absolute link beneath a root), links out (absolute and
    relative) and a final-component link ``sub/l.txt -> f.txt``; ``out/secret`` outside."""
    root, out = tmp_path / "root", tmp_path / "out"
    (root / "sub").mkdir(parents=True)
    out.mkdir()
    (root / "sub" / "f.txt").write_text("inside\n")
    (out / "secret").write_text("outside\n")
    os.symlink("sub", root / "in")
    os.symlink(out, root / "abs_out")
    os.symlink("../out", root / "rel_out")
    os.symlink("f.txt", root / "sub" / "l.txt")
    return root


def read(fd: int) -> bytes:
    try:
        return os.read(fd, 100)
    finally:
        os.close(fd)


@posix_only
def test_a_plain_path_opens_beneath_the_root(tree: Path, mechanism: str) -> None:
    root = confine.open_dir(str(tree))
    with root:
        assert read(confine.open_beneath(root.fd, "sub/f.txt", os.O_RDONLY)) == b"inside\n"


@posix_only
@pytest.mark.parametrize("rel", ["abs_out/secret", "rel_out/secret"])
def test_a_link_leading_outside_fails_under_every_mechanism(tree: Path, mechanism: str,
                                                            rel: str) -> None:
    with confine.open_dir(str(tree)) as root, pytest.raises(PathChanged):
        confine.open_beneath(root.fd, rel, os.O_RDONLY)


@posix_only
def test_a_link_staying_inside_is_followed_by_openat2_only(tree: Path, mechanism: str) -> None:
    """openat2 follows a directory link that stays below the root; the walk follows none
    (a canonical path has none, so only a swap puts one there)."""
    with confine.open_dir(str(tree)) as root:
        if mechanism == "openat2":
            assert read(confine.open_beneath(root.fd, "in/f.txt", os.O_RDONLY)) == b"inside\n"
        else:
            with pytest.raises(PathChanged):
                confine.open_beneath(root.fd, "in/f.txt", os.O_RDONLY)


@posix_only
def test_the_final_component_is_never_followed(tree: Path, mechanism: str) -> None:
    with confine.open_dir(str(tree)) as root, pytest.raises(PathChanged):
        confine.open_beneath(root.fd, "sub/l.txt", os.O_RDONLY)


def test_dot_dot_and_absolute_relative_paths_are_refused(tree: Path) -> None:
    with confine.open_dir(str(tree)) as root:
        for rel in ("../out/secret", "sub/../../out/secret", "sub//f.txt", "./sub/f.txt"):
            with pytest.raises(ValueError):
                confine.open_beneath(root.fd if root.fd is not None else -1, rel, os.O_RDONLY)


@posix_only
def test_held_dir_operations_act_on_a_link_itself(tree: Path) -> None:
    with confine.open_dir(str(tree)) as root:
        assert isinstance(root, HeldDir)
        assert root.stat("abs_out").st_mode & 0o170000 == 0o120000
        with pytest.raises(PathChanged):
            root.sub("abs_out")
        with pytest.raises(OSError) as err:
            root.open("abs_out", os.O_RDONLY)
        assert err.value.errno in (errno.ELOOP, errno.ENOTDIR)
        root.link("in", root, "in2")  # a hard link to the link, not to its target
        assert os.readlink(tree / "in2") == "sub"
        root.replace("in2", root, "in3")
        root.unlink("in3")
    assert (tree.parent / "out" / "secret").read_text() == "outside\n"


def test_resolve_anchors_each_path_in_its_innermost_root(tmp_path: Path) -> None:
    ws, extra, ro = tmp_path / "ws", tmp_path / "extra", tmp_path / "ro"
    for d in (ws / "sub", extra, ro):
        d.mkdir(parents=True)
    (extra / "e.txt").write_text("extra\n")
    (ro / "r.txt").write_text("read only\n")
    os.symlink(extra / "e.txt", ws / "to_extra")
    w = Workspace(ws, extra_roots=[str(extra)], extra_read_roots=[str(ro)])
    rp = w.resolve("to_extra", write=True)
    assert rp.anchor is w.anchor(str(extra)) and rp.rel == "e.txt"
    assert read(rp.open()) == b"extra\n"
    rr = w.resolve(ro / "r.txt")
    assert rr.anchor is w.anchor(str(ro)) and read(rr.open()) == b"read only\n"
    assert w.resolve("sub").child("x/y.txt").rel == os.path.join("sub", "x", "y.txt")
    w.close()


@posix_only
def test_a_closed_workspace_fails_instead_of_reopening(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    w = Workspace(tmp_path)
    rp = w.resolve("a.txt")
    held = rp.anchor.held()  # a call in flight: the descriptor outlives close() until it ends
    w.close()
    assert os.fstat(held.fd).st_ino == os.stat(tmp_path).st_ino
    held.close()
    with pytest.raises(OSError) as err:
        rp.open()
    assert err.value.errno == errno.EBADF


def test_root_path_confines_a_walk_below_a_plain_directory(tree: Path) -> None:
    base = root_path(tree)
    assert read(base.child("sub/f.txt").open()) == b"inside\n"
    if confine.HELD:
        with pytest.raises(PathChanged):
            base.child("abs_out/secret").open()


@pytest.mark.skipif(sys.platform == "win32", reason="checks the fallback from POSIX")
def test_the_by_name_fallback_still_works_without_descriptors(
        callgate_session, monkeypatch: pytest.MonkeyPatch) -> None:
    """What Windows runs (``HELD`` false: checked, then used by name): every file tool works;
    it is not race-free, which docs/reliability.md says."""
    monkeypatch.setattr(confine, "HELD", False)
    assert confinement_mechanism() == "by-name"
    s = callgate_session(entrypoints=["files", "search"], files={"d/a.txt": "one\ntwo\n"},
                         config={"files": {"watch": False}})
    assert s.call("read_file", path="d/a.txt").text.startswith("1→one")
    assert not s.call("edit_file", path="d/a.txt", old_string="two", new_string="2").is_error
    assert not s.call("write_file", path="d/new/b.txt", content="b\n").is_error
    assert not s.call("move_file", source_path="d/new/b.txt",
                      destination_path="c.txt").is_error
    assert s.call("grep", pattern="2", path="d").text == "d/a.txt:2:2"
    assert s.call("ls", path=".", recursive=True).text.splitlines()[:3] == \
        ["c.txt\t2", "d/", "d/a.txt\t6"]
    assert s.read("d/a.txt") == b"one\n2\n" and s.read("c.txt") == b"b\n"


def test_symlinks_that_stay_inside_still_work_through_every_tool(callgate_session,
                                                                 tmp_path: Path) -> None:
    """Resolution stays canonical first: a link inside the workspace (to a directory, to a
    file, absolute or relative) or into an extra root is followed as before; only a link
    that appears after the check is refused."""
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "e.txt").write_text("extra one\n")
    s = callgate_session(entrypoints=["files", "search"], files={"sub/f.txt": "one\ntwo\n"},
                         config={"files": {"watch": False},
                                 "workspace": {"extra_roots": [str(extra)]}})
    os.symlink("sub", s.path("rel_dir"))
    os.symlink(s.path("sub"), s.path("abs_dir"))
    os.symlink("sub/f.txt", s.path("file_link"))
    os.symlink(extra, s.path("to_extra"))
    assert s.call("read_file", path="rel_dir/f.txt").text.startswith("1→one")
    assert not s.call("edit_file", path="abs_dir/f.txt", old_string="two",
                      new_string="2").is_error
    assert not s.call("write_file", path="rel_dir/new.txt", content="n\n").is_error
    assert s.call("read_file", path="file_link").text.startswith("1→one")
    assert not s.call("edit_file", path="file_link", old_string="one",
                      new_string="1").is_error
    assert os.path.islink(s.path("file_link"))  # the link stays a link; its target changed
    assert s.read("sub/f.txt") == b"1\n2\n" and s.read("sub/new.txt") == b"n\n"
    assert s.call("read_file", path="to_extra/e.txt").text.startswith("1→extra one")
    assert not s.call("write_file", path="to_extra/made.txt", content="m\n").is_error
    assert (extra / "made.txt").read_text() == "m\n"
    assert s.call("grep", pattern="1", path="rel_dir").text == "sub/f.txt:1:1"  # canonical


def test_threads_listing_one_held_root_at_once_each_see_every_entry(tmp_path: Path) -> None:
    """Every call of a session lists its root through the root's one descriptor (and the
    stale-temp sweep does too, in a thread of its own): listings at the same moment shared
    the descriptor's directory offset, so one saw nothing (the first glob of a session
    answered "(no matches)" in long test runs)."""
    import threading

    names = {f"f{i:03}.txt" for i in range(300)}
    for name in names:
        (tmp_path / name).write_text("x")
    root = root_path(tmp_path)
    short: list[int] = []
    start = threading.Barrier(6)

    def lister() -> None:
        start.wait()
        for _ in range(60):
            with root.opendir() as held:
                seen = {e.name for e in held.scandir()}
                seen_names = set(held.names())
            if seen != names or seen_names != names:
                short.append(len(seen & names))

    threads = [threading.Thread(target=lister) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert short == [], f"{len(short)} short listings, e.g. {short[:5]} of {len(names)}"
