"""Issue 36.11, second half: the execution facts of the calls that ran are kept in the
session store and shown by ``callgate sessions show`` (text and ``--json``); a call the
gate refused never ran and has none. Run through the front doors: ``callgate replay``
records the session, ``callgate sessions`` reads it back, both as real subprocesses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest


def cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "callgate_cli", *args], input=stdin, capture_output=True,
        text=True, timeout=120, env={**os.environ, "CALLGATE_LOAD_PLUGINS": "files"})


#: a worker process on this machine (docs/executors.md): the gate runs there
WORKER = json.dumps([sys.executable, "-m", "callgate_cli", "worker", "--workspace",
                     "{workspace}"])


def replay_one_ran_one_refused(tmp_path: Path, executor: str = "[]") -> tuple[Path, str]:
    """A session of two writes: ``w1`` runs, ``w2`` (``.git/config``) the gate refuses
    (here, or on a worker with ``executor``); the workspace and the recorded session's id."""
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    (ws / ".git" / "config").write_text("[core]\n")
    transcript = "".join(json.dumps(line) + "\n" for line in [
        {"id": "w1", "name": "write_file", "arguments": {"path": "a.txt", "content": "hi\n"}},
        {"id": "w2", "name": "write_file", "arguments": {"path": ".git/config", "content": "x"}},
    ])
    proc = cli("replay", "-", "--workspace", str(ws), "--surface", "full", "--executor",
               executor, stdin=transcript)
    assert proc.returncode == 0, proc.stderr
    results = {r["id"]: r for r in map(json.loads, proc.stdout.splitlines())}
    assert results["w1"]["is_error"] is False
    assert results["w2"]["is_error"] is True and results["w2"]["meta"]["executed"] is False
    assert (ws / ".git" / "config").read_text() == "[core]\n"
    listed = cli("sessions", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    [info] = [json.loads(line) for line in listed.stdout.splitlines()]
    return ws, info["id"]


@pytest.mark.parametrize("executor", ["[]", WORKER], ids=["local", "worker"])
def test_sessions_show_lists_the_fact_of_the_call_that_ran_only(tmp_path: Path,
                                                                executor: str) -> None:
    ws, sid = replay_one_ran_one_refused(tmp_path, executor)
    shown = cli("sessions", "show", sid)
    assert shown.returncode == 0, shown.stderr
    text = shown.stdout
    assert "execution facts" in text
    [line] = [ln for ln in text.splitlines() if ln.strip().startswith("call ")]
    assert "call w1 write_file → ok: held " + str((ws / "a.txt").resolve()) in line
    rest = line.replace(str(ws.resolve()), "WS")  # the temp path may hold "w2" (popen-gw2)
    assert "w2" not in rest and "config" not in rest
    assert "#2 call w2 write_file" in text  # the refused call is on the timeline, factless


def test_sessions_show_json_has_the_executed_calls_facts(tmp_path: Path) -> None:
    ws, sid = replay_one_ran_one_refused(tmp_path)
    shown = cli("sessions", "show", sid, "--json")
    assert shown.returncode == 0, shown.stderr
    records = [json.loads(line) for line in shown.stdout.splitlines()]
    facts: list[dict[str, Any]] = [r for r in records if r.get("kind") == "fact"]
    assert [(f["call_id"], f["tool"], f["outcome"]) for f in facts] == [
        ("w1", "write_file", "ok")]
    [fact] = facts
    assert fact["session"] == sid and fact["paths"] == [str((ws / "a.txt").resolve())]
    assert fact["profile"] is None and fact["depth"] == 0 and fact["destructive"] is False
    call = next(r for r in records if r.get("call_id") == "w1" and r["kind"] == "call")
    assert call["started"] <= fact["started"] <= fact["ended"] <= call["ended"]

