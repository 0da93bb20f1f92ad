"""callgate as a full host of the MCP servers it starts (issue 34, item 5), for an integrator:
the capability plugin's hooks (``callgate_capability.hookspecs``) receive what a server asks
while a call runs, in that call's context, and its log messages; without a sampler,
sampling is neither declared nor relayed. The server is a real stdio child built with the
SDK's ``MCPServer``.
"""

from __future__ import annotations

import contextvars
import json
import sys
import time
from pathlib import Path
from typing import Any

import callgate_capability
from callgate import hookimpl

FIXTURE = str(Path(__file__).resolve().parents[2] / "fixtures" / "mcp_host_fixture_server.py")
WHO = contextvars.ContextVar("who", default="nobody")


class Integrator:
    """Answers the server's requests; records the context each one arrived in."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, str, dict[str, Any]]] = []
        self.logs: list[tuple[str, dict[str, Any]]] = []

    @hookimpl
    def callgate_mcp_elicit(self, session: Any, server: str,
                            request: dict[str, Any]) -> dict[str, Any]:
        self.asked.append(("elicit", WHO.get(), request))
        return {"action": "accept", "content": {"answer": f"from {WHO.get()}"}}

    @hookimpl
    def callgate_mcp_sample(self, session: Any, server: str,
                            request: dict[str, Any]) -> dict[str, Any]:
        self.asked.append(("sample", WHO.get(), request))
        return {"role": "assistant", "model": "integrator-model",
                "content": {"type": "text", "text": "sampled by the integrator"}}

    @hookimpl
    def callgate_mcp_log(self, session: Any, server: str, message: dict[str, Any]) -> None:
        self.logs.append((server, message))


def _call(tool: str, **arguments: Any) -> dict[str, Any]:
    return {"id": f"c-{tool}", "name": "use_capability", "arguments": {
        "action": "call", "capability_id": f"mcp-tool:host/{tool}", "arguments": arguments}}


TABLES = {"mcp_servers": {"host": {"command": sys.executable, "args": [FIXTURE]}},
          "permissions": {"allow": ["use_capability"]}}


def test_an_integrators_hooks_answer_the_server_in_the_calls_context(callgate_session) -> None:
    integrator = Integrator()
    s = callgate_session(plugins=[callgate_capability, integrator], config=TABLES)
    WHO.set("the caller")  # the integrator's context of the call
    [caps] = s.run(_call("capabilities"))
    assert json.loads(caps.text) == {"elicitation": True, "sampling": True, "roots": True}
    [asked] = s.run(_call("ask_user", question="Name?"))
    assert asked.text == "accepted: from the caller"
    [sampled] = s.run(_call("sample", prompt="hello"))
    assert sampled.text == "sampled: sampled by the integrator"
    [logged] = s.run(_call("chatty"))
    assert logged.text == "logged"
    kinds = [(kind, who) for kind, who, _ in integrator.asked]
    assert kinds == [("elicit", "the caller"), ("sample", "the caller")]
    assert integrator.asked[0][2]["message"] == "Name?"
    # log notifications are relayed as they come, all before the call's answer
    assert [m["level"] for _, m in integrator.logs] == ["info", "warning", "error"]
    assert {server for server, _ in integrator.logs} == {"host"}


def test_without_hooks_the_server_is_refused_and_sampling_not_declared(
        callgate_session) -> None:
    s = callgate_session(plugins=[callgate_capability], config=TABLES)
    [caps] = s.run(_call("capabilities"))
    assert json.loads(caps.text) == {"elicitation": True, "sampling": False, "roots": True}
    [asked] = s.run(_call("ask_user", question="Name?"))
    assert asked.text.startswith("elicitation failed") and "cannot ask the user" in asked.text
    [sampled] = s.run(_call("sample", prompt="hello"))
    assert sampled.text.startswith("sampling failed")
    [roots] = s.run(_call("roots"))
    assert json.loads(roots.text) == [Path(s.session.workspace.root).as_uri()]


class SlowLogs(Integrator):
    """Takes its time with each log message, as a relay to a busy client may."""

    @hookimpl
    def callgate_mcp_log(self, session: Any, server: str, message: dict[str, Any]) -> None:
        time.sleep(0.3)
        self.logs.append((server, message))


def test_what_a_server_logs_before_answering_is_relayed_before_the_answer(
        callgate_session) -> None:
    """The server logs three messages, then answers: the call's answer reaches the caller
    only once the three have been relayed (through ``callgate serve`` they are
    notifications on the call's own stream, which ends with the answer), however slowly
    the relay takes them."""
    integrator = SlowLogs()
    s = callgate_session(plugins=[callgate_capability, integrator], config=TABLES)
    [logged] = s.run(_call("chatty"))
    assert logged.text == "logged"
    assert [m["level"] for _, m in integrator.logs] == ["info", "warning", "error"]
