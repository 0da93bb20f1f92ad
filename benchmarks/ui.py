"""``callgate ui`` (issue 24): how fast a long session's page comes, and how soon a live call
shows, each against a baseline measured in the same run.

- **Page of a 10,000-call session**: the session page (its latest page of 200 entries:
  batches, stages, diffs, results), served by ``callgate ui``'s app under uvicorn on
  loopback; time to first byte (the status line and headers read) and to the whole body.
  Baselines, interleaved: the same number of bytes as a static file through Starlette's
  ``StaticFiles`` under uvicorn (what serving costs without rendering), and the store's own
  ``entries()`` read of that page in process (what reading costs). Target ≤ 300 ms.
  The first page (``?after=0``) and the sessions list (with that session's sparkline) are
  reported too.
- **Live-update delay**: an open session's page has its event stream open; a call runs
  through the host; from ``session.run`` returning to the stream delivering the finished
  call, and (where ``/usr/bin/chromium`` and Playwright are installed) to the finished call
  drawn in a real page in headless Chromium. Baseline: from the same moment until the store
  itself shows the finished call to a reader polling every millisecond (the host's writer
  commit). Target ≤ 500 ms.

Everything happens in a temporary ``CALLGATE_HOME``; the 10,000 calls are recorded through a
real host (files tools: reads, some of a missing file, edits).

    uv run python benchmarks/ui.py [--calls 10000] [--repeat 15] [--json]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import _hermetic  # noqa: F401  (first: a private CALLGATE_HOME and user config)

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _timing import summary

TARGET_PAGE_MS = 300.0
TARGET_LIVE_MS = 500.0


def _record(calls: int, ws: Path) -> tuple[Any, str]:
    """A host and a closed session of ``calls`` calls recorded through it."""
    import callgate_files
    from callgate import ToolCall, sync

    (ws / "notes.txt").write_text("".join(f"line {i} of the notes\n" for i in range(40)))
    host = sync.Host.boot({}, plugins=[callgate_files], entrypoints=False, surface="full")
    session = host.open_session(ws, origin="human")
    session.record_message("user", "read the notes and fix them")
    for i in range(calls):
        if i % 50 == 7:
            call = ToolCall(
                f"e{i}",
                "edit_file",
                {
                    "path": "notes.txt",
                    "old_string": f"line {i % 40} of",
                    "new_string": f"line {i % 40} of"[::-1],
                },
            )
            if session.run(call).is_error:
                session.run(ToolCall(f"r{i}", "read_file", {"path": "notes.txt"}))
            continue
        if i % 10 == 3:
            session.run(ToolCall(f"m{i}", "read_file", {"path": f"missing-{i}.txt"}))
        else:
            session.run(ToolCall(f"r{i}", "read_file", {"path": "notes.txt", "limit": 5}))
    sid = session.id
    session.close()
    return host, sid


class Server:
    """An ASGI app under uvicorn on a free loopback port, in a thread."""

    def __init__(self, app: Any) -> None:
        import uvicorn

        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(128)
        self.port = self.sock.getsockname()[1]
        self.server = uvicorn.Server(
            uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")
        )
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True
        )
        self.thread.start()
        while not self.server.started:
            time.sleep(0.01)

    def get(self, path: str) -> tuple[float, float, int]:
        """Seconds to the first byte (headers read) and to the whole body, and its size."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        began = time.perf_counter()
        conn.request("GET", path)
        answer = conn.getresponse()
        first = time.perf_counter() - began
        body = answer.read()
        whole = time.perf_counter() - began
        conn.close()
        assert answer.status == 200, (path, answer.status, body[:200])
        return first, whole, len(body)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


