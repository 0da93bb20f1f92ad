"""Server lifecycle through the pipeline: lazy shared start, initialize timeout, crash and
restart with a note, kill -9 mid-query, stderr kept from the model, ContentModified retries,
cancellation, and nothing left running after the session closes (checked with psutil)."""

from __future__ import annotations

import os
import re
import signal
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest
from callgate import ToolCall
from callgate_lsp import LSP

from .conftest import group_members, python_config, scripted_config, server_pids, wait_gone


def started(tmp_path: Path) -> list[int]:
    return sorted(int(p.name.split("-")[1]) for p in (tmp_path / "scripted").glob("started-*"))


def children(tmp_path: Path) -> list[int]:
    return sorted(int(p.name.split("-")[1]) for p in (tmp_path / "scripted").glob("child-*"))


def wait_for(predicate, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.02)


def in_thread(fn):
    """Run ``fn()`` in a thread; returns a callable that joins and gives its result."""
    box: dict[str, object] = {}
    thread = threading.Thread(target=lambda: box.setdefault("r", fn()), daemon=True)
    thread.start()

    def join():
        thread.join(60)
        assert not thread.is_alive()
        return box["r"]

    return join


def test_servers_start_on_the_first_query_only_once_and_stop_with_the_session(
        lsp_session, tmp_path):
    s = lsp_session(scripted_config(tmp_path, "child"),
                    files={f"{n}.scr": f"{n} here\n" for n in "abc"})
    assert started(tmp_path) == [] and s.session.extension(LSP).servers() == []
    calls = [ToolCall(f"d{n}", "lsp_definition", {"file": f"{n}.scr", "line": 1, "symbol": n})
             for n in "abc"]
    results = s.run(*calls)  # read-only: they run concurrently and share one start
    assert [r.text for r in results] == [f"1 definition(s):\n{n}.scr:1  {n} here" for n in "abc"]
    [pid] = started(tmp_path)
    assert server_pids(s) == {"scripted": pid}
    wait_for(lambda: len(children(tmp_path)) == 1)
    [child] = children(tmp_path)
    assert {p.pid for p in group_members(pid)} >= {pid, child}
    s.close()
    assert wait_gone([pid, child]) == []
    assert group_members(pid) == []


def test_kill_9_mid_query_fails_that_query_and_the_next_one_restarts_it(lsp_session, tmp_path):
    s = lsp_session(scripted_config(tmp_path, "hang_hover", "child", "stderr_flood"),
                    files={"a.scr": "alpha beta\n"})
    join = in_thread(lambda: s.call("lsp_hover", file="a.scr", line=1, symbol="beta"))
    wait_for(lambda: list((tmp_path / "scripted").glob("hovering-*")))
    wait_for(lambda: len(children(tmp_path)) == 1)
    [pid], [child] = started(tmp_path), children(tmp_path)
    os.kill(pid, signal.SIGKILL)
    r = join()
    assert r.is_error and r.error.signature == "LSP_SERVER_FAILED"
    assert r.text == (f"language server {os.path.basename(sys.executable)} (scripted) was "
                      "killed by SIGKILL during the query; it is started again on the next query")
    assert "SECRET" not in r.text
    assert wait_gone([child]) == []  # the group went with it
    r = s.call("lsp_definition", file="a.scr", line=1, symbol="alpha")
    assert not r.is_error, r.text
    assert r.text.startswith("1 definition(s):\na.scr:1  alpha beta\n\nnote: language server ")
    assert "was killed by SIGKILL; it was restarted for this query" in r.text
    assert "SECRET" not in r.text
    new = [p for p in started(tmp_path) if p != pid]
    assert len(new) == 1
    again = s.call("lsp_definition", file="a.scr", line=1, symbol="alpha")
    assert "note:" not in again.text  # the note comes once
    s.close()
    assert wait_gone([*new, *children(tmp_path)]) == []


