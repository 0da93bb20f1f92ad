"""The event stream of an open session (new and finished calls as HTML, then the session's end)
and the paging of a long timeline."""

from __future__ import annotations

import json
import re
import threading
import time
from pathlib import Path
from typing import Any

from callgate import ToolCall
from callgate_ui import PAGE
from starlette.testclient import TestClient

from .conftest import XSS


def _events(lines: Any) -> Any:
    name = None
    for line in lines:
        if line.startswith("event: "):
            name = line[7:]
        elif line.startswith("data: "):
            yield name, json.loads(line[6:])


def test_an_open_session_streams_its_new_calls_and_then_its_end(
    host: Any, ws: Path, client: TestClient
) -> None:
    session = host.open_session(ws, origin="human")
    session.run(ToolCall("a", "read_file", {"path": "notes.txt"}))
    session.flush()
    page = client.get(f"/s/{session.id}").text
    assert 'data-live="yes"' in page and 'data-last="1"' in page

    def later() -> None:
        time.sleep(0.3)
        session.run(ToolCall("b", "read_file", {"path": "evil.txt"}))
        session.run(ToolCall("c", "bash", {"command": "rm -rf build"}))
        session.close()

    worker = threading.Thread(target=later)
    worker.start()
    got = []
    with client.stream("GET", f"/s/{session.id}/events?after=1") as stream:
        for name, data in _events(stream.iter_lines()):
            got.append((name, data))
            if name == "status":
                break
    worker.join()
    entries = {d["seq"]: d for n, d in got if n == "entry"}
    assert 1 not in entries  # what the page already had is not sent again
    finished = {s: d for s, d in entries.items() if "outcome-running" not in d["html"]}
    assert set(finished) == {2, 3}
    assert "&lt;script&gt;" in finished[2]["html"] and XSS not in finished[2]["html"]
    assert "refused" in finished[3]["html"] and finished[3]["batch"] == 3
    assert got[-1] == ("status", {"status": "closed"})


def test_a_long_timeline_is_paged_latest_first(
    host: Any, ws: Path, client: TestClient, reader: Any
) -> None:
    session = host.open_session(ws)
    calls = PAGE * 2 + 50
    for i in range(calls):
        session.run(ToolCall(f"c{i}", "ls", {}))
    session.close()
    every = [e.seq for e in reader.entries(session.id)]
    assert len(every) >= calls

    def shown(html: str) -> list[int]:
        return [
            int(s)
            for s in re.findall(
                r'<(?:article|aside|div) class="(?:call|notice|message)'
                r'[^"]*" id="e(\d+)"',
                html,
            )
        ]

    latest = client.get(f"/s/{session.id}").text
    assert shown(latest) == every[-PAGE:]
    assert f"?before={every[-PAGE]}" in latest and "later entries" not in latest
    earlier = client.get(f"/s/{session.id}?before={every[-PAGE]}").text
    assert shown(earlier) == every[-2 * PAGE : -PAGE]
    first = client.get(f"/s/{session.id}?after=0").text
    assert shown(first) == every[:PAGE]
    assert f"?after={every[PAGE - 1]}" in first and "earlier entries" not in first
    assert f"<dd>{calls}</dd>" in first  # the call count
