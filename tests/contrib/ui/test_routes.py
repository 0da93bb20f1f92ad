"""Every route of the app with Starlette's test client, over sessions recorded through a real
host: what each page shows, escaping, paging, an empty store, unknown sessions, the stored
result and job log, search, and the live event stream."""

from __future__ import annotations

import contextlib
import re
from pathlib import Path
from typing import Any

from callgate import ToolCall
from callgate.store import default_location, open_reader, open_store
from callgate_ui import create_app
from starlette.testclient import TestClient

from .conftest import DENY, XSS


def test_the_sessions_page_lists_each_session_with_its_counts_and_sparkline(
    recorded: Any, client: TestClient, reader: Any
) -> None:
    sid, _ = recorded
    page = client.get("/")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    info = reader.session(sid)
    row = re.search(rf'<tr class="status-closed">.*?/s/{sid}.*?</tr>', page.text, re.S)
    assert row, page.text
    cells = re.findall(r'<td class="num[^"]*">(\d+)</td>', row.group(0))
    errors = sum(1 for c in reader.calls(sid) if c.is_error)
    assert cells == [str(info.calls), str(errors)] and errors == 7
    assert info.workspace in row.group(0)
    assert re.search(r'<svg class="spark"[^>]*><polyline points="[\d., ]+"/></svg>', row.group(0))
    assert "&lt;script&gt;" in row.group(0) and XSS not in page.text  # the preview


def test_filters_by_workspace_and_text_and_pages(
    host: Any, tmp_path: Path, client: TestClient
) -> None:
    ids = {}
    for name in ("a", "b"):
        w = tmp_path / name
        w.mkdir()
        for i in range(14):
            s = host.open_session(w, name=f"{name}-{i:02d}")
            s.run(ToolCall("c", "ls", {}))
            s.close()
            ids[f"{name}-{i:02d}"] = s.id
    page = client.get("/").text
    assert "28 sessions · page 1 of 2" in page
    assert ">b-13<" in page and ">a-00<" not in page  # newest first
    assert ">a-00<" in client.get("/?page=2").text
    only_a = client.get("/", params={"workspace": str((tmp_path / "a").resolve())}).text
    assert "14 sessions" in only_a and ">b-" not in only_a
    found = client.get("/", params={"q": "B-07"}).text
    assert "1 session ·" in found and ">b-07<" in found
    assert "No session matches." in client.get("/", params={"q": "zzz-nothing"}).text


def test_the_session_page_shows_stages_rule_diff_storm_children_jobs_goal_todos(
    recorded: Any, client: TestClient, reader: Any
) -> None:
    sid, _results = recorded
    html = client.get(f"/s/{sid}").text
    calls = {c.call_id: c for c in reader.calls(sid)}
    box = _call(html, calls["b1"].seq)
    assert "refused" in box.split(">", 1)[0]
    assert re.search(
        r'class="stage stopped"[^>]*>permission<span class="detail">' + re.escape(f"deny:{DENY}"),
        box,
    )
    assert 'class="stage skipped"' in box and "host gates" in box
    invalid = _call(html, calls["v1"].seq)
    assert 'class="stage stopped" title="validation: stopped (invalid_arguments)"' in invalid
    hooked = _call(html, calls["h1"].seq)
    assert 'class="stage stopped" title="pre-tool-use: stopped (no-secrets)"' in hooked
    assert "secret files stay closed" in hooked and "refused" in hooked.split(">", 1)[0]
    gated = _call(html, calls["o1"].seq)
    assert 'class="stage stopped" title="host gates: stopped (not_observed)"' in gated
    assert 'class="stage passed" title="permission: passed (mode:allow)"' in gated
    edit = _call(html, calls["e1"].seq)
    assert '<span class="d-del">-hello world</span>' in edit
    assert '<span class="d-add">+goodbye world</span>' in edit
    assert 'class="stage passed" title="permission: passed (mode:allow)"' in edit
    evil = _call(html, calls["x1"].seq)
    assert "1→&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;" in evil and XSS not in html
    storm = _call(html, calls["n2"].seq)
    assert "storm hint</span>" in storm and "[convergence hint]" in storm
    assert "storm hint" not in _call(html, calls["n1"].seq)
    assert re.search(r'<aside class="notice storm"', html)
    [child] = reader.children(sid)
    assert f'href="/s/{child.id}"' in _call(html, calls["k0"].seq)
    assert "job-output-line" in html and "bash-1" in html  # the job and its output
    assert "Tidy the notes" in html and "fix typo" in html  # the goal and todos
    assert "goal changed</span>" in _call(html, calls["g1"].seq)
    assert "todos changed</span>" in _call(html, calls["t1"].seq)
    assert f'<a href="#e{calls["g1"].seq}">#{calls["g1"].seq} create_goal</a>' in html
    assert f"/s/{sid}/result/{calls['e1'].result_ref}" in edit
    assert "live: new calls" not in html  # a closed session is not live


