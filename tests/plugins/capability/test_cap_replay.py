"""End to end: `callgate replay` with a config naming mcp-server-time (the issue's "done")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import psutil

TRANSCRIPT = [
    {"id": "c1", "name": "use_capability", "arguments": {"action": "list"}},
    {"id": "c2", "name": "use_capability",
     "arguments": {"action": "inspect", "capability_id": "mcp-server:time"}},
    {"id": "c3", "name": "use_capability",
     "arguments": {"action": "call", "capability_id": "mcp-server:time"}},
    {"id": "c4", "name": "use_capability",
     "arguments": {"action": "inspect", "capability_id": "mcp-tool:time/convert_time"}},
    {"id": "c5", "name": "use_capability",
     "arguments": json.dumps({"action": "call", "capability_id": "mcp-tool:time/convert_time",
                              "arguments": {"source_timezone": "UTC", "time": "12:00",
                                            "target_timezone": "Asia/Tokyo"}})},
    {"id": "c6", "name": "use_capability",
     "arguments": {"action": "decline", "capability_id": "mcp-tool:time/get_current_time",
                   "reason": "the conversion was enough"}},
]


def _env():
    return {**os.environ, "CALLGATE_LOAD_PLUGINS": "capability"}


def _write_config(tmp_path):
    path = tmp_path / "callgate.toml"
    path.write_text(
        f'[capability]\ncache_dir = "{tmp_path / "cache"}"\n\n'
        "[permissions]\nask = [\"mcp_connect__time\"]\n\n"
        f'[mcp_servers.time]\ncommand = "{sys.executable}"\n'
        'args = ["-m", "mcp_server_time", "--local-timezone", "UTC"]\n')
    return path


def _replay(tmp_path, cfg, workspace, *extra):
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("\n".join(json.dumps(line) for line in TRANSCRIPT) + "\n")
    proc = subprocess.run(
        [sys.executable, "-m", "callgate_cli", "replay", str(transcript), "--workspace",
         str(workspace), "--config", str(cfg), *extra],
        capture_output=True, text=True, env=_env(), timeout=120)
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines()]


def _servers_in(workspace):
    found = []
    for proc in psutil.process_iter(["cmdline", "cwd"]):
        try:
            cmd = " ".join(proc.info["cmdline"] or [])
            if ("mcp_server_time" in cmd and proc.info["cwd"] == str(workspace)
                    and proc.status() != psutil.STATUS_ZOMBIE):
                found.append(proc.pid)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return found


def test_replay_lists_connects_inspects_calls_and_declines(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    cfg = _write_config(tmp_path)
    out = _replay(tmp_path, cfg, workspace, "--approve", "all")
    by_id = {r["id"]: r for r in out}
    listing = json.loads(by_id["c1"]["content"])
    assert listing["servers"] == [{"auto_start": False, "cached_tools": None,
                                   "id": "mcp-server:time", "status": "configured"}]
    assert json.loads(by_id["c2"]["content"])["source"] == "none"
    connected = json.loads(by_id["c3"]["content"])
    assert connected["status"] == "connected" and len(connected["tools"]) == 2
    assert json.loads(by_id["c4"]["content"])["source"] == "live"
    assert by_id["c5"]["is_error"] is False and "21:00" in by_id["c5"]["content"]
    assert by_id["c6"]["content"] == ("declined capability mcp-tool:time/get_current_time: "
                                      "the conversion was enough")
    time.sleep(0.2)
    assert _servers_in(workspace) == []


def test_replay_without_an_approver_never_starts_the_gated_server(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    cfg = _write_config(tmp_path)
    out = {r["id"]: r for r in _replay(tmp_path, cfg, workspace)}
    assert out["c3"]["error"]["kind"] == "blocked"
    assert out["c3"]["error"]["signature"] == "ask:mcp_connect__time"
    assert out["c5"]["error"]["kind"] == "blocked"
    assert not (tmp_path / "cache").exists()
    assert _servers_in(workspace) == []


def test_the_tool_surface_is_the_same_with_and_without_servers(tmp_path):
    cfg = _write_config(tmp_path)
    empty = tmp_path / "empty.toml"
    empty.write_text("")
    outputs = []
    for path in (cfg, empty):
        proc = subprocess.run([sys.executable, "-m", "callgate_cli", "tools", "--json",
                               "--provider", "anthropic", "--config", str(path)],
                              capture_output=True, text=True, env=_env(), timeout=60)
        assert proc.returncode == 0, proc.stderr
        outputs.append(proc.stdout)
    assert outputs[0] == outputs[1]
    assert [t["name"] for t in json.loads(outputs[0])] == ["use_capability"]
