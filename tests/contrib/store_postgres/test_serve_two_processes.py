"""Two ``callgate serve --http`` processes on one PostgreSQL store serve one MCP session:
the client reads on one, edits on the other, and goes back and forth."""

from __future__ import annotations

import json
import os
from pathlib import Path

from callgate_mcp_serve._http import stored_name

from tests.contrib.mcp_serve.http_support import Served
from tests.contrib.mcp_serve.test_http import alternate, needs_tools
from tests.contrib.mcp_serve.test_server import run


@needs_tools
def test_one_session_alternates_between_two_servers_on_postgres(
    tmp_path: Path, pg_url: str, user_config: Path
) -> None:
    from callgate_store_postgres import PostgresStore

    (user_config / "config.toml").write_text(f"[sessions]\nstore = {json.dumps(pg_url)}\n")
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("hello world\n")

    async def scenario() -> str:
        args = ["--http", "127.0.0.1:0", "--workspace", str(ws)]
        with Served(args) as one, Served(args) as two:
            return await alternate(one.url, two.url, ws)

    sid = run(scenario)
    store = PostgresStore.open(pg_url)
    try:
        info = store.session(stored_name(sid), prefix=False)
        assert info is not None and info.calls == 5
        assert [c.name for c in store.calls(info.id)] == [
            "read_file",
            "edit_file",
            "edit_file",
            "edit_file",
            "job_output",
        ]
        assert store.integrity_check() == "ok"
    finally:
        store.close()
    # the sessions went to PostgreSQL, not to a SQLite file in the state directory
    assert not (Path(os.environ["CALLGATE_HOME"]) / "sessions").exists()
