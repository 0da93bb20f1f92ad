"""Provider-native renderings (issue 32) through the front door, ``callgate replay
--provider``: every native command round-trips, a denied and an invalid call come back in
the provider's shape, the output items parse as the installed SDKs' types, and the SDKs'
request param types accept every rendering."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import callgate_providers as providers
import pytest
from callgate import Host
from callgate_providers import native

anthropic = pytest.importorskip("anthropic")
openai = pytest.importorskip("openai")
pydantic = pytest.importorskip("pydantic")

PLUGINS = "files,shell,capability,search"
DENY_RM = ('[permissions]\ndeny = ["Bash(rm:*)", "Edit(secret/**)"]\n'
           'ask = ["Bash(touch:*)"]\n')


def replay(workspace: Path, provider: str, lines: list[Any]) -> list[dict[str, Any]]:
    transcript = workspace.parent / f"t{os.urandom(4).hex()}.jsonl"
    transcript.write_text("".join(json.dumps(line) + "\n" for line in lines))
    config = workspace.parent / "callgate.toml"
    config.write_text(DENY_RM)
    proc = subprocess.run(
        [sys.executable, "-m", "callgate_cli", "replay", str(transcript), "--workspace",
         str(workspace), "--provider", provider, "--config", str(config)],
        capture_output=True, text=True, timeout=120,
        env={**os.environ, "CALLGATE_LOAD_PLUGINS": PLUGINS})
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines()]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_bytes(b"alpha\r\nbeta\r\ngamma\r\n")
    (ws / "d").mkdir()
    (ws / "d" / "x.py").write_text("x = 1\n")
    (ws / "secret").mkdir()
    (ws / "secret" / "s.txt").write_text("keep\n")
    return ws


def _editor(call_id: str, **command: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": "str_replace_based_edit_tool",
            "input": command}


def test_anthropic_native_round_trips_every_command(workspace: Path) -> None:
    out = replay(workspace, "anthropic-native", [
        _editor("v1", command="view", path="a.txt"),
        _editor("v2", command="view", path="a.txt", view_range=[2, 2]),
        _editor("v3", command="view", path="d"),
        _editor("s1", command="str_replace", path="a.txt", old_str="beta", new_str="BETA"),
        _editor("i1", command="insert", path="a.txt", insert_line=0, new_str="first"),
        _editor("c1", command="create", path="new.txt", file_text="hello\n"),
        {"type": "tool_use", "id": "b1", "name": "bash", "input": {"command": "cat new.txt"}},
        {"type": "tool_use", "id": "b2", "name": "bash", "input": {"restart": True}},
        # a denied call, an invalid one and a stale edit, each in the provider's shape
        {"type": "tool_use", "id": "d1", "name": "bash", "input": {"command": "rm -f a.txt"}},
        _editor("d2", command="create", path="secret/s.txt", file_text="gone\n"),
        _editor("x1", command="str_replace", path="a.txt"),
        _editor("x2", command="undo_edit", path="a.txt"),
        {"type": "tool_use", "id": "x3", "name": "bash", "input": {"command": ""}},
    ])
    by_id = {r["tool_use_id"]: r for r in out}
    assert len(out) == 13
    blocks = [anthropic.types.ToolResultBlockParam(**r) for r in out]  # TypedDict: shape
    assert all(b["type"] == "tool_result" for b in blocks)
    adapter = pydantic.TypeAdapter(anthropic.types.ToolResultBlockParam)
    for r in out:
        adapter.validate_python(r)

    def text(i: str) -> str:
        return "\n".join(c["text"] for c in by_id[i].get("content", []))

    assert text("v1").startswith("1: alpha\n2: beta\n3: gamma")
    assert text("v2").startswith("2: beta") and "view_range [3, -1]" in text("v2")
    assert "x.py" in text("v3") and not by_id["v3"]["is_error"]
    assert not by_id["s1"]["is_error"] and not by_id["i1"]["is_error"]
    # CRLF kept by the editor's str_replace and insert
    assert (workspace / "a.txt").read_bytes() == b"first\r\nalpha\r\nBETA\r\ngamma\r\n"
    assert (workspace / "new.txt").read_text() == "hello\n"
    assert "hello" in text("b1") and not by_id["b1"]["is_error"]
    assert "no shell session to restart" in text("b2")
    assert by_id["d1"]["is_error"] and (workspace / "a.txt").exists()
    assert by_id["d2"]["is_error"]
    assert (workspace / "secret" / "s.txt").read_text() == "keep\n"
    assert by_id["x1"]["is_error"] and "old_str" in text("x1")
    assert by_id["x2"]["is_error"] and "undo_edit" in text("x2")
    assert by_id["x3"]["is_error"]


def test_anthropic_native_str_replace_of_an_unread_file_is_refused(workspace: Path) -> None:
    [r] = replay(workspace, "anthropic-native", [
        _editor("s1", command="str_replace", path="a.txt", old_str="beta", new_str="B")])
    assert r["is_error"] and (workspace / "a.txt").read_bytes().count(b"beta") == 1


def _patch(call_id: str, **operation: Any) -> dict[str, Any]:
    return {"type": "apply_patch_call", "call_id": call_id, "status": "completed",
            "operation": operation}


def test_openai_responses_native_round_trips(workspace: Path) -> None:
    out = replay(workspace, "openai-responses-native", [
        {"type": "function_call", "call_id": "r1", "name": "read_file",
         "arguments": json.dumps({"path": "a.txt", "offset": None, "limit": None,
                                  "intent": None, "cursor": None})},
        _patch("p1", type="update_file", path="a.txt", diff="@@\n alpha\n-beta\n+BETA\n gamma\n"),
        _patch("p2", type="create_file", path="n.txt", diff="+hello\n+world\n"),
        _patch("p3", type="update_file", path="n.txt", diff="@@\n-absent\n+x\n"),
        _patch("p4", type="delete_file", path="../outside.txt"),
        _patch("p5", type="create_file", path="secret/t.txt", diff="+no\n"),
        _patch("p6", type="rename_file", path="a.txt"),
        {"type": "shell_call", "call_id": "s1", "status": "completed",
         "action": {"commands": ["echo hi", "echo err >&2; exit 4"], "timeout_ms": 5000,
                    "max_output_length": 1000}},
        {"type": "shell_call", "call_id": "s2", "action": {"commands": ["rm -f a.txt"]}},
        {"type": "shell_call", "call_id": "s3", "action": {"commands": []}},
        # an ask with no one to answer it: refused, in the provider's shape
        {"type": "shell_call", "call_id": "s4", "action": {"commands": ["touch asked.txt"]}},
    ])
    by_id = {r["call_id"]: r for r in out}
    input_item = pydantic.TypeAdapter(openai.types.responses.ResponseInputItemParam)
    for r in out:
        input_item.validate_python(r)
    assert by_id["r1"]["type"] == "function_call_output" and "alpha" in by_id["r1"]["output"]
    assert by_id["p1"]["status"] == "completed"
    assert (workspace / "a.txt").read_bytes() == b"alpha\r\nBETA\r\ngamma\r\n"
    assert (workspace / "n.txt").read_text() == "hello\nworld\n"
    assert by_id["p3"]["status"] == "failed" and "hunk 1" in by_id["p3"]["output"]
    assert (workspace / "n.txt").read_text() == "hello\nworld\n"
    assert by_id["p4"]["status"] == "failed" and "outside" in by_id["p4"]["output"]
    assert by_id["p5"]["status"] == "failed" and not (workspace / "secret" / "t.txt").exists()
    assert by_id["p6"]["status"] == "failed" and "rename_file" in by_id["p6"]["output"]
    first, second = by_id["s1"]["output"]
    assert first == {"stdout": "hi", "stderr": "", "outcome": {"type": "exit", "exit_code": 0}}
    assert second["outcome"] == {"type": "exit", "exit_code": 4} and "err" in second["stdout"]
    [denied] = by_id["s2"]["output"]
    assert denied["stderr"] and denied["outcome"]["exit_code"] != 0
    assert (workspace / "a.txt").exists()
    assert by_id["s3"]["output"][0]["stderr"].startswith("shell_call: action.commands")
    [asked] = by_id["s4"]["output"]
    assert asked["stderr"] and asked["stdout"] == "" and asked["outcome"]["exit_code"] != 0
    assert not (workspace / "asked.txt").exists()


def test_freeform_apply_patch_on_chat_completions(workspace: Path) -> None:
    patch = "*** Begin Patch\n*** Add File: f.txt\n+made\n*** End Patch\n"
    [ok, bad] = replay(workspace, "openai-chat-freeform", [
        {"id": "c1", "type": "custom", "custom": {"name": "apply_patch", "input": patch}},
        {"id": "c2", "type": "custom", "custom": {"name": "apply_patch", "input": 7}},
    ])
    message = pydantic.TypeAdapter(openai.types.chat.ChatCompletionToolMessageParam)
    message.validate_python(ok)
    message.validate_python(bad)
    assert (workspace / "f.txt").read_text() == "made\n"
    assert "patch text" in bad["content"]


def _host() -> Host:
    return Host.boot({}, os="posix", entrypoints=PLUGINS.split(","))


def test_every_rendering_is_accepted_by_the_sdk_request_types() -> None:
    host = _host()
    anthropic_tools = providers.surface(host, "anthropic-native")
    assert {"type": "text_editor_20250728", "name": "str_replace_based_edit_tool"} in \
        anthropic_tools
    assert {"type": "bash_20250124", "name": "bash"} in anthropic_tools
    names = {t.get("name") for t in anthropic_tools}
    assert not names & {"read_file", "edit_file", "write_file", "insert_lines"}
    pydantic.TypeAdapter(list[anthropic.types.ToolUnionParam]).validate_python(anthropic_tools)

    responses_tools = providers.surface(host, "openai-responses-native")
    assert {"type": "apply_patch"} in responses_tools and {"type": "shell"} in responses_tools
    assert not {t.get("name") for t in responses_tools} & {"bash", "edit_file", "write_file"}
    pydantic.TypeAdapter(list[openai.types.responses.ToolParam]).validate_python(
        responses_tools)

    chat_tools = providers.surface(host, "openai-chat-freeform")
    [custom] = [t for t in chat_tools if t["type"] == "custom"]
    assert custom["custom"]["format"]["grammar"]["syntax"] == "lark"
    pydantic.TypeAdapter(list[openai.types.chat.ChatCompletionToolUnionParam]).validate_python(
        chat_tools)


def test_tools_cli_prints_the_native_rendering_exactly(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "callgate_cli", "tools", "--provider", "anthropic-native"],
        capture_output=True, text=True, timeout=120,
        env={**os.environ, "CALLGATE_LOAD_PLUGINS": PLUGINS})
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == providers.surface(_host(), "anthropic-native")


def test_rendering_for_picks_by_model_name() -> None:
    assert native.rendering_for("claude-sonnet-4-5-20250929") == "anthropic-native"
    assert native.rendering_for("claude-opus-4-1") == "anthropic-native"
    assert native.rendering_for("gpt-5.1-codex") == "openai-responses-native"
    assert native.rendering_for("openai/gpt-5.2") == "openai-responses-native"
    assert native.rendering_for("gpt-5-mini") == "openai-chat-freeform"
    assert native.rendering_for("gpt-4.1") is None
    assert native.rendering_for("claude-3-5-sonnet") is None
    for rendering in native.RENDERINGS.values():
        assert rendering.suits


def test_a_native_session_never_shows_what_the_user_hides(tmp_path: Path) -> None:
    host = Host.boot({"surface": {"hide": ["apply_patch"]}}, os="posix",
                     entrypoints=PLUGINS.split(","))
    ws = tmp_path / "w"
    ws.mkdir()

    async def opened() -> list[str]:
        async with host.open_session(ws, show=native.shows(host, "openai-responses-native")
                                     ) as session:
            return session.tool_names()

    import anyio

    assert "apply_patch" not in anyio.run(opened)


def test_declared_examples_are_valid_and_sent_as_anthropic_input_examples() -> None:
    """Tools declare examples where a model gets nested or optional arguments wrong; each
    one passes the tool's own validation, and the Anthropic renderings send them."""
    host = Host.boot({}, os="posix", surface="full", entrypoints=True)
    with_examples = {s.name: s for s in host.registry.tools() if s.examples}
    assert {"edit_file", "multi_edit", "apply_patch", "grep", "use_capability"} <= set(
        with_examples)
    for name, spec in with_examples.items():
        for example in spec.examples:
            errors = list(host.compiled(spec).validator.iter_errors(example))
            assert not errors, (name, example, errors)
    entries = {t["name"]: t for t in providers.surface(host, "anthropic")}
    assert entries["edit_file"]["input_examples"] == list(with_examples["edit_file"].examples)
    assert "input_examples" not in entries["read_file"]
    pydantic.TypeAdapter(list[anthropic.types.ToolParam]).validate_python(list(entries.values()))
    native_entries = {t["name"]: t for t in providers.surface(host, "anthropic-native")}
    assert "input_examples" in native_entries["grep"]  # a deferred tool keeps its examples


