"""An MCP result is capped in bytes while it streams (issue 16, defect 11).

A raw JSON-RPC stdio server answers ``tools/call`` with one 200 MB line. Before,
the SDK buffered and parsed it whole (+170 MB of host RSS, bounded only by the
call timeout). Now the line is dropped as it arrives: the call fails at once with
a clear error naming the limit, the host's peak RSS grows by a few MiB, and the
server stays connected for the next call. Each run is a fresh interpreter, so
the peak is its own.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("mcp")

#: The server: id in front (as the Python SDK writes it) or at the end (as the TS SDK does).
SERVER = textwrap.dedent("""
    import json, sys
    size, id_last = int(sys.argv[1]), sys.argv[2] == "last"
    out = sys.stdout.buffer
    def send(obj):
        out.write(json.dumps(obj).encode() + b"\\n"); out.flush()
    tool = {"name": "big", "description": "A big answer.",
            "inputSchema": {"type": "object", "properties": {}}}
    for line in sys.stdin.buffer:
        msg = json.loads(line)
        if "id" not in msg:
            continue
        method, rid = msg.get("method"), msg["id"]
        if method == "initialize":
            send({"jsonrpc": "2.0", "id": rid, "result": {
                "protocolVersion": msg["params"]["protocolVersion"], "capabilities": {
                    "tools": {}}, "serverInfo": {"name": "big", "version": "1"}}})
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": rid, "result": {"tools": [tool]}})
        elif method == "tools/call" and msg["params"]["name"] == "big" and \\
                msg["params"].get("arguments", {}).get("small"):
            send({"jsonrpc": "2.0", "id": rid, "result": {
                "content": [{"type": "text", "text": "small"}]}})
        elif method == "tools/call":
            head = b'{"jsonrpc":"2.0",' + (b"" if id_last else b'"id":%d,' % rid)
            out.write(head + b'"result":{"content":[{"type":"text","text":"')
            block = b"x" * (1 << 20)
            for _ in range(size >> 20):
                out.write(block)
            out.write(b'"}]}' + (b',"id":%d' % rid if id_last else b"") + b"}\\n")
            out.flush()
        else:
            send({"jsonrpc": "2.0", "id": rid, "result": {}})
""")

HOST = textwrap.dedent("""
    import json, resource, sys
    from callgate import sync, ToolCall
    import callgate_capability
    server, size, order, cache, workspace = sys.argv[1:6]
    config = {"capability": {"cache_dir": cache}, "mcp_servers": {"big": {
        "command": sys.executable, "args": [server, size, order], "call_timeout_s": 120}}}
    host = sync.Host.boot(config, plugins=[callgate_capability], surface="lean")
    try:
        s = host.open_session(workspace)
    except BaseException:
        host.close()
        raise
    def call(args):
        return s.run(ToolCall("c", "use_capability", {"action": "call",
                     "capability_id": "mcp-tool:big/big", "arguments": args}))
    assert not call({"small": True}).is_error
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    import time
    started = time.monotonic()
    big = call({})
    took = time.monotonic() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    after = call({"small": True})
    print(json.dumps({"text": big.text, "error": big.error.kind if big.error else None,
                      "growth_mib": (peak - base) / 1024, "seconds": took,
                      "after": after.text}))
    host.close()
""")


@pytest.mark.parametrize("order", ["first", "last"])
def test_a_200_mb_result_is_dropped_while_it_streams(tmp_path: Path, figure, cases,
                                                     order: str) -> None:
    size = cases(200 << 20, 40 << 20)
    server = tmp_path / "server.py"
    server.write_text(SERVER, encoding="utf-8")
    proc = subprocess.run([sys.executable, "-c", HOST, str(server), str(size), order,
                           str(tmp_path / "cache"), str(tmp_path)], capture_output=True,
                          text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["error"] == "tool_error", out["text"]
    assert "over the 16,777,216-byte limit for one MCP message" in out["text"]
    assert out["after"] == "small"  # the server is still connected
    assert out["growth_mib"] < 48, out
    figure(f"MCP result of {size >> 20} MiB (id {order}): host peak RSS growth", cases=1,
           failures=0, growth_mib=round(out["growth_mib"], 1),
           seconds=round(out["seconds"], 2))
