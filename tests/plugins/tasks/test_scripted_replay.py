"""``callgate replay --subagents DIR``: children whose calls come from transcript files,
through the installed plugins, end to end without a model (issue 22, item 5)."""

from __future__ import annotations

import json
from pathlib import Path

from callgate.testing import run_replay
from callgate_cli._scripted import slug


def _kid(directory: Path, name: str, *lines: dict) -> None:
    directory.mkdir(exist_ok=True)
    (directory / name).write_text("".join(json.dumps(x) + "\n" for x in lines))


def _replay(tmp_path: Path, lines: list[dict], *extra: str) -> list[dict]:
    return run_replay(
        lines, tmp_path / "ws", "--subagents", str(tmp_path / "kids"), "--surface", "full", *extra
    )


def _setup(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "notes.txt").write_text("the answer is 42\n")


def test_slugs():
    assert slug("Scan the docs!") == "scan-the-docs"
    assert slug("  ") == "child"
    assert slug("Ünïcode / paths") == "n-code-paths"


def test_a_task_child_replays_its_transcript(tmp_path):
    _setup(tmp_path)
    _kid(
        tmp_path / "kids",
        "find-the-answer.jsonl",
        {"name": "grep", "arguments": {"pattern": "answer"}},
    )
    [result] = _replay(
        tmp_path,
        [
            {
                "name": "task",
                "arguments": {"description": "Find the answer", "prompt": "grep for it"},
            }
        ],
    )
    assert not result["is_error"], result
    assert "status=completed" in result["content"]
    assert "grep: " in result["content"] and "the answer is 42" in result["content"]


def test_parallel_children_by_description_then_by_order(tmp_path):
    _setup(tmp_path)
    kids = tmp_path / "kids"
    _kid(kids, "same.jsonl", {"answer": "first same"})
    _kid(kids, "same.2.jsonl", {"answer": "second same"})
    _kid(kids, "child-3.jsonl", {"name": "read_file", "arguments": {"path": "notes.txt"}})
    [result] = _replay(
        tmp_path,
        [
            {
                "name": "parallel_tasks",
                "arguments": {
                    "tasks": [
                        {"description": "same", "prompt": "a"},
                        {"description": "same", "prompt": "b"},
                        {"description": "third one", "prompt": "c"},
                        {"description": "missing", "prompt": "d"},
                    ]
                },
            }
        ],
    )
    text = result["content"]
    assert "first same" in text and "second same" in text and "the answer is 42" in text
    assert text.count("Subagent reference: sa_") == 4
    statuses = [c["status"] for c in result["meta"]["subagents"]]
    assert statuses == ["completed", "completed", "completed", "failed"]
    assert result["meta"]["subagents"][3]["error_code"] == "no_transcript"
    assert "missing.jsonl and child-4.jsonl" in text


def test_an_outcome_line_and_a_failed_child(tmp_path):
    _setup(tmp_path)
    _kid(
        tmp_path / "kids",
        "flaky.jsonl",
        {"outcome": {"status": "partial", "answer": "half", "retryable": True}},
    )
    [result] = _replay(
        tmp_path, [{"name": "task", "arguments": {"description": "flaky", "prompt": "x"}}]
    )
    assert "status=partial retryable=true" in result["content"]


def test_without_the_option_no_runner_means_no_task_tool(tmp_path):
    _setup(tmp_path)
    [result] = run_replay(
        [{"name": "task", "arguments": {"description": "x", "prompt": "y"}}],
        tmp_path / "ws",
        "--surface",
        "full",
    )
    assert result["error"]["kind"] == "unavailable"  # registered, no runner (issue 36.6)


def test_the_model_runner_example_needs_a_key(tmp_path):
    import os
    import subprocess
    import sys

    example = Path(__file__).resolve().parents[3] / "examples" / "subagent_runner_anthropic.py"
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    proc = subprocess.run(
        [sys.executable, str(example), "anything"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("EXAMPLE ONLY: set ANTHROPIC_API_KEY")


def test_profile_tools_end_to_end_through_replay(tmp_path):
    _setup(tmp_path)
    kids = tmp_path / "kids"
    _kid(
        kids,
        "look.jsonl",
        {"name": "bash", "arguments": {"command": "cat notes.txt"}},
        {"name": "bash", "arguments": {"command": "touch x"}},
        {"name": "bash", "arguments": {"command": "echo hi > x"}},
        {"name": "write_file", "arguments": {"path": "x", "content": "x"}},
    )
    _kid(
        kids,
        "explore-where-is-42.jsonl",
        {"name": "grep", "arguments": {"pattern": "42"}},
        {"answer": "notes.txt:1"},
    )
    before = sorted(p.name for p in (tmp_path / "ws").iterdir())
    first, second = _replay(
        tmp_path,
        [
            {
                "name": "read_only_task",
                "arguments": {
                    "prompt": "look",
                    "description": "look",
                    "tools": ["read_file", "grep"],
                },
            },
            {"name": "explore", "arguments": {"task": "where is 42"}},
        ],
    )
    text = first["content"]
    # read_only_task named read_file and grep: bash is refused by the allowlist
    assert text.count("bash (error): blocked: bash is not allowed in this read_only_task") == 3
    assert "write_file (error): blocked" in text
    assert "Final answer:\nnotes.txt:1" in second["content"]
    assert sorted(p.name for p in (tmp_path / "ws").iterdir()) == before