# --- native tool search ----------------------------------------------------------------------


def test_native_tool_search_defers_hidden_tools_and_answers_from_the_catalog(
        workspace: Path, callgate_session: Any) -> None:
    """Hidden tools go out deferred; tool_search runs callgate's catalog search and loads
    what it found (tool_reference blocks / tool_search_output definitions); the tools on
    the host's surface stay loaded ([surface] show pins one); use_capability is not sent;
    the session counts searched, found and called."""
    host = _host()
    anthropic_tools = providers.surface(host, "anthropic-native")
    by_name = {t.get("name"): t for t in anthropic_tools}
    assert "use_capability" not in by_name and by_name["tool_search"]["input_schema"]
    assert by_name["glob"]["defer_loading"] is True
    assert "defer_loading" not in by_name["bash"]
    pydantic.TypeAdapter(list[anthropic.types.ToolUnionParam]).validate_python(anthropic_tools)

    responses_tools = providers.surface(host, "openai-responses-native")
    assert {"type": "tool_search", "execution": "client"}.items() <= responses_tools[
        [t.get("name") or t["type"] for t in responses_tools].index("tool_search")].items()
    spaces = [t for t in responses_tools if t["type"] == "namespace"]
    assert spaces and all(1 <= len(n["tools"]) <= native.NAMESPACE_SIZE for n in spaces)
    assert all(f["defer_loading"] is True for n in spaces for f in n["tools"])
    pydantic.TypeAdapter(list[openai.types.responses.ToolParam]).validate_python(
        responses_tools)

    pinned = Host.boot({"surface": {"show": ["glob"]}}, os="posix",
                       entrypoints=PLUGINS.split(","))
    glob_entry = next(t for t in providers.surface(pinned, "anthropic-native")
                      if t.get("name") == "glob")
    assert "defer_loading" not in glob_entry

    s = callgate_session(workspace=workspace, entrypoints=PLUGINS.split(","), surface="lean",
                         os_name="posix", provider="anthropic-native")
    [found, ran, bad] = s.sync.run_items("anthropic-native", [
        {"type": "tool_use", "id": "q", "name": "tool_search",
         "input": {"query": "find files by glob pattern"}},
        {"type": "tool_use", "id": "g", "name": "glob", "input": {"pattern": "*.txt"}},
        {"type": "tool_use", "id": "e", "name": "tool_search", "input": {"limit": 2}},
    ])
    assert {"type": "tool_reference", "tool_name": "glob"} in found["content"]
    assert all(b["tool_name"] in native.deferred(s.session, "anthropic-native")
               for b in found["content"])
    adapter = pydantic.TypeAdapter(anthropic.types.ToolResultBlockParam)
    for block in (found, ran, bad):
        adapter.validate_python(block)
    assert "a.txt" in ran["content"][0]["text"] and bad["is_error"]
    counters = s.session.counters()
    assert counters["tool_search_searched"] == 2
    assert counters["tool_search_found"] == len(found["content"])
    assert counters["tool_search_called"] == 1

    s2 = callgate_session(workspace=workspace, entrypoints=PLUGINS.split(","),
                          surface="lean", os_name="posix", provider="openai-responses-native")
    [output] = s2.sync.run_items("openai-responses-native", [
        {"type": "tool_search_call", "call_id": "q", "execution": "client",
         "arguments": {"query": "search file contents with a regular expression"}}])
    pydantic.TypeAdapter(openai.types.responses.ResponseInputItemParam).validate_python(output)
    assert "grep" in [t["name"] for t in output["tools"]]
    assert all(t["defer_loading"] for t in output["tools"])


