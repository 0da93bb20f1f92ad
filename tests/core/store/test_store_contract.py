"""The session store's contract (`callgate.store.SessionStore`): what every backend must do.

Written against the interface only, so a second backend passes by being added to
``BACKENDS`` in conftest.py.
"""

from __future__ import annotations

import hashlib
import time
from typing import Any

import pytest
from callgate import store as st

from .conftest import Writer


def test_a_session_records_its_timeline_in_order(store: Any, writer: Writer) -> None:
    sid = writer.session("s1", "/ws/a", name="review", directory="/dirs/one")
    writer.message(sid, "user", "fix the parser")
    b1 = writer.batch(sid)
    writer.call(sid, b1, "c1", "read_file", {"path": "p.py"}, "1→def parse(): ...")
    writer.call(sid, b1, "c2", "grep", {"pattern": "parse"}, "p.py:1", position=1, merged=True)
    writer.write(st.NoticeRecorded(sid, "[job bash-1 done]", time.time()))
    writer.message(sid, "assistant", "found it")
    b2 = writer.batch(sid)
    writer.call(sid, b2, "c3", "edit_file", "not json", "FS_STALE: changed", error="stale_version")
    entries = store.entries(sid)
    assert [e.seq for e in entries] == [1, 2, 3, 4, 5, 6]
    assert [e.kind for e in entries] == ["message", "call", "call", "notice", "message", "call"]
    first, second, last = entries[1], entries[2], entries[5]
    assert (first.call_id, first.name, first.arguments, first.batch, first.position) == (
        "c1", "read_file", {"path": "p.py"}, b1.number, 0)
    assert (second.batch, second.position, second.text) == (b1.number, 1, "p.py:1")
    assert last.batch == b2.number != b1.number and last.arguments == "not json"
    assert (last.outcome, last.is_error, last.signature) == ("stale_version", True,
                                                             "stale_version:x")
    assert first.permission == "allow" and first.decided_by == "read_only"
    assert first.result_sha256 == hashlib.sha256(first.text.encode()).hexdigest()
    assert first.result_ref == st.result_ref("c1", 1, first.text.encode())
    assert [e.text for e in store.entries(sid, kinds=("message",))] == ["fix the parser",
                                                                        "found it"]
    assert [e.seq for e in store.entries(sid, after=2, before=5)] == [3, 4]
    assert [c.call_id for c in store.calls(sid, limit=2)] == ["c1", "c2"]
    info = store.session(sid)
    assert (info.name, info.workspace, info.directory, info.calls, info.status) == (
        "review", "/ws/a", "/dirs/one", 3, "open")
    assert info.preview == "fix the parser"  # the first user message, not the first call


def test_a_call_in_flight_reads_running_and_its_end_completes_it(store: Any,
                                                                 writer: Writer) -> None:
    sid = writer.session("s1")
    batch = writer.batch(sid)
    start = writer.call(sid, batch, "c1", "bash", {"command": "sleep 5"}, None)
    [running] = store.calls(sid)
    assert (running.outcome, running.text, running.ended) == (st.RUNNING, None, None)
    assert start.row is not None
    end = st.CallEnded(start, None, "ok", False, None, "allow", "rule", "done", None,
                       time.time(), 7)
    writer.write(end)
    assert end.committed
    [done] = store.calls(sid)
    assert (done.outcome, done.text, done.duration_ms is not None) == ("ok", "done", True)


def test_sessions_are_found_by_id_name_and_unique_prefix(store: Any, writer: Writer) -> None:
    a = writer.session("ab12cd34ef" + "0" * 22, name="alpha")
    writer.session("ab12cd34ff" + "0" * 22)
    assert store.session(a).id == a and store.session("alpha").id == a
    assert store.session("ab12cd34e").id == a       # unique prefix
    assert store.session("ab12cd34") is None        # two match: none is chosen
    assert store.session("ab12cd3") is None         # too short to be a prefix
    assert store.session("ab12cd34e", prefix=False) is None
    assert store.session("nosuch") is None


def test_listing_is_newest_first_per_workspace_and_children_apart(store: Any,
                                                                 writer: Writer) -> None:
    now = time.time()
    writer.session("old", "/ws/a", started=now - 100)
    writer.session("new", "/ws/a", started=now)
    writer.session("other", "/ws/b", started=now - 50)
    writer.session("kid", "/ws/a", parent="new", started=now + 1)
    assert [i.id for i in store.sessions()] == ["new", "other", "old"]
    assert [i.id for i in store.sessions(workspace="/ws/a")] == ["new", "old"]
    assert [i.id for i in store.sessions(limit=1)] == ["new"]
    assert "kid" in [i.id for i in store.sessions(children=True)]
    assert [i.id for i in store.children("new")] == ["kid"]
    assert store.session_for_directory("/nowhere", "/ws/a") is None


