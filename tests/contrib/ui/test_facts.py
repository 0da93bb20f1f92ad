"""Issue 36.11: the ui's session page shows the execution facts of the calls that ran
(from the session store), never a fact for a call the gate refused. The session is
recorded by ``callgate replay`` in a real subprocess; the page is the app's HTTP answer."""

from __future__ import annotations

import html
from pathlib import Path

from callgate.store import open_reader
from starlette.testclient import TestClient

from ...core.test_execution_facts_shown import replay_one_ran_one_refused


def test_the_session_page_shows_the_facts_of_the_calls_that_ran(tmp_path: Path) -> None:
    from callgate_ui import create_app

    ws, sid = replay_one_ran_one_refused(tmp_path)
    store = open_reader()
    try:
        with TestClient(create_app(store)) as client:
            page = client.get(f"/s/{sid}")
    finally:
        store.close()
    assert page.status_code == 200
    body = html.unescape(page.text)
    section = body[body.index('<section id="facts">') :]
    section = section[: section.index("</section>")]
    assert 'id="fact-w1"' in section and "write_file" in section
    assert str((ws / "a.txt").resolve()) in section
    assert 'href="#e1"' in section  # linked to its call on the timeline
    assert "fact-w2" not in section and ".git/config" not in section
    assert "FS_PROTECTED" in body  # the refused call itself is on the timeline
