"""``callgate serve`` as a real stdio subprocess, driven by the ``mcp`` SDK's stdio client.

The toolkit server (``serve_toolkit.py``) is the same code path as ``callgate serve``
with test-only tools; the ``callgate serve`` command itself is exercised for its
argument handling here and end to end with the built-in plugins in ``test_end_to_end``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from .test_server import Elicitor, run, text_of
from .toolkit import alive, child_env

HERE = Path(__file__).parent
LAUNCHER = HERE / "serve_toolkit.py"


def wait_dead(pid: int, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not alive(pid)


def spawned(marker: Path) -> list[int]:
    path = Path(str(marker) + ".pids")
    return [int(x) for x in path.read_text().split()] if path.exists() else []


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    w = tmp_path / "ws"
    w.mkdir()
    (w / "a.txt").write_text("hello world\n")
    return w


def toolkit_server(ws: Path, marker: Path, config: dict[str, Any] | None = None
                   ) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable,
                                 args=[str(LAUNCHER), str(ws), str(marker),
                                       json.dumps(config or {})],
                                 env=child_env(PYTHONPATH=os.pathsep.join(sys.path)))


def test_over_stdio_the_session_lives_for_the_connection_and_dies_with_it(
        ws: Path, tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    user = Elicitor("accept")

    async def scenario() -> None:
        async with stdio_client(toolkit_server(ws, marker, {"permissions": {"mode": "ask"}})) \
                as (read, write), ClientSession(read, write, elicitation_callback=user) as client:
            init = await client.initialize()
            assert init.server_info.name == "callgate"
            assert init.capabilities.tools is not None
            names = [t.name for t in (await client.list_tools()).tools]
            assert {"peek", "swap", "spawn"} <= set(names)
            r = await client.call_tool("peek", {"path": "a.txt"})
            assert text_of(r) == "hello world\n"
            r = await client.call_tool("swap", {"path": "a.txt", "old": "hello", "new": "bye"})
            assert not r.is_error, text_of(r)  # approved over the wire (elicitation/create)
            r = await client.call_tool("spawn", {})
            assert not r.is_error, text_of(r)
            r = await client.call_tool("peek", {"paht": "a.txt"})
            assert r.is_error and "not executed" in text_of(r)
            assert not marker.exists()  # the session is still open

    run(scenario)
    assert [m.splitlines()[0] for m in user.messages] == [
        "callgate asks for approval: run swap?", "callgate asks for approval: run spawn?"]
    assert (ws / "a.txt").read_text() == "bye world\n"
    assert marker.exists()  # session_end ran when the client closed our stdin
    server = int(Path(str(marker) + ".server").read_text())
    assert wait_dead(server)
    [child] = spawned(marker)
    assert wait_dead(child)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_closes_the_session_and_exits_promptly(ws: Path, tmp_path: Path,
                                                        signum: int) -> None:
    marker = tmp_path / "marker"
    proc = subprocess.Popen([sys.executable, str(LAUNCHER), str(ws), str(marker)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    try:
        def send(message: dict[str, Any]) -> None:
            assert proc.stdin is not None
            proc.stdin.write((json.dumps(message) + "\n").encode())
            proc.stdin.flush()

        def receive() -> dict[str, Any]:
            assert proc.stdout is not None
            return json.loads(proc.stdout.readline())

        send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}}})
        assert receive()["result"]["serverInfo"]["name"] == "callgate"
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        send({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
              "params": {"name": "spawn", "arguments": {}}})
        reply = receive()
        assert reply["id"] == 2 and reply["result"]["isError"] is False
        [child] = spawned(marker)
        assert alive(child)

        started = time.monotonic()
        proc.send_signal(signum)  # stdin stays open: the server must not wait for it
        assert proc.wait(timeout=15) == 0
        assert time.monotonic() - started < 10
        assert marker.exists()
        assert wait_dead(child)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


# --- the callgate serve command -----------------------------------------------------------


def callgate(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "callgate_cli", *args], capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL)


def test_serve_is_a_callgate_command() -> None:
    proc = callgate("--help")
    assert proc.returncode == 0 and "serve" in proc.stdout
    proc = callgate("serve", "--help")
    assert proc.returncode == 0
    for option in ("--workspace", "--config", "--surface", "{lean,full}"):
        assert option in proc.stdout


def test_serve_refuses_a_missing_workspace_or_a_bad_config(tmp_path: Path) -> None:
    proc = callgate("serve", "--workspace", str(tmp_path / "nope"))
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"callgate: workspace {tmp_path / 'nope'} is not a directory"

    bad = tmp_path / "callgate.toml"
    bad.write_text('[permissions]\nmode = "sometimes"\n')
    proc = callgate("serve", "--workspace", str(tmp_path), "--config", str(bad))
    assert proc.returncode == 2
    assert str(bad) in proc.stderr and "permissions.mode" in proc.stderr
    assert ":2" in proc.stderr  # the line of the bad key

    proc = callgate("serve", "--workspace", str(tmp_path), "--surface", "tiny")
    assert proc.returncode == 2 and "invalid choice" in proc.stderr


def test_serve_answers_initialize_and_lists_the_installed_surface(ws: Path) -> None:
    """The real command, with whatever plugins are installed (word_count at least)."""
    async def scenario() -> list[types.Tool]:
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "callgate_cli", "serve", "--workspace", str(ws), "--surface", "full"],
            env=child_env(CALLGATE_LOAD_PLUGINS="word_count"))
        async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            tools = (await client.list_tools()).tools
            r = await client.call_tool("word_count", {"path": "a.txt"})
            assert (r.is_error, text_of(r)) == (False, "2")
            return tools

    tools = run(scenario)
    assert [t.name for t in tools] == ["word_count"]
    assert tools[0].annotations is not None and tools[0].annotations.read_only_hint is True
