"""Memory lasts across sessions of one project, stays out of other projects, and is reached
through the pipeline (directly, through use_capability on the lean surface, and replay)."""

from __future__ import annotations

import json
from pathlib import Path

import callgate_memory._index as index_module
from callgate.testing import run_replay

from .conftest import remember, search, store


def test_a_fact_remembered_is_found_by_a_new_session_of_the_same_project(memory, tmp_path):
    workspace = tmp_path / "shop"
    workspace.mkdir()
    first = memory(workspace)
    out = remember(first, name="dev-db-port", description="Port of the dev database",
                   body="The dev Postgres listens on 5433, not the default 5432.",
                   keywords=["postgres"])
    assert out.startswith("Saved new memory project/dev-db-port: id=m-")
    assert "revision=1 scope=project" in out
    first.close()
    index_module._indexes.clear()  # nothing carried over in memory: the files are the truth

    second = memory(workspace)
    found = search(second, "which port does postgres use")
    assert "project/dev-db-port" in found and "5433" in found


def test_a_project_fact_is_not_found_from_another_project(memory, tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    remember(memory(tmp_path / "a"), name="deploy", description="How to deploy",
             body="Run make ship from the repository root.")
    other = memory(tmp_path / "b")
    assert "0 memories match" in search(other, "deploy ship")
    assert store(other) != store(memory(tmp_path / "a"))


def test_a_global_fact_is_found_from_every_project(memory, tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    remember(memory(tmp_path / "a"), name="editor", scope="global", type="user",
             description="The user's editor", body="The user edits with Helix.")
    found = search(memory(tmp_path / "b"), "helix editor")
    assert "global/editor" in found
    assert "(type user)" in found


def test_the_stores_live_under_callgate_home(memory, tmp_path):
    s = memory()
    remember(s, name="x")
    home = Path(__import__("os").environ["CALLGATE_HOME"])
    assert store(s).is_relative_to(home / "projects")
    assert store(s, "global") == home / "memory" / "global"
    assert (store(s) / "x.md").is_file()


def test_configured_store_directories(memory, tmp_path):
    s = memory(config={"memory": {"project_dir": ".memory", "global_dir": "shared-facts"}})
    remember(s, name="here")
    remember(s, name="everywhere", scope="global")
    assert (s.workspace / ".memory" / "here.md").is_file()
    home = Path(__import__("os").environ["CALLGATE_HOME"])
    assert (home / "shared-facts" / "everywhere.md").is_file()


def test_the_tools_are_hidden_and_reached_through_use_capability(memory):
    s = memory(lean=True)
    assert not {"remember", "forget", "memory"} & set(s.session.tool_names())
    saved = s.expect_ok("use_capability", {"action": "call", "capability_id": "tool:remember",
                                           "arguments": {"description": "Test runner",
                                                         "body": "Tests run with uv run "
                                                                 "pytest -q."}})
    assert "Saved new memory project/test-runner" in saved
    found = s.expect_ok("use_capability", {"action": "call", "capability_id": "tool:memory",
                                           "arguments": {"operation": "search",
                                                         "query": "pytest"}})
    assert "project/test-runner" in found


def test_replay_remembers_and_a_later_replay_of_the_project_finds_it(tmp_path):
    env = {"CALLGATE_LOAD_PLUGINS": "memory"}
    project, other = tmp_path / "p", tmp_path / "q"
    project.mkdir()
    other.mkdir()
    [saved] = run_replay([{"id": "r1", "name": "remember", "arguments": {
        "name": "ci", "description": "Where CI runs", "body": "CI runs .ci/run on Debian."}}],
        project, "--surface", "full", env=env)
    assert not saved["is_error"], saved
    search_call = {"id": "s1", "name": "memory",
                   "arguments": {"operation": "search", "query": "debian ci"}}
    [found] = run_replay([search_call], project, "--surface", "full", env=env)
    assert "project/ci" in found["content"], found
    [elsewhere] = run_replay([search_call], other, "--surface", "full", env=env)
    assert "0 memories match" in elsewhere["content"]
    [read] = run_replay([{"id": "r2", "name": "memory",
                          "arguments": {"operation": "read", "name": "ci"}}],
                        project, "--surface", "full", env=env)
    assert "CI runs .ci/run on Debian." in read["content"]
    assert json.dumps(str(tmp_path))[1:-1] not in read["content"]  # no absolute store path