def _call(html: str, seq: int) -> str:
    found = re.search(rf'<article class="call[^"]*" id="e{seq}".*?</article>', html, re.S)
    assert found, f"no call #{seq}"
    return found.group(0)


def test_the_complete_stored_result_and_job_log_are_served_as_plain_text(
    recorded: Any, client: TestClient, reader: Any
) -> None:
    sid, _ = recorded
    calls = {c.call_id: c for c in reader.calls(sid)}
    answer = client.get(f"/s/{sid}/result/{calls['x1'].result_ref}")
    assert answer.status_code == 200 and answer.text == calls["x1"].text
    assert answer.headers["content-type"].startswith("text/plain")
    assert answer.headers["x-content-type-options"] == "nosniff"
    assert client.get(f"/s/{sid}/result/tr-nope").status_code == 404
    assert client.get(f"/s/{'0' * 32}/result/{calls['x1'].result_ref}").status_code == 404
    log = client.get(f"/s/{sid}/job/bash-1/log")
    assert log.status_code == 200 and "job-output-line" in log.text
    assert client.get(f"/s/{sid}/job/bash-9/log").status_code == 404


def test_search_finds_history_and_escapes_what_it_shows(recorded: Any, client: TestClient) -> None:
    sid, _ = recorded
    page = client.get("/search", params={"q": "tidy notes"}).text
    assert f'href="/s/{sid}?after=0#e1"' in page and "<mark>" in page
    assert XSS not in page and "&lt;script&gt;" in page
    tool = client.get("/search", params={"q": "notes", "kind": "tool_input", "tool": "edit_file"})
    assert "edit_file" in tool.text and "user_text" not in tool.text.split("<ol", 1)[-1]
    none = client.get("/search", params={"q": "<zzqy>"}).text
    assert "No matches for “&lt;zzqy&gt;”" in none and "<zzqy>" not in none


def test_unknown_sessions_are_404_and_the_app_has_no_write_routes(
    recorded: Any, client: TestClient
) -> None:
    sid, _ = recorded
    missing = client.get("/s/ffffffffffffffffffff")
    assert missing.status_code == 404 and "No session ffffffffffffffffffff" in missing.text
    assert client.get("/s/ffffffffffff/events").status_code == 404
    assert client.get("/nothing-here").status_code == 404
    for method in ("post", "put", "delete"):
        assert getattr(client, method)(f"/s/{sid}").status_code == 405


def test_a_store_that_cannot_be_read_is_said_so(recorded: Any, tmp_path: Path) -> None:
    broken = tmp_path / "broken.sqlite3"
    broken.write_bytes(Path(default_location()).read_bytes())
    with (
        contextlib.closing(open_reader(str(broken))) as store,
        TestClient(create_app(store), raise_server_exceptions=False) as c,
    ):
        assert c.get("/").status_code == 200
        store.close()
        broken.write_bytes(b"this is not a database" * 500)
        answer = c.get("/")
        assert answer.status_code == 503 and "The store cannot be read" in answer.text
        assert "is not a readable callgate session store" in answer.text


def test_an_empty_store_renders_every_page() -> None:
    open_store().close()  # the file exists, with no session
    with contextlib.closing(open_reader()) as store, TestClient(create_app(store)) as c:
        assert "No sessions recorded in this store yet." in c.get("/").text
        assert c.get("/search", params={"q": "x"}).status_code == 200
        assert c.get("/s/abc").status_code == 404


def test_a_result_whose_complete_text_was_dropped_says_so(ws: Path, client: TestClient) -> None:
    import callgate_shell
    from callgate import sync

    config = {"results": {"max_chars": 1000, "store_max_bytes": 1024}}
    host = sync.Host.boot(config, plugins=[callgate_shell], entrypoints=False)
    try:
        session = host.open_session(ws)
        for i in range(2):  # the second truncated result evicts the first's complete text
            session.run(ToolCall(f"b{i}", "bash", {"command": "seq 1 20000"}))
        session.close()
    finally:
        host.close()
    with contextlib.closing(open_reader()) as store:
        dropped = [c for c in store.calls(session.id) if c.text is None]
    assert dropped, "no complete text was dropped"
    answer = client.get(f"/s/{session.id}/result/{dropped[0].result_ref}")
    assert answer.status_code == 410 and "no longer stored" in answer.text
    page = client.get(f"/s/{session.id}").text
    assert "the complete text is no longer stored" in page and "· no longer stored" in page
