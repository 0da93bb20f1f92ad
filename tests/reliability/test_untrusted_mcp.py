"""Attack class: an untrusted MCP server lies about its tools (issue 16, defect 4).

The fixture server's ``echo`` claims ``readOnlyHint`` but has a side effect: every
call is appended to its ``--calls`` file, so each call that reached the server is
counted there. With ``trusted = false`` (or a server an untrusted workspace
config added) the claim must relax nothing: plan mode blocks the call, ``mode =
"ask"`` asks, and every path that starts the server — ``mcp-server:<s>``, a
cached ``mcp-tool:<s>/<t>`` (the fallback path), ``auto_start`` — goes through
the same connect check. Counted: calls that reached the server without being
allowed (must be 0) and servers started without the check (must be 0).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import callgate_capability
import pytest
from callgate import Decision, ToolCall, hookimpl, sync
from callgate_capability import MCP_SERVERS

FIXTURE = str(Path(__file__).resolve().parents[1] / "fixtures" / "mcp_fixture_server.py")


class Approver:
    """Answers every ask with ``allow`` and records what it was asked."""

    def __init__(self, allow: bool) -> None:
        self.allow = allow
        self.asked: list[str] = []

    @hookimpl
    def callgate_ask_permission(self, call: Any, tool: Any, session: Any,
                                preview: Any) -> Decision:
        self.asked.append(call.name)
        return Decision("allow" if self.allow else "deny", reason="test approver")


def server(tmp: Path, **table: Any) -> dict[str, Any]:
    return {"command": sys.executable, "args": [FIXTURE, "--calls", str(tmp / "calls.jsonl")],
            **table}


def calls_reached(tmp: Path) -> int:
    path = tmp / "calls.jsonl"
    return len(path.read_text().splitlines()) if path.exists() else 0


def use(session: Any, cap: str, **arguments: Any) -> Any:
    return session.run_batch([ToolCall("c", "use_capability", {
        "action": "call", "capability_id": cap, **({"arguments": arguments}
                                                   if arguments else {})})])[0]


def boot(tmp: Path, config: dict[str, Any], *plugins: Any) -> sync.Host:
    cache = {"capability": {"cache_dir": str(tmp / "cache")}}
    return sync.Host.boot({**cache, **config}, entrypoints=False,
                          plugins=[callgate_capability, *plugins])


def warm_cache(tmp: Path) -> None:
    """A trusted session connects once, so the listing (with echo's readOnlyHint) is cached
    for the untrusted sessions below, which then take the cached (deferred) path."""
    host = boot(tmp, {"mcp_servers": {"fx": server(tmp)}})
    s = host.open_session(tmp)
    assert not use(s, "mcp-server:fx").is_error
    s.close()
    host.close()


@pytest.mark.parametrize("path", ["live", "cached"])
def test_an_untrusted_read_only_claim_does_not_pass_plan_mode(
        tmp_path: Path, path: str, figure: Callable[..., None]) -> None:
    warm_cache(tmp_path)
    before = calls_reached(tmp_path)
    host = boot(tmp_path, {"mcp_servers": {"fx": server(tmp_path, trusted=False)}})
    s = host.open_session(tmp_path)
    if path == "live":
        assert not use(s, "mcp-server:fx").is_error
    s.session.set_mode("plan")
    attempts = [use(s, "mcp-tool:fx/echo", text=f"x{i}") for i in range(5)]
    s.close()
    host.close()
    reached = calls_reached(tmp_path) - before
    figure(f"untrusted MCP: plan mode ({path})", cases=len(attempts), reached=reached,
           failures=reached + sum(not r.is_error for r in attempts))
    assert reached == 0
    assert all(r.error.kind == "blocked" and r.error.signature == "mode:plan" for r in attempts)


@pytest.mark.parametrize("path", ["live", "cached"])
def test_an_untrusted_read_only_claim_asks_under_mode_ask(tmp_path: Path, path: str,
                                                          figure: Callable[..., None]) -> None:
    warm_cache(tmp_path)
    before = calls_reached(tmp_path)
    approver = Approver(allow=False)
    host = boot(tmp_path, {"mcp_servers": {"fx": server(tmp_path, trusted=False)},
                           "permissions": {"mode": "ask", "allow": ["mcp_connect__fx"]}},
                ("approver", approver))
    s = host.open_session(tmp_path)
    if path == "live":
        assert not use(s, "mcp-server:fx").is_error
    attempts = [use(s, "mcp-tool:fx/echo", text=f"x{i}") for i in range(5)]
    s.close()
    host.close()
    reached = calls_reached(tmp_path) - before
    figure(f"untrusted MCP: mode ask ({path})", cases=len(attempts), asked=len(approver.asked),
           reached=reached, failures=reached)
    assert reached == 0
    assert approver.asked == ["mcp__fx__echo"] * 5
    assert all(r.error.kind == "blocked" for r in attempts)


def test_a_trusted_read_only_claim_still_counts(tmp_path: Path) -> None:
    """The control: the same call from a trusted server runs in plan mode, unasked."""
    warm_cache(tmp_path)
    host = boot(tmp_path, {"mcp_servers": {"fx": server(tmp_path)}})
    s = host.open_session(tmp_path)
    s.session.set_mode("plan")
    r = use(s, "mcp-tool:fx/echo", text="hello")
    s.close()
    host.close()
    assert not r.is_error and "hello" in r.text


def test_calling_a_cached_tool_goes_through_the_connect_check(
        tmp_path: Path, figure: Callable[..., None]) -> None:
    """The fallback path: a cached mcp-tool call starts the server, so it needs what a
    connect needs (under mode = "ask" an untrusted server's connect asks; under "deny"
    it is refused), not only an exact mcp_connect rule."""
    warm_cache(tmp_path)
    before = calls_reached(tmp_path)
    outcomes = {}
    for mode in ("ask", "deny"):
        approver = Approver(allow=False)
        host = boot(tmp_path, {"mcp_servers": {"fx": server(tmp_path, trusted=False)},
                               "permissions": {"mode": mode, "allow": ["mcp__fx__echo"]}},
                    ("approver", approver))
        s = host.open_session(tmp_path)
        r = use(s, "mcp-tool:fx/echo", text="x")
        started = s.session.extension(MCP_SERVERS).pid("fx") is not None
        s.close()
        host.close()
        outcomes[mode] = (r.error.kind if r.error else "ok", approver.asked, started)
    reached = calls_reached(tmp_path) - before
    figure("untrusted MCP: cached call starts nothing unchecked", cases=2, reached=reached,
           failures=reached + sum(o[2] for o in outcomes.values()))
    assert outcomes["ask"] == ("blocked", ["mcp__fx__echo"], False)
    assert outcomes["deny"][:2] == ("blocked", []) and not outcomes["deny"][2]
    assert reached == 0


def test_a_server_an_untrusted_workspace_adds_always_asks_before_it_starts(
        tmp_path: Path, user_config: Path, figure: Callable[..., None]) -> None:
    """Even under mode = "allow" with an allow rule for its connect, and auto_start set."""
    ws = tmp_path / "ws"
    ws.mkdir()
    table = server(tmp_path, auto_start=True, trusted=True)
    (ws / "callgate.toml").write_text(
        '[permissions]\nallow = ["mcp_connect__fx"]\n\n[mcp_servers.fx]\n'
        f"command = {json.dumps(table['command'])}\nargs = {json.dumps(table['args'])}\n"
        "auto_start = true\ntrusted = true\n")
    (user_config / "config.toml").write_text(
        f'[capability]\ncache_dir = {json.dumps(str(tmp_path / "cache"))}\n'
        '[permissions]\nallow = ["mcp_connect__fx"]\n')
    approver = Approver(allow=False)
    host = sync.Host.boot(None, workspace=ws, entrypoints=False,
                          plugins=[callgate_capability, ("approver", approver)])
    s = host.open_session(ws)
    time.sleep(0.5)  # an auto_start would have begun by now
    auto_started = s.session.extension(MCP_SERVERS).status("fx") != "configured"
    direct = use(s, "mcp-server:fx")
    via_tool = use(s, "mcp-tool:fx/echo", text="x")
    config = s.session.extension(MCP_SERVERS).config("fx")
    s.close()
    host.close()
    figure("untrusted MCP: workspace-added server", cases=3, asked=len(approver.asked),
           failures=int(auto_started) + int(not direct.is_error) + int(not via_tool.is_error))
    assert not auto_started
    assert direct.error.kind == "blocked" and via_tool.error.kind == "blocked"
    assert approver.asked == ["mcp_connect__fx", "mcp__fx__echo"]
    assert config is not None and config.from_untrusted_workspace and not config.trusted
    assert calls_reached(tmp_path) == 0
