"""The agent-loop examples, driven by the SCRIPTED FAKE MODEL (``examples/scripted_model.py``).

The fake clients return the providers' own SDK types, and every request the loop
sends is checked against the SDK's own message types, so the loops are what the
real clients would see. With an API key in the environment, one short real run
per provider is added.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import agent_loop_anthropic
import agent_loop_openai
import callgate_providers as providers
import pytest
from pydantic import TypeAdapter
from scripted_model import SCRIPT, ScriptedAnthropic, ScriptedOpenAI

from .conftest import EXAMPLES


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    return shutil.copytree(EXAMPLES / "workspace", tmp_path / "workspace")


def open_session(callgate_session: Any, demo: Path) -> Any:
    return callgate_session(workspace=demo, entrypoints=True, surface="lean", os_name="posix")


FRIENDLY = 'return f"Hello, {name}! Nice to see you."'


def test_openai_loop_runs_the_script_through_the_pipeline(callgate_session: Any,
                                                          demo: Path) -> None:
    from openai.types.chat import ChatCompletionMessageParam

    s = open_session(callgate_session, demo)
    client, lines = ScriptedOpenAI(), []
    answer = agent_loop_openai.agent_loop(client, "scripted", s.sync, "be friendlier",
                                          log=lines.append)
    assert answer == SCRIPT[-1]
    assert FRIENDLY in (demo / "src" / "greet.py").read_text()
    assert len(client.requests) == len(SCRIPT)

    first = client.requests[0]
    assert first["tools"] == providers.surface(s.session, "openai-chat")
    assert [m["role"] for m in first["messages"]] == ["system", "user"]

    # turn 1 was invalid: one tool message, not executed, answering call_1_0
    [tool_msg] = client.requests[1]["messages"][3:]
    assert tool_msg["role"] == "tool" and tool_msg["tool_call_id"] == "call_1_0"
    assert "not executed" in tool_msg["content"] and "file_path" in tool_msg["content"]
    # turn 2 had two calls: two tool messages, in call order
    replies = client.requests[2]["messages"][5:]
    assert [m["tool_call_id"] for m in replies] == ["call_2_0", "call_2_1"]
    assert "1→TODO: make greet() friendlier" in replies[0]["content"]
    # the bash run saw the edit
    final = client.requests[4]["messages"][-1]["content"]
    assert "Hello, world! Nice to see you." in final and "[exit code 0]" in final

    adapter = TypeAdapter(list[ChatCompletionMessageParam])
    for request in client.requests:
        adapter.validate_python(request["messages"])
    assert [line.split(":")[0].strip() for line in lines] == [
        "read_file", "read_file", "read_file", "edit_file", "bash"]
    assert "ERROR" in lines[0] and "ERROR" not in "".join(lines[1:])


def test_anthropic_loop_runs_the_script_through_the_pipeline(callgate_session: Any,
                                                             demo: Path) -> None:
    from anthropic.types import MessageParam

    s = open_session(callgate_session, demo)
    client = ScriptedAnthropic()
    answer = agent_loop_anthropic.agent_loop(client, "scripted", s.sync, "be friendlier",
                                             log=lambda _: None)
    assert answer == SCRIPT[-1]
    assert FRIENDLY in (demo / "src" / "greet.py").read_text()
    assert client.requests[0]["tools"] == providers.surface(s.session, "anthropic")
    assert client.requests[0]["system"] == agent_loop_anthropic.SYSTEM

    results = client.requests[1]["messages"][-1]
    assert results["role"] == "user"
    [block] = results["content"]
    assert block["type"] == "tool_result" and block["tool_use_id"] == "toolu_1_0"
    assert block["is_error"] is True and "not executed" in block["content"][0]["text"]
    both = client.requests[2]["messages"][-1]["content"]
    assert [b["tool_use_id"] for b in both] == ["toolu_2_0", "toolu_2_1"]
    assert [b["is_error"] for b in both] == [False, False]
    # every assistant tool_use is answered by exactly one tool_result in the next user message
    messages = client.requests[-1]["messages"]
    for asked, answered in zip(messages[1::2], messages[2::2], strict=False):
        uses = [b.id for b in asked["content"] if b.type == "tool_use"]
        assert uses == [b["tool_use_id"] for b in answered["content"]]

    adapter = TypeAdapter(list[MessageParam])
    for request in client.requests:
        adapter.validate_python(request["messages"])


def test_a_tool_that_is_not_on_the_surface_is_reported_not_run(callgate_session: Any,
                                                               demo: Path) -> None:
    """Lean surface: grep is hidden, so a direct call is refused and the model is told how."""
    s = open_session(callgate_session, demo)
    client = ScriptedOpenAI([[("grep", {"pattern": "TODO"})], "ok"])
    agent_loop_openai.agent_loop(client, "scripted", s.sync, "find TODOs", log=lambda _: None)
    [reply] = client.requests[1]["messages"][3:]
    assert 'use_capability with capability_id "tool:grep"' in reply["content"]


def _run_example(script: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")}
    return subprocess.run([sys.executable, str(EXAMPLES / script)], capture_output=True,
                          text=True, timeout=120, env=env, cwd=tmp_path)


@pytest.mark.parametrize("script", ["agent_loop_openai.py", "agent_loop_anthropic.py"])
def test_examples_run_offline_and_leave_the_repository_alone(script: str,
                                                             tmp_path: Path) -> None:
    before = {p: p.read_bytes() for p in (EXAMPLES / "workspace").rglob("*") if p.is_file()}
    proc = _run_example(script, tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.splitlines()
    assert out[0].startswith("[no ") and "SCRIPTED FAKE MODEL" in out[0]
    assert out[-1] == SCRIPT[-1]
    assert any(line.strip().startswith("bash:") and "Nice to see you" in line for line in out)
    after = {p: p.read_bytes() for p in (EXAMPLES / "workspace").rglob("*") if p.is_file()}
    assert after == before


@pytest.mark.skipif(not os.environ.get("OPENAI_API_KEY"), reason="OPENAI_API_KEY is not set")
def test_openai_loop_with_the_real_client(callgate_session: Any, demo: Path) -> None:
    from openai import OpenAI

    s = open_session(callgate_session, demo)
    answer = agent_loop_openai.agent_loop(
        OpenAI(), os.environ.get("OPENAI_MODEL", "gpt-4.1-mini"), s.sync,
        "Read notes.txt and tell me how many TODO lines it has. Do not change anything.",
        log=lambda _: None)
    assert "2" in answer or "two" in answer.lower()


@pytest.mark.skipif(not os.environ.get("ANTHROPIC_API_KEY"), reason="ANTHROPIC_API_KEY is not set")
def test_anthropic_loop_with_the_real_client(callgate_session: Any, demo: Path) -> None:
    from anthropic import Anthropic

    s = open_session(callgate_session, demo)
    answer = agent_loop_anthropic.agent_loop(
        Anthropic(), os.environ.get("ANTHROPIC_MODEL", "claude-sonnet-4-5"), s.sync,
        "Read notes.txt and tell me how many TODO lines it has. Do not change anything.",
        log=lambda _: None)
    assert "2" in answer or "two" in answer.lower()


def test_anthropic_native_loop_speaks_claudes_tool_shapes(callgate_session: Any,
                                                          demo: Path) -> None:
    import agent_loop_anthropic_native as loop
    from anthropic.types import MessageParam, ToolUnionParam
    from scripted_model import NATIVE_ANTHROPIC_SCRIPT

    s = callgate_session(workspace=demo, entrypoints=True, surface="lean", os_name="posix",
                         provider=loop.RENDERING)
    client = ScriptedAnthropic(NATIVE_ANTHROPIC_SCRIPT)
    answer = loop.agent_loop(client, "scripted", s.sync, "be friendlier", log=lambda _: None)
    assert answer == NATIVE_ANTHROPIC_SCRIPT[-1]
    assert FRIENDLY in (demo / "src" / "greet.py").read_text()
    tools = client.requests[0]["tools"]
    assert {"type": "text_editor_20250728", "name": "str_replace_based_edit_tool"} in tools
    assert {"type": "bash_20250124", "name": "bash"} in tools
    TypeAdapter(list[ToolUnionParam]).validate_python(tools)
    messages = client.requests[-1]["messages"]
    results = [m["content"] for m in messages[2::2]]
    assert "greet.py" in results[0][0]["content"][0]["text"]  # a directory view lists it
    assert results[1][0]["content"][0]["text"].startswith('1: """A tiny module')
    assert results[2][0]["is_error"] and "new_str" in results[2][0]["content"][0]["text"]
    assert "Nice to see you" in results[4][0]["content"][0]["text"]
    adapter = TypeAdapter(MessageParam)
    for message in messages[2::2]:
        adapter.validate_python(message)


