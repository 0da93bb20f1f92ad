"""``callgate sessions list | show | search | export | prune`` against the test's store, and
the export replayed: ``callgate replay`` of an export runs the session's calls again."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from callgate import store as st

from .conftest import replay, results, store_path


def sessions(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "callgate_cli", "sessions", *args],
                          capture_output=True, text=True, timeout=120, cwd=cwd)


LINES = [
    {"id": "r1", "name": "read_file", "arguments": {"path": "notes.txt"}},
    {"batch": [{"id": "g1", "name": "grep", "arguments": {"pattern": "second"}},
               {"id": "l1", "name": "ls", "arguments": {}}]},
    {"id": "e1", "name": "edit_file", "origin": "automatic",
     "arguments": json.dumps({"path": "notes.txt", "old_string": "hello",
                              "new_string": "goodbye"})},
]


def recorded(ws: Path) -> str:
    results(replay(ws, LINES, plugins="files,search"))
    listed = sessions("list", "--json")
    assert listed.returncode == 0, listed.stderr
    [info] = [json.loads(line) for line in listed.stdout.splitlines()]
    return info["id"]


def test_list_show_and_search(ws: Path) -> None:
    sid = recorded(ws)
    listed = sessions("list")
    assert sid in listed.stdout and str(ws.resolve()) in listed.stdout
    assert "read_file" in listed.stdout  # the preview: no user message, so the first call
    shown = sessions("show", sid[:10])
    assert shown.returncode == 0, shown.stderr
    assert f"session {sid}: closed" in shown.stdout and "4 calls" in shown.stdout
    assert "#4 call e1 edit_file" in shown.stdout and "→ ok" in shown.stdout
    lines = [json.loads(line) for line in sessions("show", sid, "--json").stdout.splitlines()]
    assert lines[0]["session"]["id"] == sid
    assert [e["call_id"] for e in lines[1:] if e["kind"] == "call"] == ["r1", "g1", "l1", "e1"]
    # then the execution facts: the one writer that ran (issue 36.11)
    assert [(e["kind"], e["call_id"]) for e in lines[5:]] == [("fact", "e1")]
    found = sessions("search", "second", "--kind", "tool_input", "--json")
    [hit] = [json.loads(line) for line in found.stdout.splitlines()]
    assert (hit["session"], hit["kind"], hit["tool"]) == (sid, "tool_input", "grep")
    assert "[second]" in hit["snippet"]
    assert sessions("search", "nothinglikethis").stdout.strip() == "no matches"


def test_an_unknown_id_is_a_usage_error_naming_the_store(ws: Path) -> None:
    recorded(ws)
    for command in ("show", "export"):
        proc = sessions(command, "deadbeefdeadbeef")
        assert proc.returncode == 2 and str(store_path()) in proc.stderr, proc.stderr


def test_replaying_an_export_runs_the_session_again(ws: Path, tmp_path: Path) -> None:
    sid = recorded(ws)
    export = tmp_path / "export.jsonl"
    proc = sessions("export", sid, "-o", str(export))
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in export.read_text().splitlines()]
    assert lines == [
        {"id": "r1", "name": "read_file", "arguments": {"path": "notes.txt"}},
        {"batch": [{"id": "g1", "name": "grep", "arguments": {"pattern": "second"}},
                   {"id": "l1", "name": "ls", "arguments": {}}]},
        {"id": "e1", "name": "edit_file", "arguments": {
            "path": "notes.txt", "old_string": "hello", "new_string": "goodbye"},
         "origin": "automatic"}]
    assert sessions("export", sid, "-o", str(export)).returncode == 2  # never overwritten

    again = tmp_path / "again"
    again.mkdir()
    (again / "notes.txt").write_text("hello world\nsecond line\n")
    env = {**os.environ, "CALLGATE_LOAD_PLUGINS": "files,search"}
    run = subprocess.run([sys.executable, "-m", "callgate_cli", "replay", str(export),
                          "--workspace", str(again), "--surface", "full"], capture_output=True,
                         text=True, env=env, timeout=120)
    out = [json.loads(line) for line in run.stdout.splitlines()]
    assert [o["id"] for o in out] == ["r1", "g1", "l1", "e1"]
    assert not any(o["is_error"] for o in out), out
    assert (again / "notes.txt").read_text() == "goodbye world\nsecond line\n"


def test_prune_honours_keep_days_and_max_store_mb(ws: Path, tmp_path: Path) -> None:
    store = st.open_store()
    run = st.RunStarted("r", 1, "h", None, time.time())
    now = time.time()
    ops: list[Any] = [run]
    for i, days in enumerate((300, 40, 2)):
        sid = f"s{i}"
        ops += [st.SessionOpened(run, sid, None, "/ws", None, None, now - days * 86400, None,
                                 None, None, "all"), st.SessionClosed(sid, now - days * 86400)]
        ops.append(st.MessageRecorded(sid, "user", "x" * 400_000, now))
    store.write(ops)
    store.close()
    config = tmp_path / "callgate.toml"
    config.write_text("[sessions]\nkeep_days = 30\n")
    pruned = sessions("prune", "--config", str(config))
    assert pruned.returncode == 0, pruned.stderr
    assert "pruned 2 sessions" in pruned.stdout
    left = [json.loads(line)["id"] for line in sessions("list", "--json").stdout.splitlines()]
    assert left == ["s2"]
    config.write_text("[sessions]\nkeep_days = 0\nmax_store_mb = 1\n")
    assert "pruned 0 sessions" in sessions("prune", "--config", str(config)).stdout
    assert "pruned 1 sessions" in sessions("prune", "--max-mb", "0", "--keep-days", "1").stdout
    bad = tmp_path / "bad.toml"
    bad.write_text('[sessions]\nkeep_days = "soon"\n')
    proc = sessions("prune", "--config", str(bad))
    assert proc.returncode == 2 and "sessions.keep_days" in proc.stderr
