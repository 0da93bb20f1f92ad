"""The ``examples/configs`` files: each boots cleanly and behaves as its comments promise."""

from __future__ import annotations

import os
import sys
from typing import Any

import pytest
from callgate import Decision, Host, hookimpl

from .conftest import EXAMPLES

CONFIGS = EXAMPLES / "configs"


class ApproveAll:
    """An integrator's approver that says yes to every ask (and remembers what it saw)."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    @hookimpl
    def callgate_ask_permission(self, call: Any, tool: Any, session: Any,
                                preview: Any) -> Decision:
        self.asked.append(call.name)
        return Decision("allow", reason="approved by the test")


@pytest.mark.parametrize("name", ["locked-down.toml", "local-dev.toml", "mcp-servers.toml"])
def test_every_example_config_boots_without_a_warning(name: str) -> None:
    host = Host.boot(CONFIGS / name, os="posix")
    assert host.warnings == []


def test_the_set_of_example_configs() -> None:
    assert sorted(p.name for p in CONFIGS.iterdir()) == [
        "local-dev.toml", "locked-down.toml", "mcp-servers.toml"]


def _session(callgate_session: Any, name: str, plugins: list[Any] | None = None) -> Any:
    return callgate_session(plugins or [], config=CONFIGS / name, entrypoints=True,
                            surface=None, os_name="posix", files={"a.txt": "alpha\n"})


def test_locked_down_reads_freely_and_asks_for_every_change(callgate_session: Any) -> None:
    s = _session(callgate_session, "locked-down.toml")
    assert s.host.surface_mode == "lean" and s.session.mode == "default"
    assert not s.call("read_file", {"path": "a.txt"}).is_error

    before = s.snapshot()
    s.expect_error("write_file", {"path": "new.txt", "content": "x"}, kind="blocked",
                   signature="mode:ask", contains="no approver")
    s.assert_unchanged(before)

    r = s.call("bash", {"command": "ls"})  # an allow rule: runs without asking
    assert r.error is None or r.error.kind != "blocked", r.text
    s.expect_error("bash", {"command": "ls && rm a.txt"}, kind="blocked",  # one segment
                   signature="deny:Bash(rm:*)")
    s.assert_unchanged(before)
    s.expect_error("bash", {"command": "sleep 5", "run_in_background": True}, kind="blocked",
                   signature="mode:ask")  # nobody can answer


def test_locked_down_with_an_approver_still_enforces_its_deny_list(callgate_session: Any) -> None:
    approver = ApproveAll()
    s = _session(callgate_session, "locked-down.toml", [approver])
    s.expect_ok("write_file", {"path": "new.txt", "content": "x"})
    assert s.path("new.txt").read_text() == "x"
    s.expect_error("bash", {"command": "rm a.txt"}, kind="blocked", signature="deny:Bash(rm:*)")
    assert s.path("a.txt").exists()
    s.expect_error("bash", {"command": "sleep 5", "run_in_background": True},
                   kind="tool_error", contains="background jobs are not available")
    assert approver.asked == ["write_file", "bash"]


def test_local_dev_runs_everything_but_asks_before_a_push(callgate_session: Any) -> None:
    s = _session(callgate_session, "local-dev.toml")
    assert s.host.surface_mode == "full"
    s.expect_ok("write_file", {"path": "new.txt", "content": "x"})
    s.expect_ok("grep", {"pattern": "alpha"}, contains="a.txt")  # full surface: no proxy
    s.expect_error("bash", {"command": "git push origin main"}, kind="blocked",
                   signature="ask:Bash(git push:*)")
    s.expect_error("bash", {"command": "git push --force origin main"}, kind="blocked",
                   signature="deny:Bash(git push --force:*)")


def test_mcp_servers_config_reaches_a_real_server(callgate_session: Any,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    # the example names the servers' console scripts; here they live beside this python
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable) + os.pathsep
                       + os.environ.get("PATH", ""))
    s = _session(callgate_session, "mcp-servers.toml")
    r = s.call("use_capability", {"action": "list"})
    assert not r.is_error, r.text
    assert '"mcp-server:git"' in r.text and '"mcp-server:time"' in r.text

    r = s.call("use_capability", {"action": "call", "capability_id": "mcp-server:time"})
    assert not r.is_error, r.text  # the connect is allowed by rule: no approver needed
    r = s.call("use_capability", {"action": "call",
                                  "capability_id": "mcp-tool:time/get_current_time",
                                  "arguments": {"timezone": "UTC"}})
    assert not r.is_error, r.text
    assert "UTC" in r.text

    r = s.call("use_capability", {"action": "call", "capability_id": "mcp-server:git"})
    assert r.error is not None and r.error.signature == "ask:mcp_connect__git"
