"""The SQLite store is a backend like any other (issue 31): ``callgate-store-sqlite`` serves
plain paths and ``sqlite://`` URLs through the ``callgate.stores`` entry points, and a host
with no backend installed (a bare ``callgate``) keeps its sessions in memory, says so, and
refuses to resume rather than pretending to."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import callgate_files
import callgate_store_sqlite
import pytest
from callgate import ToolCall
from callgate._session import durable
from callgate._store import locations
from callgate.store import StoreError, open_reader, open_store

from .conftest import store_path


@pytest.fixture
def bare(monkeypatch: pytest.MonkeyPatch) -> None:
    """This process as a bare ``callgate``: no installed backend serves ``file`` stores."""
    monkeypatch.setitem(locations._openers, "file", None)
    monkeypatch.setattr(durable, "_warned_memory_only", False, raising=False)


def test_the_sqlite_backend_serves_plain_paths_and_sqlite_urls(tmp_path: Path) -> None:
    assert locations.opener_for("/any/sessions.sqlite3") is callgate_store_sqlite.open_store
    assert locations.opener_for("sqlite:///any.db") is callgate_store_sqlite.open_store
    where = tmp_path / "s" / "one.sqlite3"
    store = open_store(f"sqlite://{where}")
    assert isinstance(store, callgate_store_sqlite.SqliteStore) and where.is_file()
    reader = open_reader(str(where))
    try:
        assert isinstance(reader, callgate_store_sqlite.SqliteReader)
        with pytest.raises(StoreError, match="read-only"):
            reader.prune(keep_days=0, max_bytes=None)
    finally:
        reader.close()


def test_a_host_without_a_backend_keeps_sessions_in_memory_and_says_so(
        bare: None, ws: Path, hosts: Any, caplog: pytest.LogCaptureFixture) -> None:
    host = hosts([callgate_files])
    with caplog.at_level(logging.WARNING, "callgate.store"):
        session = host.open_session(ws)
        host.open_session(ws).close()
    warnings = [r.getMessage() for r in caplog.records if r.name.startswith("callgate.store")]
    assert len(warnings) == 1 and "kept in memory only" in warnings[0]
    assert "callgate-store-sqlite" in warnings[0]
    assert session.store is None and not session.storage.durable
    result = session.run(ToolCall("r1", "read_file", {"path": "notes.txt"}))
    assert not result.is_error and "hello world" in result.text
    session.close()
    assert not store_path().exists()  # nothing was recorded anywhere
    with pytest.raises(StoreError, match=r"cannot resume .*kept in memory only"):
        host.open_session(ws, resume=session.id)
    with pytest.raises(StoreError, match="cannot join session 'shared'"):
        host.open_session(ws, name="shared")


def test_a_configured_store_no_backend_serves_fails_naming_the_package(
        bare: None, ws: Path, hosts: Any, tmp_path: Path) -> None:
    where = tmp_path / "mine.sqlite3"
    host = hosts([callgate_files], {"sessions": {"store": str(where)}})
    with pytest.raises(StoreError, match="no installed backend serves file:// stores "
                                         r"\(install callgate-store-sqlite"):
        host.open_session(ws)
    assert not where.exists()


def test_replay_on_a_bare_core_runs_the_calls_and_records_nothing(ws: Path) -> None:
    """The front door: ``callgate replay`` in a process whose core has no backend."""
    transcript = ws.parent / "t.jsonl"
    transcript.write_text(json.dumps({"id": "r1", "name": "read_file",
                                      "arguments": {"path": "notes.txt"}}) + "\n")
    bare_main = ("from callgate._store import locations; locations._openers['file'] = None; "
                 "import sys; from callgate_cli.cli import main; sys.argv[0] = 'callgate'; main()")
    proc = subprocess.run(
        [sys.executable, "-c", bare_main, "replay", str(transcript), "--workspace", str(ws),
         "--surface", "full"],
        capture_output=True, text=True, timeout=120,
        env={**os.environ, "CALLGATE_LOAD_PLUGINS": "files"})
    assert proc.returncode == 0, proc.stderr
    [line] = [json.loads(x) for x in proc.stdout.splitlines()]
    assert line["id"] == "r1" and not line["is_error"]
    assert "callgate: warning: no session-store backend is installed" in proc.stderr
    assert not store_path().exists()
