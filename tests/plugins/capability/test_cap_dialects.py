"""MCP input schemas in the dialect they declare, and schemas that must not hurt the host.

Through ``callgate replay`` (the front door of issue 25 item 4 and issue 16 defect 11):
a fixture MCP server offers tools whose schemas are draft-07, draft-04 and 2019-09, one
with a catastrophic ``pattern`` and one whose ``$ref`` points at a live HTTP server. Only
valid calls reach the server; the remote reference is a configuration error and is never
fetched; the pattern costs its time budget, not minutes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pytest_httpserver import HTTPServer

from tests.plugins.capability.helpers import FIXTURE, calls_of


def _call(call_id: str, tool: str, arguments: dict) -> dict:
    return {"id": call_id, "name": "use_capability",
            "arguments": {"action": "call", "capability_id": f"mcp-tool:fx/{tool}",
                          "arguments": arguments}}


EVIL = "a" * 40 + "b"
CALLS = [
    _call("t-ok", "tuple07", {"point": [1, 2]}),
    _call("t-long", "tuple07", {"point": [1, 2, 3]}),
    _call("t-type", "tuple07", {"point": [1, "x"]}),
    _call("l-zero", "legacy04", {"count": 0}),
    _call("l-one", "legacy04", {"count": 1}),
    _call("d-alone", "dep2019", {"user": "u"}),
    _call("d-both", "dep2019", {"user": "u", "password": "p"}),
    _call("d-extra", "dep2019", {"user": "u", "password": "p", "role": "admin"}),
    _call("remote", "remote_ref", {"thing": 1}),
    {"id": "inspect", "name": "use_capability",
     "arguments": {"action": "inspect", "capability_id": "mcp-tool:fx/remote_ref"}},
    _call("alternation", "backtrack", {"word": EVIL}),
    _call("nested", "backtrack", {"plain": EVIL}),
    _call("fine", "backtrack", {"word": "aaaa", "plain": "aa"}),
]


@pytest.fixture(scope="module")
def replayed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """One replay of `CALLS` (a server start costs seconds); what it printed and sent."""
    tmp_path = tmp_path_factory.mktemp("dialects")
    server = HTTPServer()
    server.expect_request("/thing.json").respond_with_json({"type": "integer"})
    server.start()
    try:
        out, elapsed = _replay(tmp_path, server.url_for("/thing.json"), CALLS)
        yield {"out": out, "elapsed": elapsed, "sent": calls_of(tmp_path),
               "fetched": list(server.log)}
    finally:
        server.clear()
        server.stop()


def _replay(tmp_path: Path, ref_url: str, calls: list[dict]) -> tuple[dict, float]:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "a.txt").write_text("still here\n")
    cfg = tmp_path / "callgate.toml"
    args = [FIXTURE, "--dialects", "--remote-ref", ref_url, "--calls",
            str(tmp_path / "calls.jsonl")]
    cfg.write_text(
        f'[capability]\ncache_dir = "{tmp_path / "cache"}"\n\n'
        f'[mcp_servers.fx]\ncommand = "{sys.executable}"\nargs = {json.dumps(args)}\n')
    transcript = tmp_path / "t.jsonl"
    lines = [{"id": "connect", "name": "use_capability",
              "arguments": {"action": "call", "capability_id": "mcp-server:fx"}}, *calls,
             {"id": "after", "name": "read_file", "arguments": {"path": "a.txt"}}]
    transcript.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "callgate_cli", "replay", str(transcript), "--workspace",
         str(workspace), "--config", str(cfg), "--approve", "all"],
        capture_output=True, text=True, timeout=120,
        env={**os.environ, "CALLGATE_LOAD_PLUGINS": "capability,files"})
    elapsed = time.monotonic() - start
    assert proc.returncode == 0, proc.stderr
    return {r["id"]: r for r in map(json.loads, proc.stdout.splitlines())}, elapsed


def test_draft_04_07_and_2019_09_schemas_validate_as_their_own_dialect(replayed) -> None:
    out = replayed["out"]
    assert not out["connect"]["is_error"], out["connect"]["content"]
    for ok in ("t-ok", "l-one", "d-both"):
        assert out[ok]["is_error"] is False, out[ok]["content"]
    assert json.loads(out["t-ok"]["content"]) == {"point": [1, 2]}
    expected = {"t-long": "additionalItems", "t-type": "type", "l-zero": "minimum",
                "d-alone": "dependentRequired", "d-extra": "unevaluatedProperties"}
    for call_id, keyword in expected.items():
        result = out[call_id]
        assert result["error"]["kind"] == "invalid_arguments", result["content"]
        assert result["error"]["signature"].endswith(f":{keyword}"), result["content"]
        assert "not executed" in result["content"]
    sent = [(c["name"], c["arguments"]) for c in replayed["sent"]]
    assert sent[:3] == [("tuple07", {"point": [1, 2]}), ("legacy04", {"count": 1}),
                        ("dep2019", {"user": "u", "password": "p"})]
    assert out["after"]["is_error"] is False


def test_a_remote_ref_is_a_config_error_and_is_never_fetched(replayed) -> None:
    out = replayed["out"]
    result = out["remote"]
    assert result["error"]["kind"] == "config_error", result["content"]
    assert "points outside the schema" in result["content"]
    assert "never fetches" in result["content"]
    assert "failed:" not in result["content"]
    assert "points outside the schema" in json.loads(out["inspect"]["content"])["schema_error"]
    assert replayed["fetched"] == []  # nothing ever asked the HTTP server for the schema
    assert "remote_ref" not in [c["name"] for c in replayed["sent"]]


def test_a_catastrophic_pattern_costs_its_budget_not_minutes(replayed) -> None:
    out = replayed["out"]
    for call_id in ("alternation", "nested"):
        result = out[call_id]
        assert result["error"]["kind"] == "invalid_arguments", result["content"]
        assert result["error"]["signature"].endswith(":pattern")
        assert EVIL not in result["content"]
    assert "ran out of time" in out["alternation"]["content"]
    assert out["fine"]["is_error"] is False
    assert [c["arguments"] for c in replayed["sent"] if c["name"] == "backtrack"] == [
        {"word": "aaaa", "plain": "aa"}]
    # The whole replay, server start included; `re` alone spends minutes on the first call.
    assert replayed["elapsed"] < 30