def test_openai_native_loop_speaks_gpt_tool_shapes(callgate_session: Any, demo: Path) -> None:
    import agent_loop_openai_native as loop
    from openai.types.responses import ResponseInputItemParam, ToolParam
    from scripted_model import NATIVE_OPENAI_SCRIPT, ScriptedOpenAIResponses

    s = callgate_session(workspace=demo, entrypoints=True, surface="lean", os_name="posix",
                         provider=loop.RENDERING)
    client = ScriptedOpenAIResponses(list(NATIVE_OPENAI_SCRIPT))
    answer = loop.agent_loop(client, "scripted", s.sync, "be friendlier", log=lambda _: None)
    assert answer == NATIVE_OPENAI_SCRIPT[-1]
    assert FRIENDLY in (demo / "src" / "greet.py").read_text()
    tools = client.requests[0]["tools"]
    assert {"type": "apply_patch"} in tools and {"type": "shell"} in tools
    TypeAdapter(list[ToolParam]).validate_python(tools)
    items = client.requests[-1]["input"]
    TypeAdapter(list[ResponseInputItemParam]).validate_python(items)
    outputs = {i["call_id"]: i for i in items if i.get("type", "").endswith("_output")}
    assert outputs["call_p1"]["status"] == "failed"  # stale: greet.py was not read yet
    assert outputs["call_p2"]["status"] == "completed"
    [run] = outputs["call_s2"]["output"]
    assert run["outcome"] == {"type": "exit", "exit_code": 0}
    assert "Nice to see you" in run["stdout"]
