"""``callgate replay`` end to end (issue 4, done means): a foreground command, a timeout, a
background job that is read, listed and killed, and alias calls; nothing left running."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from shell_helpers import group_members, pid_alive, wait_until

pytestmark = pytest.mark.skipif(os.name != "posix", reason="needs POSIX")

REPO = Path(__file__).resolve().parents[3]

TRANSCRIPT = [
    {"id": "c1", "name": "bash", "arguments": {"command": "echo hello"}},
    {"id": "c2", "name": "bash", "arguments": {"command": "echo start; sleep 30",
                                               "timeout_ms": 300}},
    {"id": "c3", "name": "bash", "arguments": {"command": "echo one; sleep 60 & echo $! > p; wait",
                                               "run_in_background": True,
                                               "description": "sleeper"}},
    {"id": "c4", "name": "job_output", "arguments": {"job_id": "bash-1", "wait": True,
                                                     "timeout_ms": 1000}},
    {"id": "c5", "name": "job_output", "arguments": {}},
    {"id": "c6", "name": "job_kill", "arguments": {"job_id": "bash-1"}},
    {"id": "c7", "name": "bash_output", "arguments": {"job_id": "bash-1"}},
    {"id": "c8", "name": "wait", "arguments": {"job_ids": ["bash-1"], "timeout_seconds": 10}},
    {"batch": [
        {"id": "c9", "name": "bash", "arguments": {"command": "sleep 60 & echo $! > q; wait",
                                                   "run_in_background": True}},
        {"id": "c10", "name": "kill_shell", "arguments": {"job_id": "bash-7"}},
    ]},
    {"id": "c11", "name": "bash", "arguments": {"command": "exit 3"}},
]


def test_replay_runs_the_shell_story_and_leaves_nothing_running(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("".join(json.dumps(line) + "\n" for line in TRANSCRIPT))
    env = {**os.environ, "CALLGATE_LOAD_PLUGINS": "shell"}
    done = subprocess.run(
        [sys.executable, "-m", "callgate_cli", "replay", str(transcript), "--workspace",
         str(workspace)], capture_output=True, text=True, env=env, timeout=120, cwd=REPO,
        check=False)
    assert done.returncode == 0, done.stderr
    out = {r["id"]: r for r in map(json.loads, done.stdout.splitlines())}
    assert list(out) == [f"c{i}" for i in range(1, 12)]

    assert out["c1"]["content"] == "hello\n[exit code 0]" and not out["c1"]["is_error"]
    assert out["c2"]["content"] == ("start\n[timed out after 300 ms; process group killed; "
                                    "output above is partial]")
    assert out["c2"]["error"]["kind"] == "timeout" and out["c2"]["meta"]["timed_out"] is True
    assert out["c3"]["content"].startswith("Started background job bash-1: sleeper\n")
    assert out["c4"]["content"].startswith("[bash-1] running\none\n")
    assert "(still running after waiting 1000 ms)" in out["c4"]["content"]
    listing = out["c5"]["content"].splitlines()
    assert listing[0] == "Background jobs in this session: 1 (1 running)"
    assert listing[1].startswith("bash-1  running  exit=-  runtime=")
    assert listing[1].endswith("  unread=0B  sleeper")
    assert out["c6"]["content"] == ("Kill requested for background job bash-1; it will settle "
                                    "as killed.")
    assert out["c7"]["content"] == "[bash-1] killed (job_kill)\n(no new output)"
    assert out["c8"]["content"] == "[bash-1] killed (job_kill)\n(no new output)"
    assert out["c9"]["content"].startswith("Started background job bash-2: ")
    assert out["c10"]["error"]["kind"] == "not_found"
    assert out["c11"]["error"] == {"kind": "tool_error", "signature": "exit:3",
                                   "message": "exit code 3"}

    # replay closed its session on exit: both sleepers and both job groups are gone
    for name in ("p", "q"):
        pid = int((workspace / name).read_text())
        assert wait_until(lambda pid=pid: not pid_alive(pid), 10), name
    for job in ("c3", "c9"):
        assert not group_members(out[job]["meta"]["pid"])
