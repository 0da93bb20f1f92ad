"""The plugin template (examples/word-count-plugin) uses the race-free file API it tells
authors to use (issue 31): its size check looks at the file beneath the workspace root the
session holds open, never by name."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import callgate_word_count
import pytest
from callgate.paths import Workspace


def test_word_count_counts_through_the_pipeline(callgate_session: Any) -> None:
    s = callgate_session(plugins=[callgate_word_count], files={"a.txt": "one two\nthree\n"})
    assert s.expect_ok("word_count", {"path": "a.txt"}) == "3"
    assert s.expect_ok("word_count", {"path": "a.txt", "unit": "lines"}) == "2"
    missing = s.call("word_count", {"path": "nope.txt"})
    assert missing.is_error and "does not exist" in missing.text


def test_a_directory_swapped_for_a_symlink_after_the_check_is_not_followed(
        callgate_session: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``d`` becomes a symlink to a directory outside right after the path was confined: a
    stat by name would follow it and size the outside file (here a sparse 65 MiB one, so
    the answer would tell it apart)."""
    outside = tmp_path / "outside"
    outside.mkdir()
    with open(outside / "a.txt", "wb") as fh:
        fh.truncate(65 << 20)
    s = callgate_session(plugins=[callgate_word_count], files={"d/a.txt": "one two\n"})
    real, swapped = Workspace.resolve, []

    def resolve_then_swap(self: Workspace, path: Any, *args: Any, **kwargs: Any) -> Any:
        found = real(self, path, *args, **kwargs)
        if not swapped:
            swapped.append(path)
            os.rename(s.workspace / "d", s.workspace / "d.moved")
            os.symlink(outside, s.workspace / "d")
        return found

    monkeypatch.setattr(Workspace, "resolve", resolve_then_swap)
    result = s.call("word_count", {"path": "d/a.txt"})
    assert swapped and result.is_error, result.text
    assert "64 MiB" not in result.text, "the outside file was sized"
