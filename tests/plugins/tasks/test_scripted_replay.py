"""``callgate replay --subagents DIR``: children whose calls come from transcript files,
through the installed plugins, end to end without a model (issue 22, item 5)."""

from __future__ import annotations

import json
from pathlib import Path

from callgate._scripted import slug
from callgate.testing import run_replay


def _kid(directory: Path, name: str, *lines: dict) -> None:
    directory.mkdir(exist_ok=True)
    (directory / name).write_text("".join(json.dumps(x) + "\n" for x in lines))


def _replay(tmp_path: Path, lines: list[dict], *extra: str) -> list[dict]:
    return run_replay(lines, tmp_path / "ws", "--subagents", str(tmp_path / "kids"),
                      "--surface", "full", *extra)


def _setup(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "notes.txt").write_text("the answer is 42\n")


def test_slugs():
    assert slug("Scan the docs!") == "scan-the-docs"
    assert slug("  ") == "child"
    assert slug("Ünïcode / paths") == "n-code-paths"


def test_a_task_child_replays_its_transcript(tmp_path):
    _setup(tmp_path)
    _kid(tmp_path / "kids", "find-the-answer.jsonl",
         {"name": "grep", "arguments": {"pattern": "answer"}})
    [result] = _replay(tmp_path, [{"name": "task", "arguments": {
        "description": "Find the answer", "prompt": "grep for it"}}])
    assert not result["is_error"], result
    assert "status=completed" in result["content"]
    assert "grep: " in result["content"] and "the answer is 42" in result["content"]


def test_parallel_children_by_description_then_by_order(tmp_path):
    _setup(tmp_path)
    kids = tmp_path / "kids"
    _kid(kids, "same.jsonl", {"answer": "first same"})
    _kid(kids, "same.2.jsonl", {"answer": "second same"})
    _kid(kids, "child-3.jsonl", {"name": "read_file", "arguments": {"path": "notes.txt"}})
    [result] = _replay(tmp_path, [{"name": "parallel_tasks", "arguments": {"tasks": [
        {"description": "same", "prompt": "a"}, {"description": "same", "prompt": "b"},
        {"description": "third one", "prompt": "c"},
        {"description": "missing", "prompt": "d"}]}}])
    text = result["content"]
    assert "first same" in text and "second same" in text and "the answer is 42" in text
    assert text.count("Subagent reference: sa_") == 4
    statuses = [c["status"] for c in result["meta"]["subagents"]]
    assert statuses == ["completed", "completed", "completed", "failed"]
    assert result["meta"]["subagents"][3]["error_code"] == "no_transcript"
    assert "missing.jsonl and child-4.jsonl" in text


def test_an_outcome_line_and_a_failed_child(tmp_path):
    _setup(tmp_path)
    _kid(tmp_path / "kids", "flaky.jsonl",
         {"outcome": {"status": "partial", "answer": "half", "retryable": True}})
    [result] = _replay(tmp_path, [{"name": "task", "arguments": {
        "description": "flaky", "prompt": "x"}}])
    assert "status=partial retryable=true" in result["content"]


def test_without_the_option_no_runner_means_no_task_tool(tmp_path):
    _setup(tmp_path)
    [result] = run_replay([{"name": "task", "arguments": {"description": "x", "prompt": "y"}}],
                          tmp_path / "ws", "--surface", "full")
    assert result["error"]["kind"] == "unknown_tool"
