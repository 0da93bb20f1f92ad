"""OpenTelemetry (``callgate[otel]``): every call an ``execute_tool {name}`` span with the GenAI
semantic-convention attributes and the pipeline's stages as events, read back with the
SDK's in-memory exporter; and no OpenTelemetry import when the application has none.

Each case runs in its own interpreter: a tracer provider is process-wide, set once."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

TRACED = r"""
import json, sys
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
trace.set_tracer_provider(provider)

import callgate_files
from callgate import ToolCall, sync

host = sync.Host.boot({"permissions": {"deny": ["Edit(locked.txt)"]}},
                      plugins=[callgate_files], entrypoints=False, surface="full")
session = host.open_session(sys.argv[1])
tracer = trace.get_tracer("integrator")
with tracer.start_as_current_span("chat turn"):
    session.run_batch([ToolCall("c1", "read_file", {"path": "notes.txt"}),
                       ToolCall("c2", "read_file", {"path": 7})])
session.run(ToolCall("c3", "write_file", {"path": "locked.txt", "content": "x"}))
session.run(ToolCall("c4", "edit_file", {"path": "notes.txt", "old_string": "hello",
                                         "new_string": "bye"}))
session.run(ToolCall("c5", "edit_file", {"path": "ghost.txt", "old_string": "a",
                                         "new_string": "b"}))
host.close()
out = []
for span in exporter.get_finished_spans():
    out.append({"name": span.name, "attributes": dict(span.attributes),
                "status": span.status.status_code.name,
                "parent": span.parent.span_id if span.parent else None,
                "events": [[e.name, dict(e.attributes)] for e in span.events],
                "trace": span.context.trace_id, "id": span.context.span_id})
print(json.dumps(out))
"""

UNTRACED = r"""
import json, sys
import callgate_files
from callgate import ToolCall, sync
host = sync.Host.boot({}, plugins=[callgate_files], entrypoints=False, surface="full")
session = host.open_session(sys.argv[1])
session.run(ToolCall("c1", "read_file", {"path": "notes.txt"}))
host.close()
print(json.dumps(sorted(m for m in sys.modules if m.startswith("opentelemetry"))))
"""


def run(code: str, ws: Path) -> Any:
    proc = subprocess.run([sys.executable, "-c", code, str(ws)], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


def test_every_call_is_an_execute_tool_span_with_stages_as_events(ws: Path) -> None:
    finished = run(TRACED, ws)
    spans = {s["attributes"]["gen_ai.tool.call.id"]: s for s in finished
             if s["name"].startswith("execute_tool")}
    turn = [s for s in finished if s["name"] == "chat turn"]
    assert sorted(spans) == ["c1", "c2", "c3", "c4", "c5"]
    read = spans["c1"]
    assert read["name"] == "execute_tool read_file"
    assert {k: v for k, v in read["attributes"].items() if k.startswith("gen_ai.")} == {
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "read_file",
        "gen_ai.tool.call.id": "c1", "gen_ai.tool.type": "function",
        "gen_ai.conversation.id": read["attributes"]["gen_ai.conversation.id"]}
    assert "error.type" not in read["attributes"] and read["status"] == "UNSET"
    assert [e[0] for e in read["events"]] == ["validation", "permission", "result"]
    assert read["events"][1][1] == {"decision": "allow", "decided_by": "read_only"}
    assert len(turn) == 1 and read["parent"] == turn[0]["id"]  # a child of the integrator's
    assert read["trace"] == turn[0]["trace"] and spans["c3"]["parent"] is None

    invalid = spans["c2"]
    assert invalid["attributes"]["error.type"] == "invalid_arguments"
    assert invalid["status"] == "ERROR"
    assert invalid["events"][0] == ["validation", {"valid": False}]

    denied = spans["c3"]
    assert denied["attributes"]["error.type"] == "blocked"
    assert ["permission", {"decision": "deny",
                           "decided_by": "deny:Edit(locked.txt)"}] in denied["events"]

    edited = spans["c4"]
    assert [e[0] for e in edited["events"]] == ["validation", "permission", "gate", "result"]
    assert edited["events"][2][1] == {"passed": True, "paths": 1}

    missing = spans["c5"]
    assert ["gate", {"passed": False, "signature": "FS_NOT_FOUND"}] in missing["events"]
    assert missing["attributes"]["error.type"] == "not_found"


def test_without_an_application_tracer_nothing_of_opentelemetry_is_imported(
        ws: Path) -> None:
    assert run(UNTRACED, ws) == []
