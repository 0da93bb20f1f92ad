"""Goal state in the session store: committed after every change, restored disarmed, an old
session directory's goals.json imported once, never overwritten when unreadable
(goals-and-workflow.md §1 Persistence; statements 12, 13)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from callgate_goals import GOALS

from .conftest import body, break_store, create, dir_state, goal, stored, update


def test_every_change_round_and_disarm_is_written(goals) -> None:
    s = goals()
    g = create(s, max_goal_rounds=1)
    assert stored(s) == {"version": 1, "goal": g}
    s.session.extension(GOALS).start_round()
    assert stored(s)["goal"]["rounds_started"] == 1
    assert s.session.extension(GOALS).should_continue() is False
    assert stored(s)["goal"]["stop_reason"] == "round-limit"
    assert os.listdir(s.session.directory) == []  # nothing is written beside the store


def test_reopen_restores_an_armed_goal_disarmed(goals, tmp_path: Path) -> None:
    """12. Reopen → same id/revision, disarmed, cold-restore, should_continue() false;
    a human resume arms it again."""
    first = goals()
    g = create(first)
    g = goal(update(first, g, "edit", objective="Ship v2"))
    first.close()
    again = goals(host=first.host, workspace=first.workspace)
    restored = again.session.extension(GOALS).current()
    assert (restored["id"], restored["revision"], restored["objective"]) == (g["id"], 2,
                                                                          "Ship v2")
    assert (restored["phase"], restored["armed"], restored["stop_reason"]) == (
        "active", False, "cold-restore")
    assert again.session.extension(GOALS).should_continue() is False
    assert again.session.extension(GOALS).start_round() is None
    out = body(again.call("get_goal", {}))
    assert out["goal"] == restored and "restored after a restart" in out["instruction"]
    assert again.session.id == first.session.id  # the session directory's session
    assert stored(again)["goal"] == restored
    again.sync.begin_turn("human")
    resumed = goal(update(again, restored, "resume"))
    assert resumed["armed"] and resumed["revision"] == 3 and resumed["stop_reason"] is None
    assert again.session.extension(GOALS).should_continue() is True


def test_reopen_keeps_a_paused_goal_as_it_was(goals) -> None:
    first = goals()
    g = goal(update(first, create(first), "pause"))
    first.close()
    again = goals(host=first.host, workspace=first.workspace)
    assert again.session.extension(GOALS).current() == g


@pytest.mark.parametrize("content", [
    b'{"version": 99, "goal": null}',
    b"{not json",
    b'{"version": 1, "goal": {"id": "nope"}}',
])
def test_an_unreadable_goal_file_is_reported_and_never_overwritten(goals, tmp_path: Path,
                                                                   content: bytes) -> None:
    """13. version 99 → get_goal goal null; create → GOAL_UNSUPPORTED_VERSION; bytes same."""
    directory = tmp_path / "session"
    directory.mkdir()
    (directory / "goals.json").write_bytes(content)
    before = dir_state(directory)
    s = goals(session_dir=directory)
    out = body(s.call("get_goal", {}))
    assert out["goal"] is None and "could not be loaded" in out["instruction"]
    created = s.call("create_goal", {"objective": "Ship v1"})
    assert created.error.signature == "GOAL_UNSUPPORTED_VERSION"
    assert created.text.startswith("create_goal [GOAL_UNSUPPORTED_VERSION]: goals.json")
    updated = s.call("update_goal", {"goal_id": "a" * 32, "revision": 1, "action": "pause"})
    assert updated.error.signature == "GOAL_UNSUPPORTED_VERSION"
    assert s.session.extension(GOALS).should_continue() is False
    assert s.session.extension(GOALS).start_round() is None
    assert dir_state(directory) == before


def test_a_failed_write_changes_nothing_in_memory(goals, monkeypatch) -> None:
    s = goals()
    g = create(s)
    before = stored(s)
    break_store(s, monkeypatch)  # the store refuses the commit, as a full disk would
    result = update(s, g, "pause")
    assert result.is_error and result.error.kind == "tool_error"
    assert "database or disk is full" in result.text
    assert s.session.extension(GOALS).current() == g
    monkeypatch.undo()
    assert stored(s) == before




def test_an_old_session_directory_is_imported_once_and_left_as_it_was(goals,
                                                                       tmp_path: Path) -> None:
    first = goals()
    g = create(first)
    snapshot = {"version": 1, "goal": g}
    first.close()
    directory = tmp_path / "old-session"  # a directory as an earlier callgate left it
    directory.mkdir()
    (directory / "goals.json").write_text(json.dumps(snapshot))
    before = dir_state(directory)
    s = goals(session_dir=directory, host=first.host, workspace=first.workspace)
    restored = s.session.extension(GOALS).current()
    assert (restored["id"], restored["stop_reason"]) == (g["id"], "cold-restore")
    assert stored(s)["goal"] == restored  # imported into the store
    paused = goal(update(s, restored, "pause"))
    s.close()
    again = goals(session_dir=directory, host=first.host, workspace=first.workspace)
    assert again.session.extension(GOALS).current() == paused  # the store's, not the file's again
    assert dir_state(directory) == before
