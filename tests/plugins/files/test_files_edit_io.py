"""What a small edit costs in file system work (issue 38): the file it replaces is opened
twice, not three times (the gate's read is the edit's one read, and the double check reads
on the descriptor the publish leases), and a path without symlinks is resolved with one
walk of its parents, not two. The double check's verdict is pinned by
test_files_observation.py (a rewrite between read and publish is still caught)."""

from __future__ import annotations

import os
from typing import Any

import pytest


def _count(monkeypatch: pytest.MonkeyPatch, name: str) -> dict[str, int]:
    seen = {"open": 0, "realpath": 0}
    real_open, real_realpath = os.open, os.path.realpath

    def counting_open(path: Any, *args: Any, **kwargs: Any) -> int:
        if os.path.basename(os.fsdecode(path)) == name:
            seen["open"] += 1
        return real_open(path, *args, **kwargs)

    def counting_realpath(path: Any, *args: Any, **kwargs: Any) -> Any:
        seen["realpath"] += 1  # each walks every component of its path
        return real_realpath(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", counting_open)
    monkeypatch.setattr(os.path, "realpath", counting_realpath)
    return seen


def test_an_edit_opens_its_file_twice_and_walks_its_path_once(fs, monkeypatch) -> None:
    s = fs({"a.txt": "one\ntwo\n"})
    assert not s.call("read_file", path="a.txt").is_error
    # the first write compiles the host's protected paths (once per host)
    assert not s.call("edit_file", path="a.txt", old_string="one", new_string="1").is_error
    seen = _count(monkeypatch, "a.txt")
    r = s.call("edit_file", path="a.txt", old_string="two", new_string="2")
    monkeypatch.undo()
    assert not r.is_error, r.text
    assert s.read("a.txt") == b"1\n2\n"
    assert seen == {"open": 2, "realpath": 1}


def test_a_path_through_a_symlinked_directory_is_judged_on_its_entry(fs) -> None:
    """The second walk is skipped only when resolving changed nothing: through a
    symlinked directory the entry is still worked out (and the edit lands in the target)."""
    s = fs({"real/a.txt": "one\n"})
    os.symlink("real", s.workspace / "link")
    assert not s.call("read_file", path="link/a.txt").is_error
    r = s.call("edit_file", path="link/a.txt", old_string="one", new_string="1")
    assert not r.is_error, r.text
    assert s.read("real/a.txt") == b"1\n"