def test_a_real_server_killed_mid_query_leaves_no_process(lsp_session):
    """basedpyright-langserver is a Python launcher with node as its child: killing the
    launcher orphans node unless the whole process group is ended."""
    s = lsp_session(python_config("basedpyright"), files={"m.py": "def f():\n    pass\nf()\n"})
    me = psutil.Process()
    join = in_thread(lambda: s.call("lsp_references", file="m.py", line=1, symbol="f"))

    def launcher_with_node() -> list[psutil.Process]:
        for proc in me.children(recursive=True):
            try:
                if "basedpyright-langserver" in " ".join(proc.cmdline()) and proc.children():
                    return [proc, *proc.children(recursive=True)]
            except psutil.Error:
                continue
        return []

    wait_for(lambda: launcher_with_node())
    launcher, *rest = launcher_with_node()
    os.kill(launcher.pid, signal.SIGKILL)
    r = join()
    assert r.is_error and r.error.signature == "LSP_SERVER_FAILED", r.text
    assert re.search(r"was killed by SIGKILL (during the query|while starting); it is started "
                     "again on the next query", r.text), r.text
    assert wait_gone([p.pid for p in rest]) == []
    r = s.call("lsp_references", file="m.py", line=1, symbol="f")
    assert r.text.startswith("2 reference(s):\nm.py:1  def f():\nm.py:3  f()"), r.text
    pids = list(server_pids(s).values())
    s.close()
    assert wait_gone(pids) == [] and all(group_members(p) == [] for p in pids)


def test_initialize_has_a_timeout_and_a_failed_start_is_not_retried_at_once(
        lsp_session, tmp_path):
    s = lsp_session(scripted_config(tmp_path, "mute", initialize_timeout_s=1),
                    files={"a.scr": "alpha\n"})
    t0 = time.monotonic()
    r = s.call("lsp_definition", file="a.scr", line=1, symbol="alpha")
    assert time.monotonic() - t0 < 10
    assert r.error.signature == "LSP_SERVER_FAILED"
    assert "did not answer initialize within 1 s while starting; a query after 30 s starts it " \
        "again" in r.text
    [pid] = started(tmp_path)
    assert wait_gone([pid]) == []
    r = s.call("lsp_definition", file="a.scr", line=1, symbol="alpha")
    assert "did not answer initialize within 1 s" in r.text
    assert started(tmp_path) == [pid]  # failed fast, no second start


def test_content_modified_is_retried_then_reported_as_still_indexing(lsp_session, tmp_path):
    s = lsp_session(scripted_config(tmp_path, "modified:2"), files={"a.scr": "alpha\n"})
    assert s.expect_ok("lsp_definition", {"file": "a.scr", "line": 1, "symbol": "alpha"}) == \
        "1 definition(s):\na.scr:1  alpha"
    other = tmp_path / "other"
    other.mkdir()
    s2 = lsp_session(scripted_config(other, "modified:99"), files={"a.scr": "alpha\n"})
    r = s2.call("lsp_definition", file="a.scr", line=1, symbol="alpha")
    assert not r.is_error
    assert r.text.endswith("is still indexing (it answered 'content modified' several times); "
                           "retry shortly")
    assert r.meta["indexing"] is True


def test_columns_are_sent_in_the_negotiated_encoding(lsp_session, tmp_path):
    # the scripted server is pygls: it takes our first preference, UTF-8
    s = lsp_session(scripted_config(tmp_path), files={"a.scr": 'x = "é😀"; target\n'})
    r = s.call("lsp_hover", file="a.scr", line=1, symbol="target")
    before = 'x = "é😀"; '
    assert (len(before), len(before.encode())) == (10, 14)
    assert r.text == "line 0 character 14"


def test_a_cancelled_batch_stops_waiting_for_the_server(lsp_session, tmp_path):
    s = lsp_session(scripted_config(tmp_path, "hang_hover"), files={"a.scr": "alpha\n"})
    join = in_thread(lambda: s.call("lsp_hover", file="a.scr", line=1, symbol="alpha"))
    wait_for(lambda: list((tmp_path / "scripted").glob("hovering-*")))
    s.session.cancel()
    r = join()
    assert r.is_error and r.error.kind == "cancelled"
    assert s.expect_ok("lsp_definition", {"file": "a.scr", "line": 1, "symbol": "alpha"})


@pytest.mark.parametrize("close", ["session", "host"])
def test_nothing_is_left_after_close_even_with_queries_pending(lsp_session, tmp_path, close):
    s = lsp_session(scripted_config(tmp_path, "hang_hover", "child"), files={"a.scr": "a\n"})
    join = in_thread(lambda: s.call("lsp_hover", file="a.scr", line=1, symbol="a"))
    wait_for(lambda: list((tmp_path / "scripted").glob("hovering-*")))
    wait_for(lambda: len(children(tmp_path)) == 1)
    s.session.cancel()
    join()
    (s.close if close == "session" else s.host.close)()
    assert wait_gone([*started(tmp_path), *children(tmp_path)]) == []
