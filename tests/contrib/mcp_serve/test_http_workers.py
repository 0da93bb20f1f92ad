"""``callgate serve --http`` with a worker per MCP session (issue 37): the user config's
``[executor] transport`` is a template whose ``{session_id}`` names the session, so every
session a client opens over HTTP runs its tools on a worker of its own.

Here each worker is ``callgate worker`` in a bwrap mount namespace of its own, its
workspace a tmpfs mounted over the path the server was given, holding a file that names
the session (written from ``{session_id}`` before the worker starts). Two clients, through
the MCP SDK's own streamable-HTTP client: each reads and edits only its own worker's files,
neither sees the other's, and the host's directory at that path (a decoy) is untouched.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from callgate.store import open_store
from callgate_mcp_serve._http import stored_name

from ...core.test_executor_bwrap import WHY_NOT, isolated_worker
from .http_support import Served, connect
from .test_server import run, text_of

pytestmark = pytest.mark.skipif(WHY_NOT is not None, reason=WHY_NOT or "")


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_each_http_session_runs_on_a_worker_of_its_own(tmp_path: Path, user_config: Path) -> None:
    decoy = tmp_path / "ws"
    decoy.mkdir()
    (decoy / "who.txt").write_text("HOST COPY\n")
    before = _tree(decoy)
    transport = isolated_worker({"who.txt": "worker of {session_id}\n"})
    (user_config / "config.toml").write_text(f"[executor]\ntransport = {json.dumps(transport)}\n")

    async def scenario() -> None:
        with Served(["--http", "127.0.0.1:0", "--workspace", str(decoy)]) as served:
            async with connect(served.url) as a, connect(served.url) as b:
                seen: dict[str, str] = {}
                for name, client in (("a", a), ("b", b)):
                    got = await client.client.call_tool("read_file", {"path": "who.txt"})
                    assert not got.is_error, text_of(got)
                    found = re.search(r"worker of (\S+)", text_of(got))
                    assert found is not None, text_of(got)  # the worker's file, not the decoy
                    seen[name] = found.group(1)
                # each worker's session is its own MCP session's (the store's name of it)
                stored = {
                    name: open_store().session(stored_name(opened.session_id), prefix=False)
                    for name, opened in (("a", a), ("b", b))
                }
                for name in ("a", "b"):
                    info = stored[name]
                    assert info is not None and info.id == seen[name], (info, seen)
                assert seen["a"] != seen["b"]
                # a edits its file and writes a new one; b's worker has neither change
                edit = await a.client.call_tool(
                    "edit_file",
                    {"path": "who.txt", "old_string": "worker of", "new_string": "edited by a in"},
                )
                assert not edit.is_error, text_of(edit)
                made = await a.client.call_tool(
                    "write_file", {"path": "only-a.txt", "content": "a was here\n"}
                )
                assert not made.is_error, text_of(made)
                a_sees = await a.client.call_tool("bash", {"command": "cat who.txt; ls"})
                b_sees = await b.client.call_tool("bash", {"command": "cat who.txt; ls"})
                assert f"edited by a in {seen['a']}" in text_of(a_sees)
                assert "only-a.txt" in text_of(a_sees)
                assert f"worker of {seen['b']}" in text_of(b_sees), text_of(b_sees)
                assert "only-a.txt" not in text_of(b_sees) and "edited" not in text_of(b_sees)
                assert "HOST COPY" not in text_of(a_sees) + text_of(b_sees)
            assert "Traceback" not in "".join(served.log), "".join(served.log)

    run(scenario)
    assert _tree(decoy) == before  # the host's file system is untouched