def _pages(ui: Server, static: Server, reader: Any, sid: str, repeat: int) -> dict[str, Any]:
    from callgate_ui import PAGE

    info = reader.session(sid)
    kinds: dict[str, list[float]] = {
        k: []
        for k in (
            "ttfb",
            "full",
            "static_ttfb",
            "static_full",
            "entries",
            "first_full",
            "list_full",
        )
    }
    size = ui.get(f"/s/{sid}")[2]
    for _ in range(2):  # warm-up
        ui.get(f"/s/{sid}")
        static.get("/page.html")
    for _ in range(repeat):
        first, whole, _ = ui.get(f"/s/{sid}")
        kinds["ttfb"].append(first)
        kinds["full"].append(whole)
        first, whole, _ = static.get("/page.html")
        kinds["static_ttfb"].append(first)
        kinds["static_full"].append(whole)
        began = time.perf_counter()
        reader.entries(sid, after=max(0, info.calls - PAGE), limit=PAGE * 4)
        kinds["entries"].append(time.perf_counter() - began)
        kinds["first_full"].append(ui.get(f"/s/{sid}?after=0")[1])
        kinds["list_full"].append(ui.get("/")[1])
    out = {k: summary(v) for k, v in kinds.items()}
    out["page_bytes"] = size
    out["ratio_static"] = round(out["full"]["median"] / out["static_full"]["median"], 2)
    out["ratio_entries"] = round(out["full"]["median"] / out["entries"]["median"], 2)
    out["target_ms"] = TARGET_PAGE_MS
    return out


def _live(host: Any, ws: Path, ui: Server, reader: Any, repeat: int) -> dict[str, Any]:
    from callgate import ToolCall

    session = host.open_session(ws, origin="human")
    session.run(ToolCall("w0", "read_file", {"path": "notes.txt"}))
    session.flush()
    last = reader.entries(session.id)[-1].seq
    conn = http.client.HTTPConnection("127.0.0.1", ui.port, timeout=60)
    conn.request("GET", f"/s/{session.id}/events?after={last}")
    stream = conn.getresponse()
    seen: dict[int, float] = {}
    done = threading.Event()

    def listen() -> None:
        name = None
        for raw in stream:
            line = raw.decode().rstrip("\n")
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: ") and name == "entry":
                data = json.loads(line[6:])
                if "outcome-running" not in data["html"]:
                    seen.setdefault(data["seq"], time.perf_counter())
            elif name == "status":
                break
        done.set()

    listener = threading.Thread(target=listen, daemon=True)
    listener.start()
    rng = random.Random(24)
    to_page, to_store = [], []
    for i in range(repeat):
        time.sleep(rng.uniform(0.05, 0.25))  # out of step with the stream's polls
        session.run(ToolCall(f"l{i}", "read_file", {"path": "notes.txt", "limit": 3}))
        finished = time.perf_counter()
        seq = last + 1
        while True:  # the store's own view: a reader polling every millisecond
            rows = reader.entries(session.id, after=seq - 1, limit=1)
            if rows and rows[0].kind == "call" and rows[0].outcome != "running":
                to_store.append(time.perf_counter() - finished)
                break
            time.sleep(0.001)
        deadline = time.perf_counter() + 10
        while seq not in seen and time.perf_counter() < deadline:
            time.sleep(0.001)
        assert seq in seen, f"call {seq} never reached the stream"
        to_page.append(seen[seq] - finished)
        last = seq
    session.close()
    done.wait(10)
    conn.close()
    page, store = summary(to_page), summary(to_store)
    return {
        "to_page": page,
        "to_store": store,
        "ratio": round(page["median"] / max(store["median"], 1e-3), 2),
        "target_ms": TARGET_LIVE_MS,
    }


CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


OBSERVE = """() => {
  window.__drawn = {};
  const note = () => {
    for (const id of document.querySelectorAll('#timeline .call.outcome-ok .id')) {
      if (!(id.textContent in window.__drawn)) window.__drawn[id.textContent] = Date.now();
    }
  };
  note();
  new MutationObserver(note).observe(document.getElementById('timeline'),
                                     {childList: true, subtree: true});
}"""


