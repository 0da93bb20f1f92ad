"""``callgate replay`` drives search and code end to end, in a subprocess (issue 6 "done")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

GO = ("package x\n\nfunc Keep() {}\n\n// Drop is going away.\nfunc Drop() int {\n\treturn 1\n}\n"
      "\nfunc Tail() {}\n")
PY = ("class Service:\n    def start(self):\n        return 1\n\n    @property\n"
      "    def stop(self):\n        return 2\n\n\ndef main():\n    Service().start()\n")


def replay(workspace: Path, calls: list[dict], config: str = "") -> list[dict]:
    transcript = workspace.parent / f"{workspace.name}.jsonl"
    transcript.write_text("\n".join(json.dumps(c) for c in calls) + "\n", encoding="utf-8")
    args = [sys.executable, "-m", "callgate_cli", "replay", str(transcript), "--workspace",
            str(workspace), "--surface", "full"]
    if config:
        cfg = workspace.parent / f"{workspace.name}.toml"
        cfg.write_text(config, encoding="utf-8")
        args += ["--config", str(cfg)]
    env = {**os.environ, "CALLGATE_LOAD_PLUGINS": "search,code,files"}
    done = subprocess.run(args, capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def _workspace(tmp_path: Path, name: str) -> Path:
    ws = tmp_path / name
    (ws / "pkg").mkdir(parents=True)
    (ws / "pkg" / "x.go").write_text(GO, encoding="utf-8")
    (ws / "svc.py").write_text(PY, encoding="utf-8")
    (ws / "notes.txt").write_text("TODO: ship it\n", encoding="utf-8")
    return ws


def test_replay_finds_greps_and_lists_with_both_engines(tmp_path):
    calls = [
        {"id": "g", "name": "glob", "arguments": {"pattern": "**/*.{go,py}"}},
        {"id": "r", "name": "grep", "arguments": {"pattern": "func \\w+", "glob": "*.go"}},
        {"id": "l", "name": "ls", "arguments": {"recursive": True}},
    ]
    for engine in ("rg", "python"):
        out = replay(_workspace(tmp_path, engine), calls,
                     f'[search]\ngrep_engine = "{engine}"\n')
        by_id = {r["id"]: r for r in out}
        assert by_id["g"]["content"] == "pkg/x.go\nsvc.py"
        assert by_id["r"]["content"] == ("pkg/x.go:3:func Keep() {}\npkg/x.go:6:func Drop() "
                                         "int {\npkg/x.go:10:func Tail() {}")
        assert by_id["r"]["meta"]["engine"] == engine
        assert by_id["l"]["content"].split("\n")[:3] == ["notes.txt\t14", "pkg/",
                                                         f"pkg/x.go\t{len(GO)}"]


def test_replay_outlines_and_deletes_after_a_read(tmp_path):
    ws = _workspace(tmp_path, "code")
    out = replay(ws, [
        {"id": "o1", "name": "code_index", "arguments": {"action": "outline",
                                                         "path": "pkg/x.go"}},
        {"id": "o2", "name": "code_index", "arguments": {"action": "outline",
                                                         "path": "svc.py"}},
        {"id": "d0", "name": "delete_symbol", "arguments": {"path": "pkg/x.go",
                                                            "name": "Drop"}},
        {"batch": [{"id": "r1", "name": "read_file", "arguments": {"path": "pkg/x.go"}},
                   {"id": "r2", "name": "read_file", "arguments": {"path": "svc.py"}}]},
        {"id": "d1", "name": "delete_symbol", "arguments": {"path": "pkg/x.go",
                                                            "name": "Drop"}},
        {"id": "d2", "name": "delete_symbol", "arguments": {"path": "svc.py", "name": "stop",
                                                            "parent": "Service"}},
    ])
    by_id = {r["id"]: r for r in out}
    assert by_id["o1"]["content"].split("\n") == [
        "pkg/x.go:3: func Keep — func Keep()", "pkg/x.go:6: func Drop — func Drop() int",
        "pkg/x.go:10: func Tail — func Tail()"]
    assert by_id["o2"]["content"].split("\n") == [
        "svc.py:1: class Service — class Service",
        "svc.py:2: method Service.start — def start(self)",
        "svc.py:6: method Service.stop — def stop(self)",
        "svc.py:10: func main — def main()"]
    assert by_id["d0"]["error"]["kind"] == "not_observed"
    assert not by_id["r1"]["is_error"] and not by_id["r2"]["is_error"]
    assert by_id["d1"]["content"].startswith("deleted func Drop (lines 5-9) from pkg/x.go\n"
                                             "--- a/pkg/x.go\n+++ b/pkg/x.go")
    assert by_id["d2"]["content"].startswith("deleted method Service.stop (lines 5-9) from "
                                             "svc.py")
    assert (ws / "pkg" / "x.go").read_text() == "package x\n\nfunc Keep() {}\n\nfunc Tail() {}\n"
    assert (ws / "svc.py").read_text() == ("class Service:\n    def start(self):\n        return"
                                           " 1\n\ndef main():\n    Service().start()\n")
