"""``callgate replay`` and the other commands, run as real subprocesses (host.md §9)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from callgate import Host


def run_cli(*args: str, stdin: str | None = None, env: dict[str, str] | None = None,
            cwd: str | None = None) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, "CALLGATE_LOAD_PLUGINS": "word_count", **(env or {})}
    return subprocess.run([sys.executable, "-m", "callgate_cli", *args], input=stdin,
                          capture_output=True, text=True, env=full_env, timeout=120, cwd=cwd)


def lines_of(out: str) -> list[dict]:
    return [json.loads(line) for line in out.splitlines() if line.strip()]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    w = tmp_path / "ws"
    w.mkdir()
    (w / "a.txt").write_text("one two three\n")
    return w


def test_replay_invalid_valid_and_unknown(ws: Path, tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("\n".join([
        json.dumps({"id": "c1", "name": "word_count", "arguments": {"paht": "a.txt"}}),
        json.dumps({"id": "c2", "name": "word_count", "arguments": {"path": "a.txt"}}),
        json.dumps({"id": "c3", "name": "wordcount", "arguments": {}}),
    ]) + "\n")
    proc = run_cli("replay", str(transcript), "--workspace", str(ws))
    assert proc.returncode == 0, proc.stderr
    out = lines_of(proc.stdout)
    assert [o["id"] for o in out] == ["c1", "c2", "c3"]
    assert set(out[0]) == {"id", "name", "is_error", "content", "error", "meta"}
    assert out[0]["error"]["kind"] == "invalid_arguments"
    assert out[0]["error"]["signature"].startswith("argument_validation:word_count:")
    assert out[0]["error"]["signature"].endswith(":required")
    assert out[1] == {**out[1], "is_error": False, "content": "3", "error": None}
    assert out[2]["error"]["kind"] == "unknown_tool"
    assert out[2]["error"]["signature"] == "unknown_tool:wordcount"
    assert "word_count" in out[2]["content"]


def test_replay_bad_lines_become_results_and_replay_goes_on(ws: Path) -> None:
    """host.md §10.18."""
    transcript = "\n".join([
        json.dumps({"id": "c1", "name": "word_count", "arguments": {"path": "a.txt"}}),
        "{oops",
        json.dumps({"id": "c3", "arguments": {}}),
        json.dumps({"id": "c4", "name": "word_count", "arguments": '{"path": "a.txt"}'}),
    ])
    proc = run_cli("replay", "-", "--workspace", str(ws), stdin=transcript)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    out = lines_of(proc.stdout)
    assert len(out) == 4
    assert [o["is_error"] for o in out] == [False, True, True, False]
    assert out[1]["error"]["kind"] == "invalid_transcript" and out[1]["meta"]["line"] == 2
    assert out[1]["error"]["signature"] == "invalid_transcript:json"
    assert out[1]["id"] is None and out[1]["name"] is None
    assert out[2]["error"]["signature"] == "invalid_transcript:shape"
    assert out[2]["meta"]["line"] == 3 and out[2]["id"] == "c3"
    assert out[3]["content"] == "3"


def test_replay_batch_lines_keep_positions(ws: Path) -> None:
    transcript = json.dumps({"batch": [
        {"id": "b1", "name": "word_count", "arguments": {"path": "a.txt", "unit": "lines"}},
        {"id": "b2"},
        {"id": "b3", "name": "word_count", "arguments": {"path": "a.txt"}},
    ]})
    out = lines_of(run_cli("replay", "-", "--workspace", str(ws), stdin=transcript).stdout)
    assert [o["id"] for o in out] == ["b1", "b2", "b3"]
    assert [o["content"] for o in (out[0], out[2])] == ["1", "3"]
    assert out[1]["error"]["kind"] == "invalid_transcript"


def test_replay_exit_2_when_transcript_or_config_is_bad(ws: Path, tmp_path: Path) -> None:
    proc = run_cli("replay", str(tmp_path / "missing.jsonl"), "--workspace", str(ws))
    assert proc.returncode == 2 and "cannot open transcript" in proc.stderr
    bad = tmp_path / "bad.toml"
    bad.write_text("[results]\nmax_chars = 'many'\n")
    proc = run_cli("replay", "-", "--workspace", str(ws), "--config", str(bad), stdin="")
    assert proc.returncode == 2
    assert "bad.toml:2" in proc.stderr and "results.max_chars" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_tools_and_plugins_commands(ws: Path) -> None:
    proc = run_cli("tools", "--json")
    assert proc.returncode == 0, proc.stderr
    names = [t["name"] for t in json.loads(proc.stdout)]
    assert names == ["word_count"]
    proc = run_cli("plugins")
    assert "word_count" in proc.stdout and "entry point" in proc.stdout


def test_call_command_runs_one_call(ws: Path) -> None:
    proc = run_cli("call", "word_count", '{"path": "a.txt"}', "--workspace", str(ws))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["content"] == "3"


def test_example_plugin_is_discovered_through_its_entry_point(monkeypatch) -> None:
    monkeypatch.setenv("CALLGATE_LOAD_PLUGINS", "word_count")
    host = Host.boot({})
    [info] = [p for p in host.plugins() if "word_count" in p.tools]
    assert info.source.startswith("entry point callgate_word_count")
    assert host.registry.get("word_count").plugin == "word_count"
    monkeypatch.setenv("CALLGATE_DISABLE_PLUGINS", "word_count")
    assert "word_count" not in Host.boot({}).registry
    monkeypatch.delenv("CALLGATE_DISABLE_PLUGINS")
    assert "word_count" not in Host.boot({"plugins": {"block": ["word_count"]}}).registry