def test_principals_keep_their_sessions_apart(store: Any, writer: Writer) -> None:
    """Each session records who opened it; ``principal=`` keeps a reader to that principal's
    sessions (listing, lookup by id, name or prefix, search); a session recorded before
    principals (``None``) counts as the local users', never as a token's."""
    alice, token = "user:alice", "token-0123456789ab"
    writer.session("a1" + "0" * 30, "/ws", principal=alice, name="mine")
    writer.session("b1" + "0" * 30, "/ws", principal=token, name="theirs")
    writer.session("c1" + "0" * 30, "/ws")  # recorded before principals
    for sid in ("a1" + "0" * 30, "b1" + "0" * 30, "c1" + "0" * 30):
        writer.message(sid, "user", f"the secret flux {sid[:2]}")
    assert store.session("a1" + "0" * 30).principal == alice
    assert store.session("c1" + "0" * 30).principal is None
    assert {i.id[:2] for i in store.sessions(principal=alice)} == {"a1", "c1"}
    assert {i.id[:2] for i in store.sessions(principal=token)} == {"b1"}
    assert {i.id[:2] for i in store.sessions(principal="user:bob")} == {"c1"}
    assert len(store.sessions()) == 3  # no principal: the store owner's view, everything
    assert store.session("theirs", principal=alice) is None
    assert store.session("b1" + "0" * 30, principal=alice) is None
    assert store.session("b1000000", principal=alice) is None  # nor by prefix
    assert store.session("b1000000", principal=token).id == "b1" + "0" * 30
    assert store.session("mine", principal=alice).principal == alice
    found = {h.session[:2] for h in store.search("flux", principal=token)}
    assert found == {"b1"}
    assert {h.session[:2] for h in store.search("flux", principal=alice)} == {"a1", "c1"}
    assert {h.session[:2] for h in store.search("flux")} == {"a1", "b1", "c1"}
    assert st.visible_to(None, alice) and not st.visible_to(None, token)
    assert st.visible_to(token, token) and not st.visible_to(alice, token)


def test_state_ledger_and_jobs_come_back_with_restore(store: Any, writer: Writer) -> None:
    sid = writer.session("s1")
    writer.write(st.StatePut(sid, "goals", "goal", {"version": 1, "goal": None}),
                 st.StatePut(sid, "todos", "list", [1, 2]),
                 st.StatePut(sid, "todos", "list", None),  # deleted again
                 st.LedgerPut(sid, "/ws/a.txt", {"absent": True}),
                 st.LedgerPut(sid, "/ws/b.txt", {"digest": None}),
                 st.LedgerPut(sid, "/ws/b.txt", None))
    job = st.JobRecord(sid, "bash-1", "make", "build", "running", None, None, time.time(), None)
    writer.write(st.JobPut(sid, job, writer.run))
    done = st.JobRecord(sid, "bash-1", "make", "build", "done", "exit code 0", 0, job.started,
                        time.time(), 0, 11, 0)
    writer.write(st.JobPut(sid, done, writer.run, b"hello world"),
                 st.JobCursor(sid, "bash-1", 5))
    restored = store.restore(sid)
    assert restored.info.id == sid
    assert restored.state == {("goals", "goal"): {"version": 1, "goal": None}}
    assert store.state_value(sid, "goals", "goal") == {"version": 1, "goal": None}
    assert store.state_value(sid, "todos", "list") is None  # deleted
    assert store.state_value(sid, "goals", "other") is None
    assert store.state_value("nosuch", "goals", "goal") is None
    assert restored.ledger == {"/ws/a.txt": {"absent": True}}
    [back] = restored.jobs
    assert (back.status, back.exit_code, back.cursor, back.log_bytes) == ("done", 0, 5, 11)
    assert store.job_log(sid, "bash-1") == b"hello world"
    assert store.job_log(sid, "bash-9") is None
    with pytest.raises(st.UnknownSession):
        store.restore("nosuch")


