"""The web app: sessions, one session, search, stored results and job logs, live events.

Every page is rendered on the server from the store's read API (Jinja2, autoescaped), so
what a tool returned is shown as text, never markup. The app only reads: it gets a store
opened with `callgate.store.open_reader` and has no route that changes anything.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from typing import Any

import jinja2
from callgate.store import StoreError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from . import _view as v
from ._auth import Guard
from ._live import events

#: Entries on one page of a session's timeline.
PAGE = 200
#: Sessions on one page of the list.
SESSIONS_PAGE = 25
#: Bytes of a job's log shown inline (the whole stored log is one click away).
LOG_SHOWN = 64 * 1024


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("callgate_ui", "templates"),
        autoescape=True,  # every template, whatever its name
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["when"] = _when
    env.filters["ms"] = v.human_ms
    env.globals.update(duration=v.duration, snippet_parts=v.snippet_parts)
    return env


def _when(at: float | None) -> str:
    if at is None:
        return "—"
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(at))


class UI:
    """The pages over one store (``store``: an object with `callgate.store`'s read API)."""

    def __init__(self, store: Any, *, poll_interval: float = 0.1) -> None:
        self.store = store
        self.poll_interval = poll_interval
        self.env = _environment()
        # (session id, calls, ended) -> (errors, sparkline): a finished row never changes
        self._summaries: OrderedDict[tuple[str, int, float | None], tuple[int, dict[str, Any]]]
        self._summaries = OrderedDict()

    # --- helpers ---------------------------------------------------------------------------

    def render(self, name: str, status: int = 200, **context: Any) -> HTMLResponse:
        html = self.env.get_template(name).render(store=self.store.location, **context)
        return HTMLResponse(html, status_code=status)

    def store_error(self, request: Request, exc: Exception) -> HTMLResponse:
        """The store could not be read (a corrupt file, a backend down): said, not a 500."""
        return self.render("error.html", 503, title="The store cannot be read", message=str(exc))

    def not_found(self, what: str) -> HTMLResponse:
        return self.render("error.html", 404, title="Not found", message=what)

    def summary(self, info: Any) -> tuple[int, dict[str, Any]]:
        """A session's error count and calls-over-time sparkline (cached per version)."""
        key = (info.id, info.calls, info.ended)
        found = self._summaries.get(key)
        if found is not None:
            self._summaries.move_to_end(key)
            return found
        calls = self.store.calls(info.id)
        errors = sum(1 for c in calls if c.is_error)
        end = info.ended or (calls[-1].ended or calls[-1].started if calls else info.started)
        spark = v.sparkline([c.started for c in calls], info.started, max(end, info.started))
        found = (errors, spark)
        if info.ended is not None:
            self._summaries[key] = found
            while len(self._summaries) > 512:
                self._summaries.popitem(last=False)
        return found

    def call_view(self, call: Any, children: dict[int, list[Any]],
                  state: dict[tuple[str, str], Any] | None = None) -> dict[str, Any]:
        seen = call.seen
        shown, more = v.clip(seen)
        stages = v.stages(call)
        return {
            "call": call,
            "stages": stages,
            "hooks": v.hook_runs(state or {}, call),
            "refused": any(s.state == "stopped" for s in stages),
            "arguments": v.arguments_text(call.arguments),
            "shown": shown,
            "more": more,
            "seen_note": v.seen_note(call),
            "state_change": ("todos changed" if call.name == "todo_write" else "goal changed")
            if call.name in v.STATE_TOOLS and not call.is_error
            else None,
            "diff": v.diff_lines(call.text if not call.is_error else None),
            "storm": v.storm(seen),
            "children": children.get(call.seq, []),
        }

    def entry_views(
        self,
        entries: list[Any],
        children: dict[int, list[Any]],
        state: dict[tuple[str, str], Any] | None = None,
    ) -> list[dict[str, Any]]:
        """The timeline, with consecutive calls of one batch grouped."""
        out: list[dict[str, Any]] = []
        for e in entries:
            if e.kind == "call":
                last = out[-1] if out else None
                if last is None or last["kind"] != "batch" or last["number"] != e.batch:
                    last = {
                        "kind": "batch",
                        "number": e.batch,
                        "origin": e.origin,
                        "calls": [],
                        "first": e.seq,
                    }
                    out.append(last)
                last["calls"].append(self.call_view(e, children, state))
            elif e.kind == "notice":
                out.append({"kind": "notice", "entry": e, "storm": v.storm(e.text)})
            else:
                out.append({"kind": "message", "entry": e})
        return out

    def page_of(
        self, sid: str, calls: int, after: int | None, before: int | None
    ) -> tuple[list[Any], bool, bool]:
        """One page of the timeline and whether there are earlier / later entries. Without
        ``after`` or ``before``: the latest page (where live entries arrive)."""
        store = self.store
        if after is not None:
            rows = store.entries(sid, after=after, limit=PAGE + 1)
            later = len(rows) > PAGE
            rows = rows[:PAGE]
            return rows, after > 0, later
        if before is not None:  # seqs are dense (1, 2, ...): the page starts near before-PAGE
            rows = store.entries(sid, after=max(0, before - PAGE - 1), before=before)[-PAGE:]
            return rows, bool(rows) and rows[0].seq > 1, True
        # the latest page: a session holds at least ``calls`` entries, so it starts after
        # calls - PAGE or later; walk forward to the end
        start, rows = max(0, calls - PAGE), []
        while True:
            chunk = store.entries(sid, after=start, limit=PAGE * 4)
            rows = (rows + chunk)[-PAGE:]
            if len(chunk) < PAGE * 4:
                break
            start = chunk[-1].seq
        return rows, bool(rows) and rows[0].seq > 1, False

    # --- pages -----------------------------------------------------------------------------

    def sessions_page(self, request: Request) -> Response:
        workspace = request.query_params.get("workspace") or None
        text = (request.query_params.get("q") or "").strip()
        page = _int(request.query_params.get("page"), 1, minimum=1)
        every = self.store.sessions()
        workspaces = sorted({s.workspace for s in every})
        rows = [s for s in every if workspace is None or s.workspace == workspace]
        if text:
            needle = text.casefold()
            rows = [
                s
                for s in rows
                if any(
                    needle in (f or "").casefold()
                    for f in (s.id, s.name, s.workspace, s.preview, s.status)
                )
            ]
        pages = max(1, -(-len(rows) // SESSIONS_PAGE))
        page = min(page, pages)
        shown = rows[(page - 1) * SESSIONS_PAGE : page * SESSIONS_PAGE]
        items = [{"info": s, "summary": self.summary(s)} for s in shown]
        return self.render(
            "sessions.html",
            title="Sessions",
            items=items,
            total=len(rows),
            page=page,
            pages=pages,
            workspace=workspace or "",
            q=text,
            workspaces=workspaces,
        )

    def session_page(self, request: Request) -> Response:
        sid = request.path_params["sid"]
        info = self.store.session(sid)
        if info is None:
            return self.not_found(f"No session {sid} in this store.")
        after = _int(request.query_params.get("after"), None, minimum=0)
        before = _int(request.query_params.get("before"), None, minimum=1)
        rows, earlier, later = self.page_of(info.id, info.calls, after, before)
        children = self.store.children(info.id)
        placed, unplaced = v.nest_children((e for e in rows if e.kind == "call"), children)
        changes = [
            (e.seq, e.name)
            for e in rows
            if e.kind == "call" and not e.is_error and e.name in v.STATE_TOOLS
        ]
        state = self.store.state(info.id)
        jobs = self.store.jobs(info.id)
        logs = {}
        for job in jobs:
            log = self.store.job_log(info.id, job.job_id)
            if log is not None:
                text = log[-LOG_SHOWN:].decode("utf-8", "replace")
                logs[job.job_id] = (text, max(0, len(log) - LOG_SHOWN))
        # the execution facts of the writer and destructive calls that ran (a call the gate
        # refused has none), each linked to its call when the call is on this page
        on_page = {e.call_id: e.seq for e in rows if e.kind == "call"}
        facts = [(fact, on_page.get(fact.call_id)) for fact in self.store.facts(info.id)]
        parent = self.store.session(info.parent) if info.parent else None
        last = rows[-1].seq if rows else 0
        return self.render(
            "session.html",
            title=f"Session {info.id[:12]}",
            info=info,
            parent=parent,
            timeline=self.entry_views(rows, placed, state),
            earlier=earlier,
            later=later,
            first_seq=rows[0].seq if rows else 0,
            last_seq=last,
            live=info.status == "open" and not later,
            unplaced=unplaced,
            goal=state.get(("goals", "goal")),
            todos=state.get(("workflow", "todos")),
            presented=state.get(("workflow", "presented")),
            changes=changes,
            state_keys=sorted(f"{ns}/{k}" for ns, k in state),
            jobs=jobs,
            logs=logs,
            facts=facts,
            page_size=PAGE,
            session_id=info.id,
        )

    def result(self, request: Request) -> Response:
        sid, ref = request.path_params["sid"], request.path_params["ref"]
        info = self.store.session(sid, prefix=False)
        found = self.store.result_by_ref(info.id, ref) if info else None
        if found is None:
            return PlainTextResponse(f"no result {ref} in session {sid}\n", status_code=404)
        text = self.store.result_text(found[0])
        if text is None:
            return PlainTextResponse(
                f"result {ref} ({found[2]} bytes, sha256 {found[3]}) is no longer stored: "
                "[results] store_max_bytes dropped its complete text; what the model saw is "
                "kept in the timeline\n",
                status_code=410,
            )
        return PlainTextResponse(text)

    def job_log(self, request: Request) -> Response:
        sid, job_id = request.path_params["sid"], request.path_params["job"]
        info = self.store.session(sid, prefix=False)
        log = self.store.job_log(info.id, job_id) if info else None
        if log is None:
            return PlainTextResponse(
                f"no stored log of job {job_id} in session {sid}\n", status_code=404
            )
        return PlainTextResponse(log.decode("utf-8", "replace"))

    def search_page(self, request: Request) -> Response:
        from callgate.store import DEFAULT_SEARCH_KINDS, SEARCH_KINDS

        q = (request.query_params.get("q") or "").strip()
        workspace = request.query_params.get("workspace") or None
        tool = request.query_params.get("tool") or None
        kinds = [k for k in request.query_params.getlist("kind") if k in SEARCH_KINDS]
        hits = []
        if q:
            hits = self.store.search(
                q,
                workspaces=[workspace] if workspace else None,
                kinds=kinds or DEFAULT_SEARCH_KINDS,
                tool=tool,
                limit=50,
            )
        workspaces = sorted({s.workspace for s in self.store.sessions()})
        return self.render(
            "search.html",
            title="Search",
            q=q,
            hits=hits,
            workspace=workspace or "",
            tool=tool or "",
            kinds=kinds,
            all_kinds=SEARCH_KINDS,
            default_kinds=DEFAULT_SEARCH_KINDS,
            workspaces=workspaces,
        )

    async def events(self, request: Request) -> Response:
        return await events(self, request)


def _int(text: str | None, default: Any, *, minimum: int) -> Any:
    try:
        value = int(text) if text not in (None, "") else default
    except ValueError:
        return default
    return value if value is None or value >= minimum else default


def create_app(
    store: Any, *, token: str | None = None, allowed_hosts: Any = None, poll_interval: float = 0.1
) -> Guard:
    """The app over ``store``. With ``token``, every request must carry it (``Authorization:
    Bearer``, the ``callgate_ui`` cookie, or ``?token=`` once, which sets the cookie);
    ``allowed_hosts`` (host names) refuses other ``Host`` headers (DNS rebinding)."""
    ui = UI(store, poll_interval=poll_interval)
    static = StaticFiles(packages=[("callgate_ui", "static")])
    app = Starlette(
        routes=[
            Route("/", ui.sessions_page),
            Route("/search", ui.search_page),
            Route("/s/{sid}", ui.session_page),
            Route("/s/{sid}/events", ui.events),
            Route("/s/{sid}/result/{ref}", ui.result),
            Route("/s/{sid}/job/{job}/log", ui.job_log),
            Mount("/static", static, name="static"),
        ],
        exception_handlers={StoreError: ui.store_error},
    )
    app.state.ui = ui
    return Guard(app, token=token, allowed_hosts=allowed_hosts)
