"""Safe by default: a token checked on every request (the event stream's too), loopback
unless a token is given, Host names checked, nothing written to the store, and a page that
loads nothing from elsewhere."""

from __future__ import annotations

import contextlib
import hashlib
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from callgate.store import StoreError, default_location, open_reader
from callgate_ui import create_app
from starlette.testclient import TestClient

TOKEN = "s3cret-token-" + "x" * 10


@pytest.fixture
def guarded(recorded: Any, reader: Any) -> Any:
    with TestClient(create_app(reader, token=TOKEN), follow_redirects=False) as c:
        yield recorded[0], c


def test_without_the_token_every_route_is_refused(guarded: Any) -> None:
    sid, c = guarded
    for path in (
        "/",
        "/search?q=notes",
        f"/s/{sid}",
        f"/s/{sid}/events",
        f"/s/{sid}/job/bash-1/log",
        "/static/ui.css",
        "/nothing",
    ):
        answer = c.get(path)
        assert answer.status_code == 401, path
        assert "needs its token" in answer.text and sid not in answer.text
    wrong = TOKEN[:-1] + "y"  # same length, one character off
    for headers in (
        {"authorization": f"Bearer {wrong}"},
        {"cookie": f"callgate_ui={wrong}"},
        {"authorization": "Bearer "},
        {"authorization": f"Basic {TOKEN}"},
    ):
        assert c.get(f"/s/{sid}", headers=headers).status_code == 401, headers
    assert c.get(f"/s/{sid}?token={wrong}").status_code == 401


def test_the_token_opens_every_route_and_a_browser_keeps_it_in_a_cookie(guarded: Any) -> None:
    sid, c = guarded
    bearer = {"authorization": f"Bearer {TOKEN}"}
    assert c.get(f"/s/{sid}", headers=bearer).status_code == 200
    stream = c.get(f"/s/{sid}/events", headers=bearer)  # a closed session: ends at once
    assert stream.status_code == 200 and "event: status" in stream.text
    first = c.get(f"/s/{sid}?after=0&token={TOKEN}")
    assert first.status_code == 303 and first.headers["location"] == f"/s/{sid}?after=0"
    cookie = first.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    c.cookies.set("callgate_ui", TOKEN)
    assert c.get(f"/s/{sid}").status_code == 200
    assert c.get(f"/s/{sid}/events").status_code == 200


def test_other_host_names_are_refused_and_pages_load_nothing_from_elsewhere(
    recorded: Any, reader: Any
) -> None:
    app = create_app(reader, allowed_hosts={"127.0.0.1", "localhost", "::1"})
    with TestClient(app, base_url="http://127.0.0.1:8377") as c:
        page = c.get("/")
        assert page.status_code == 200
        csp = page.headers["content-security-policy"]
        assert "default-src 'none'" in csp and "script-src 'self'" in csp
        assert "http" not in page.text.split("<main>")[0].replace('lang="en"', "")  # no CDN
        assert c.get("/", headers={"host": "localhost:8377"}).status_code == 200
        assert c.get("/", headers={"host": "[::1]:8377"}).status_code == 200
        assert c.get("/", headers={"host": "evil.example:8377"}).status_code == 421


def _fingerprint(path: str) -> tuple[str, int, int]:
    st = os.stat(path)
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest(), st.st_mtime_ns, st.st_size


def test_the_app_never_writes_to_the_store(recorded: Any) -> None:
    from callgate._store.locations import forget

    sid, _ = recorded
    forget(default_location())  # the host's own connection to it, closed: only the ui reads
    files = [p for p in (default_location(), default_location() + "-wal") if os.path.exists(p)]
    before = [_fingerprint(p) for p in files]
    with contextlib.closing(open_reader()) as store, TestClient(create_app(store)) as c:
        calls = store.calls(sid)
        for path in (
            "/",
            "/?q=notes",
            "/search?q=notes+tidy",
            f"/s/{sid}",
            f"/s/{sid}?after=0",
            f"/s/{sid}?before=5",
            f"/s/{sid}/events",
            f"/s/{sid}/job/bash-1/log",
            *(f"/s/{sid}/result/{call.result_ref}" for call in calls),
        ):
            assert c.get(path).status_code == 200, path
        with pytest.raises(StoreError, match="read-only"):
            store.write([])
        with pytest.raises(StoreError, match="read-only"):
            store.prune(keep_days=0, max_bytes=0)
    assert [_fingerprint(p) for p in files] == before


def test_a_missing_store_is_not_created(tmp_path: Path) -> None:
    where = tmp_path / "none" / "sessions.sqlite3"
    with pytest.raises(StoreError, match="cannot be read"):
        open_reader(str(where))
    assert not where.parent.exists()


def ui(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    """``callgate ui ARGS`` through the command line's own entry point (each case here ends
    before anything is served); its exit status and stderr."""
    from callgate_cli.cli import main

    status = main(["ui", *args])
    return status, capsys.readouterr().err


def test_the_command_refuses_a_public_bind_without_a_token_and_bad_tokens(
    recorded: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = ["--store", default_location()]
    status, err = ui(capsys, *store, "--host", "0.0.0.0", "--port", "0")
    assert status == 2 and "needs --token or --token-file" in err
    status, err = ui(capsys, *store, "--host", "::", "--port", "0")
    assert status == 2 and "needs --token" in err
    status, err = ui(capsys, *store, "--token", "short")
    assert status == 2 and "16 to 512" in err
    status, err = ui(capsys, *store, "--token", "a" * 16 + ";b")
    assert status == 2 and "16 to 512" in err
    status, err = ui(capsys, "--token-file", str(tmp_path / "nope"), *store)
    assert status == 2 and "token file" in err
    status, err = ui(capsys, "--store", str(tmp_path / "nothing.sqlite3"))
    assert status == 2 and "cannot be read" in err
    assert not (tmp_path / "nothing.sqlite3").exists()


def test_the_installed_command_refuses_a_public_bind_without_a_token(recorded: Any) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "callgate_cli", "ui", "--host", "0.0.0.0", "--port", "0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "needs --token or --token-file" in done.stderr