def test_plain_renderings_keep_use_capability(workspace: Path) -> None:
    for provider in ("anthropic", "openai-responses", "openai-chat-freeform"):
        names = {t.get("name") or t.get("function", {}).get("name")
                 for t in providers.surface(_host(), provider)}
        assert "use_capability" in names and "tool_search" not in names


def test_the_session_records_the_native_item_with_its_canonical_calls(
        workspace: Path, callgate_session: Any) -> None:
    s = callgate_session(workspace=workspace, entrypoints=PLUGINS.split(","), surface="lean",
                         os_name="posix", provider="openai-responses-native")
    item = {"type": "shell_call", "call_id": "sh1",
            "action": {"commands": ["echo one", "echo two"]}}
    s.sync.run_items("openai-responses-native", [item])
    record = s.session.storage.get(native.RECORD_NAMESPACE, "sh1")
    assert record == {"provider": "openai-responses-native", "item": item,
                      "calls": [{"id": "sh1#1", "tool": "bash"}, {"id": "sh1#2", "tool": "bash"}]}
    s.session.flush()
    store = s.session.store
    assert store is not None  # recorded in the session store, not only in memory
    assert {(c.call_id, c.name) for c in store.calls(s.session.id)} >= {
        ("sh1#1", "bash"), ("sh1#2", "bash")}
    assert store.state(s.session.id)[(native.RECORD_NAMESPACE, "sh1")] == record
