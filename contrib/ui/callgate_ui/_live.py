"""Server-sent events for an open session page: new and finished entries, as HTML.

Each open stream polls the store (``poll_interval``, 0.1 s by default) for entries after
the last one it sent, and again for the calls it sent while they were still running, so a
call shows up when it starts and is redrawn when it finishes. The host's writer commits a
batch's records a few milliseconds after the batch ends, so a finished call reaches the
page within about one poll interval of its commit (benchmarks/ui.py measures it).

Events: ``entry`` (``{"seq", "batch", "html"}``; an entry already on the page is replaced),
``status`` (the session's status, once it is no longer ``open``). A comment line every
15 s keeps proxies from closing an idle stream.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from typing import Any

import anyio
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response, StreamingResponse

KEEPALIVE_S = 15.0
#: Entries read per poll at most (a burst is sent over several polls).
CHUNK = 500


async def events(ui: Any, request: Request) -> Response:
    store = ui.store
    sid = request.path_params["sid"]
    info = await anyio.to_thread.run_sync(store.session, sid)
    if info is None:
        return PlainTextResponse(f"no session {sid}\n", status_code=404)
    try:
        after = max(0, int(request.query_params.get("after", "0")))
    except ValueError:
        after = 0
    headers = {"cache-control": "no-store", "x-accel-buffering": "no"}
    return StreamingResponse(
        _stream(ui, request, info.id, after), headers=headers, media_type="text/event-stream"
    )


async def _stream(ui: Any, request: Request, sid: str, after: int) -> AsyncIterator[bytes]:
    store, last, running = ui.store, after, set()
    # the calls on the page that were still running when it was drawn
    for e in await anyio.to_thread.run_sync(
        lambda: store.entries(sid, after=max(0, after - 200), limit=200)
    ):
        if e.kind == "call" and e.outcome == "running":
            running.add(e.seq)
    quiet_since = time.monotonic()
    yield b"retry: 1000\n\n"
    while not await request.is_disconnected():
        fresh, redo, info = await anyio.to_thread.run_sync(_poll, store, sid, last, running)
        for e in [*redo, *fresh]:
            if e.kind == "call":
                (running.add if e.outcome == "running" else running.discard)(e.seq)
            last = max(last, e.seq)
            yield _event(
                "entry",
                {
                    "seq": e.seq,
                    "batch": getattr(e, "batch", None),
                    "kind": e.kind,
                    "html": ui_entry_html(ui, e),
                },
            )
            quiet_since = time.monotonic()
        if (info is None or info.status != "open") and not fresh and not redo:
            yield _event("status", {"status": info.status if info else "gone"})
            return
        if time.monotonic() - quiet_since > KEEPALIVE_S:
            yield b": keepalive\n\n"
            quiet_since = time.monotonic()
        await anyio.sleep(ui.poll_interval)


def _poll(store: Any, sid: str, last: int, running: set[int]) -> tuple[list[Any], list[Any], Any]:
    info = store.session(sid, prefix=False)
    fresh = store.entries(sid, after=last, limit=CHUNK)
    redo = []
    for seq in sorted(running):
        if seq > last:
            continue
        [e] = store.entries(sid, after=seq - 1, limit=1) or [None]
        if e is not None and (e.kind != "call" or e.outcome != "running"):
            redo.append(e)
    return fresh, redo, info


def ui_entry_html(ui: Any, entry: Any) -> str:
    """One entry drawn as on the page (a call in its own batch box)."""
    children = {}
    if entry.kind == "call":
        kids = ui.store.children(entry.session)
        children = {
            entry.seq: [
                c
                for c in kids
                if entry.started <= c.started and (entry.ended is None or c.started <= entry.ended)
            ]
        }
    [view] = ui.entry_views([entry], children)
    module = ui.env.get_template("_entry.html").make_module({"session_id": entry.session})
    return str(module.entry(view))


def _event(name: str, data: dict[str, Any]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()
