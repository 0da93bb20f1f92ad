"""ls through the full pipeline (search.md §6, statements 21-23)."""

from __future__ import annotations

import os

from .helpers import lines


def test_flat_listing_formats(plain):  # §6.21
    s = plain({"b.txt": "12345", ".h": "", "a/x": ""})
    r = s.call("ls", {})
    assert not r.is_error
    assert r.text == ".h\t0\na/\nb.txt\t5\n"
    (s.workspace / "empty").mkdir()
    assert s.call("ls", {"path": "empty"}).text == "(empty directory)"
    r = s.call("ls", {"path": "missing"})
    assert r.error.kind == "not_found" and r.text == "ls: path not found: missing"
    r = s.call("ls", {"path": "b.txt"})
    assert r.is_error and r.text == "ls: not a directory: b.txt (use read_file)"


def test_flat_listing_includes_hidden_and_pruned_names(plain):  # §4 flat
    s = plain({".git/HEAD": "", "node_modules/m.js": "", "z.txt": ""})
    assert s.call("ls", {}).text == ".git/\nnode_modules/\nz.txt\t0\n"


def test_recursive_listing_prints_pruned_dirs_without_entering(plain):  # §6.22
    s = plain({"src/a.py": "abc", "src/pkg/b.py": "abcd", "src/node_modules/x.js": "x"})
    r = s.call("ls", {"path": "src", "recursive": True})
    assert lines(r)[:-1] == ["src/a.py\t3", "src/node_modules/", "src/pkg/", "src/pkg/b.py\t4"]
    assert "x.js" not in r.text


def test_recursive_cap_and_symlinks(plain):  # §6.23
    s = plain({f"d{i // 1000}/f{i:04d}": "" for i in range(6000)},
              config={"results": {"max_chars": 200_000}})  # see the whole listing
    out = lines(s.call("ls", {"recursive": True}))
    assert out[-1] == ""
    assert len(out) == 5002
    assert out[5000] == "... (truncated at 5000 entries)"
    assert out[0] == "d0/" and out[1] == "d0/f0000\t0"
    link = plain({"t": "x"})
    os.symlink("t", link.workspace / "l")
    assert link.call("ls", {"recursive": True}).text == "l -> t\nt\t1\n"
    assert link.call("ls", {}).text == "l -> t\nt\t1\n"


def test_recursive_depth_limit(plain):  # §4 recursive: deeper than 50 levels not entered
    deep = "/".join(f"d{i}" for i in range(1, 53))
    s = plain({f"{deep}/f.txt": ""})
    out = lines(s.call("ls", {"recursive": True}))[:-1]
    assert len(out) == 51
    assert out[-1].endswith("/d51/")


def test_listing_is_confined(plain):  # §1.1
    s = plain({"a": ""})
    os.symlink("/etc", s.workspace / "out")
    assert s.call("ls", {"path": "out"}).error.kind == "outside_workspace"
    assert s.call("ls", {"path": "/etc"}).error.kind == "outside_workspace"