def test_results_are_found_by_call_id_and_ref_and_trimmed_oldest_first(store: Any,
                                                                       writer: Writer) -> None:
    sid = writer.session("s1")
    batch = writer.batch(sid)
    for i in range(1, 4):  # three truncated results of 100 bytes, shown cut
        writer.call(sid, batch, f"c{i}", "emit", {}, str(i) * 100, shown="cut", seq=i)
    rows = store.call_results(sid, "c1")
    assert len(rows) == 1 and rows[0][2] == 100 and rows[0][4] is True
    ref = rows[0][1]
    assert store.result_by_ref(sid, ref)[1] == "c1"
    assert store.result_text(rows[0][0]) == "1" * 100
    writer.write(st.ResultsTrimmed(sid, 250))  # keeps the newest two
    assert [c.text is not None for c in store.calls(sid)] == [False, True, True]
    assert store.call_results(sid, "c1")[0][4] is False
    assert store.calls(sid)[0].seen == "cut"  # what the model saw is kept
    assert store.restore(sid).result_seq == 3


def test_search_ranks_kinds_scopes_and_snippets(store: Any, writer: Writer) -> None:
    a = writer.session("a", "/ws/a")
    b = writer.session("b", "/ws/b")
    writer.message(a, "user", "the tokenizer drops unicode quotes")
    writer.message(a, "assistant", "I will look at the tokenizer tests")
    batch = writer.batch(a)
    writer.call(a, batch, "c1", "grep", {"pattern": "tokenizer"}, "src/tokenizer.py:10")
    writer.call(a, batch, "c2", "read_file", {"path": "x"}, "tokenizer broke: unicode",
                error="tool_error")
    writer.message(b, "user", "tokenizer in another project")
    default = store.search("tokenizer", workspaces=["/ws/a"])
    assert {h.kind for h in default} == {"user_text", "assistant_text", "tool_input",
                                         "tool_error"}
    assert all(h.session == a and h.workspace == "/ws/a" for h in default)
    assert all("[tokenizer]" in h.snippet for h in default)
    assert default == sorted(default, key=lambda h: h.score)
    outputs = store.search("tokenizer", workspaces=["/ws/a"], kinds=("tool_output",))
    assert [(h.kind, h.tool) for h in outputs] == [("tool_output", "grep")]
    assert {h.session for h in store.search("tokenizer")} == {a, b}
    assert [h.kind for h in store.search("tokenizer", tool="read_file")] == ["tool_error"]
    assert len(store.search("tokenizer", limit=2)) == 2
    unicode = store.search("UNICODE quotes", workspaces=["/ws/a"], kinds=("user_text",))
    assert unicode[0].seq == 1
    assert store.search("", workspaces=None) == []
    assert store.search('" OR * NEAR(', workspaces=None) == []  # syntax is never injected


def test_search_leaves_out_calls_still_running(store: Any, writer: Writer) -> None:
    sid = writer.session("s1")
    writer.call(sid, writer.batch(sid), "c1", "history", {"query": "needle"}, None)
    assert store.search("needle") == []


def test_prune_keeps_open_sessions_and_deletes_by_age_then_size(store: Any,
                                                               writer: Writer) -> None:
    now = time.time()
    for i, age_days in enumerate((400, 200, 10, 1)):
        sid = writer.session(f"s{i}", started=now - age_days * 86400)
        writer.call(sid, writer.batch(sid), "c1", "emit", {}, "x" * 50_000)
        writer.write(st.SessionClosed(sid, now - age_days * 86400))
    writer.session("open", started=now - 500 * 86400)
    report = store.prune(keep_days=100, max_bytes=None, now=now)
    assert report.sessions == 2
    assert sorted(i.id for i in store.sessions()) == ["open", "s2", "s3"]
    report = store.prune(keep_days=None, max_bytes=1, now=now)
    assert [i.id for i in store.sessions()] == ["open"]  # open sessions are never deleted
    assert report.bytes_after <= report.bytes_before
    assert store.entries("s3") == []
    assert store.integrity_check() == "ok"


def test_recover_settles_the_runs_of_dead_processes(store: Any) -> None:
    dead = Writer(store, pid=2**22 + 12345)  # no such process
    sid = dead.session("s1")
    dead.call(sid, dead.batch(sid), "c1", "bash", {}, None)
    job = st.JobRecord(sid, "bash-1", "sleep 60", None, "running", None, None, time.time(),
                       None)
    dead.write(st.JobPut(sid, job, dead.run))
    alive = Writer(store)
    other = alive.session("s2")
    alive.call(other, alive.batch(other), "c1", "bash", {}, None)
    assert store.recover() == 1
    assert store.calls(sid)[0].outcome == st.INTERRUPTED
    assert (store.jobs(sid)[0].status, store.jobs(sid)[0].reason) == ("killed", st.HOST_EXITED)
    assert store.session(sid).status == "interrupted"
    assert store.calls(other)[0].outcome == st.RUNNING  # a live process's call is left alone
    assert store.recover() == 0