def _live_in_browser(host: Any, ws: Path, ui: Server, repeat: int) -> dict[str, Any] | None:
    """From ``session.run`` returning to the finished call drawn in a real page (headless
    Chromium through Playwright); ``None`` without Chromium or Playwright."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    if not os.path.exists(CHROMIUM):
        return None
    from callgate import ToolCall

    session = host.open_session(ws, origin="human")
    session.run(ToolCall("w0", "read_file", {"path": "notes.txt"}))
    session.flush()
    rng = random.Random(42)
    delays = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page()
        page.goto(f"http://127.0.0.1:{ui.port}/s/{session.id}")
        page.wait_for_function(
            "() => document.getElementById('live-note').textContent.startsWith('live: new')"
        )
        # the page notes the wall-clock time each finished call is drawn (a MutationObserver;
        # Playwright's own waiting polls, and would add its polling interval)
        page.evaluate(OBSERVE)
        for i in range(repeat):
            time.sleep(rng.uniform(0.05, 0.25))
            session.run(ToolCall(f"p{i}", "read_file", {"path": "notes.txt", "limit": 2}))
            finished = time.time()
            page.wait_for_function(f"() => window.__drawn['p{i}'] !== undefined", timeout=10_000)
            drawn = page.evaluate(f"() => window.__drawn['p{i}']") / 1000
            delays.append(max(0.0, drawn - finished))
        browser.close()
    session.close()
    return summary(delays)


def run(calls: int = 10_000, repeat: int = 15) -> dict[str, Any]:
    home = tempfile.mkdtemp(prefix="callgate-bench-ui-")
    os.environ["CALLGATE_HOME"] = home
    os.environ["CALLGATE_CONFIG_HOME"] = os.path.join(home, "config")
    from callgate.store import open_reader
    from callgate_ui import create_app
    from starlette.applications import Starlette
    from starlette.routing import Mount
    from starlette.staticfiles import StaticFiles

    ws = Path(home) / "ws"
    ws.mkdir()
    began = time.perf_counter()
    host, sid = _record(calls, ws)
    recorded_s = time.perf_counter() - began
    reader = open_reader()
    servers: list[Server] = []
    try:  # whatever fails, the servers, the host (its threads) and the store are closed
        ui = Server(create_app(reader))
        servers.append(ui)
        page_bytes = ui.get(f"/s/{sid}")[2]
        static_dir = Path(home) / "static"
        static_dir.mkdir()
        (static_dir / "page.html").write_bytes(b"x" * page_bytes)
        static = Server(Starlette(routes=[Mount("/", StaticFiles(directory=static_dir))]))
        servers.append(static)
        pages = _pages(ui, static, reader, sid, repeat)
        live = _live(host, ws, ui, reader, repeat)
        live["to_dom"] = _live_in_browser(host, ws, ui, repeat)
    finally:
        for server in servers:
            server.stop()
        host.close()
        reader.close()
    return {"calls": calls, "record_seconds": round(recorded_s, 1), "page": pages, "live": live}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    result = run(args.calls, args.repeat)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        p, live = result["page"], result["live"]
        print(
            f"session page of {result['calls']:,} calls ({p['page_bytes']:,} bytes): "
            f"ttfb {p['ttfb']['median']} ms, full {p['full']['median']} ms "
            f"(p95 {p['full']['p95']}); static file of that size {p['static_full']['median']} "
            f"ms ({p['ratio_static']}×); entries() {p['entries']['median']} ms; "
            f"first page {p['first_full']['median']} ms; sessions list "
            f"{p['list_full']['median']} ms; target ≤ {p['target_ms']:.0f} ms"
        )
        dom = live["to_dom"]
        drawn = f"drawn in Chromium {dom['median']} ms (p95 {dom['p95']}); " if dom else ""
        print(
            f"live delay {live['to_page']['median']} ms (p95 {live['to_page']['p95']}); "
            f"{drawn}the store's commit {live['to_store']['median']} ms; target ≤ "
            f"{live['target_ms']:.0f} ms"
        )
    return result


if __name__ == "__main__":
    main()
