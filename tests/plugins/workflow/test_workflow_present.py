"""present through the full pipeline (goals-and-workflow.md §2; statements 18, 19)."""

from __future__ import annotations

import builtins
import json
import os
from pathlib import Path
from typing import Any

import pytest
from callgate_workflow import PRESENTED_FILES

from .conftest import stored

FILES = {"out/report.md": "SECRET-123 report", "out/chart.png": b"\x89PNG SECRET-123",
         "notes.txt": "n"}


def _state(s) -> Any:
    return stored(s, "presented")


def test_present_records_only_paths_and_descriptions(workflow, monkeypatch) -> None:
    """18. Two files → `Presented 2 files:`; the stored state holds only paths and
    descriptions; the content is in neither, and the files are never opened."""
    s = workflow(files=FILES)
    opened: list[str] = []
    real_open, real_os_open = builtins.open, os.open

    def spy_open(file, *a, **k):
        opened.append(os.fspath(file) if not isinstance(file, int) else "")
        return real_open(file, *a, **k)

    def spy_os_open(path, *a, **k):
        opened.append(os.fspath(path))
        return real_os_open(path, *a, **k)

    monkeypatch.setattr(builtins, "open", spy_open)
    monkeypatch.setattr(os, "open", spy_os_open)
    result = s.call("present", {"files": [
        {"path": "out/report.md", "description": "Final report"}, {"path": "out/chart.png"}]})
    monkeypatch.undo()
    assert not result.is_error, result.text
    assert result.text == "Presented 2 files:\n- out/report.md — Final report\n- out/chart.png"
    raw = json.dumps(_state(s))
    assert json.loads(raw) == {"version": 1, "files": [
        {"path": "out/report.md", "description": "Final report"},
        {"path": "out/chart.png", "description": None}]}
    assert "SECRET-123" not in raw and "SECRET-123" not in result.text
    assert not any(p.endswith(("report.md", "chart.png")) for p in opened), opened
    assert s.session.extension(PRESENTED_FILES).entries() == json.loads(raw)["files"]


def test_presenting_again_keeps_first_order_and_updates_descriptions(workflow) -> None:
    s = workflow(files=FILES)
    s.call("present", {"files": [{"path": "out/report.md", "description": "Draft"},
                                 {"path": "notes.txt"}]})
    result = s.call("present", {"files": [{"path": "notes.txt", "description": "Notes"},
                                          {"path": "./out/../out/report.md",
                                           "description": "Final"}]})
    assert result.text == "Presented 2 files:\n- notes.txt — Notes\n- out/report.md — Final"
    assert s.session.extension(PRESENTED_FILES).entries() == [
        {"path": "out/report.md", "description": "Final"},
        {"path": "notes.txt", "description": "Notes"}]


def test_a_missing_file_among_several_rejects_all(workflow) -> None:
    """19. existing + missing → `1 of 2 files were rejected`, PRESENT_REJECTED, nothing."""
    s = workflow(files=FILES)
    result = s.call("present", {"files": [{"path": "out/report.md"}, {"path": "gone.md"}]})
    assert result.is_error and result.error.kind == "tool_error"
    assert result.error.signature == "PRESENT_REJECTED"
    assert result.text == ("present: 1 of 2 files were rejected; nothing was recorded\n"
                           '- files/1 "gone.md": does not exist')
    assert s.session.extension(PRESENTED_FILES).entries() == []
    assert _state(s) is None


def test_each_rejection_reason(workflow, tmp_path: Path) -> None:
    """19. outside → FS_OUTSIDE_WORKSPACE; a directory; not a regular file; a duplicate."""
    s = workflow(files=FILES)
    (tmp_path / "x.txt").write_text("outside")
    os.mkfifo(s.path("pipe"))
    os.symlink("out/report.md", s.path("link.md"))
    os.symlink(tmp_path / "x.txt", s.path("escape.txt"))
    s.call("present", {"files": [{"path": "notes.txt"}]})
    before = _state(s)
    result = s.call("present", {"files": [
        {"path": "out/report.md"}, {"path": "../x.txt"}, {"path": "out"}, {"path": "pipe"},
        {"path": "link.md"}, {"path": "escape.txt"}, {"path": "notes.txt/inner"}]})
    lines = result.text.splitlines()
    assert lines[0] == "present: 6 of 7 files were rejected; nothing was recorded"
    assert lines[1].startswith('- files/1 "../x.txt": FS_OUTSIDE_WORKSPACE: ')
    assert "resolves outside the workspace" in lines[1]
    assert lines[2] == '- files/2 "out": is a directory'
    assert lines[3] == '- files/3 "pipe": is not a regular file'
    assert lines[4] == '- files/4 "link.md": duplicate of files/0'
    assert lines[5].startswith('- files/5 "escape.txt": FS_OUTSIDE_WORKSPACE: ')
    assert lines[6] == '- files/6 "notes.txt/inner": does not exist'
    assert _state(s) == before


def test_a_symlink_inside_the_workspace_is_recorded_as_its_target(workflow) -> None:
    s = workflow(files=FILES)
    os.symlink("out/report.md", s.path("latest.md"))
    result = s.call("present", {"files": [{"path": "latest.md", "description": "Latest"}]})
    assert result.text == "Presented 1 file:\n- out/report.md — Latest"


@pytest.mark.parametrize("files", [
    [],
    [{"path": f"f{i}"} for i in range(9)],
    [{"path": ""}],
    [{"path": "a", "description": "d" * 501}],
    [{"path": "a", "size": 1}],
])
def test_bad_argument_shapes_are_validation_errors(workflow, files) -> None:
    """19. Nine files (and other shapes) → validation errors; nothing recorded."""
    s = workflow(files=FILES)
    result = s.call("present", {"files": files})
    assert result.error.kind == "invalid_arguments"
    assert _state(s) is None


def test_presented_files_are_restored_on_reopen(workflow) -> None:
    s = workflow(files=FILES)
    s.call("present", {"files": [{"path": "notes.txt", "description": "Notes"}]})
    s.close()
    again = workflow(host=s.host, workspace=s.workspace)
    assert again.session.extension(PRESENTED_FILES).entries() == [{"path": "notes.txt",
                                                        "description": "Notes"}]
