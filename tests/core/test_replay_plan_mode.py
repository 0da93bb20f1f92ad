"""Plan approval in a transcript (issue 25 item 5): ``{"mode": "default"}`` is the user's yes.

``--mode plan`` starts the session in plan mode; a write is refused and changes nothing;
the mode line approves the plan (no result line of its own; the model reads a notice with
its next results); the same write then runs. ``{"mode": "plan"}`` goes back.
"""

from __future__ import annotations

import json
from pathlib import Path

from .test_replay_cli import lines_of, run_cli

PLUGINS = {"CALLGATE_LOAD_PLUGINS": "files"}


def _write(call_id: str, text: str) -> dict:
    return {"id": call_id, "name": "write_file",
            "arguments": {"path": "plan.txt", "content": text}}


def test_a_write_is_refused_before_approval_and_allowed_after(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    transcript = tmp_path / "t.jsonl"
    lines = [_write("before", "too early\n"), {"mode": "default"},
             _write("after", "approved\n"), {"mode": "plan"}, _write("again", "no\n"),
             {"mode": "yolo"}, {"mode": "default", "name": "write_file"}]
    transcript.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    proc = run_cli("replay", str(transcript), "--workspace", str(ws), "--mode", "plan",
                   env=PLUGINS)
    assert proc.returncode == 0, proc.stderr
    out = lines_of(proc.stdout)
    assert [r["id"] for r in out] == ["before", "after", "again", None, "L7"]
    before, after, again, bad_mode, mixed = out
    assert before["error"]["kind"] == "blocked" and before["error"]["signature"] == "mode:plan"
    assert after["is_error"] is False, after["content"]
    assert "[plan approved] The user approved the plan" in after["content"]
    assert again["error"]["signature"] == "mode:plan"
    assert "[plan mode] The user switched the session to plan mode" in again["content"]
    assert bad_mode["error"]["kind"] == "invalid_transcript"
    assert bad_mode["meta"]["line"] == 6
    assert mixed["error"]["kind"] == "invalid_arguments"  # a call line keeps being a call
    assert (ws / "plan.txt").read_text() == "approved\n"


def test_without_plan_mode_a_default_line_changes_nothing_and_says_nothing(
        tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(json.dumps({"mode": "default"}) + "\n"
                          + json.dumps(_write("w", "x\n")) + "\n")
    proc = run_cli("replay", str(transcript), "--workspace", str(ws), env=PLUGINS)
    [result] = lines_of(proc.stdout)
    assert result["is_error"] is False and "[plan" not in result["content"]
