"""Issue 38: recording a call costs the calling thread (the event loop) only a queued
reference. Every store op of a call (its batch, start, end, notices, execution fact) is
built by the store's writer thread, and what it builds is what the loop would have built:
the calls come back from the store whole, in order, with their verdicts and results."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest
from callgate import Host, Registry, ToolCall, ToolSpec, hookimpl
from callgate import store as st

WRITER = "callgate-store-writer"
OPS = (st.BatchStarted, st.CallStarted, st.CallEnded, st.NoticeRecorded, st.FactRecorded)


async def noop(ctx: Any, args: dict[str, Any]) -> str:
    return "ok " + args["text"]


def write(ctx: Any, args: dict[str, Any]) -> str:
    return "wrote"


class Tools:
    __name__ = "record_tools"

    @hookimpl
    def callgate_register_tools(self, registry: Registry) -> None:
        schema = {"type": "object", "properties": {"text": {"type": "string"}},
                  "required": ["text"], "additionalProperties": False}
        registry.add(ToolSpec(name="noop", description="Echoes.", schema=schema,
                              read_only=True, execute=noop, blocking=False))
        registry.add(ToolSpec(name="poke", description="Writes nothing.", schema=schema,
                              read_only=False, execute=write, blocking=False))


def built_by_thread(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """``(op class, thread name)`` of every store op built from now on."""
    built: list[tuple[str, str]] = []
    for cls in OPS:
        original = cls.__init__

        def init(self: Any, *args: Any, _original: Any = original, _name: str = cls.__name__,
                 **kwargs: Any) -> None:
            built.append((_name, threading.current_thread().name))
            _original(self, *args, **kwargs)

        monkeypatch.setattr(cls, "__init__", init)
    return built


def test_no_store_op_of_a_call_is_built_on_the_event_loop(monkeypatch: pytest.MonkeyPatch,
                                                          tmp_path: Path) -> None:
    host = Host.boot({"permissions": {"mode": "allow"}}, plugins=[Tools()],
                     entrypoints=False, surface="full")
    built = built_by_thread(monkeypatch)

    async def go() -> str:
        async with host.open_session(str(tmp_path)) as session:
            for i in range(20):
                if i == 3:
                    session.notices.put("test", "heads up")
                await session.run_batch([ToolCall(f"c{i}", "noop", {"text": str(i)})])
            await session.run_batch([ToolCall("p1", "poke", {"text": "x"}),
                                     ToolCall("n1", "noop", {"text": "y"})])
            session.flush()
            return session.id

    session_id = asyncio.run(go())
    kinds = [name for name, _thread in built]
    assert kinds.count("CallStarted") == 22 and kinds.count("CallEnded") == 22
    assert kinds.count("BatchStarted") == 21 and kinds.count("FactRecorded") == 1
    assert kinds.count("NoticeRecorded") == 1
    on_loop = [(name, thread) for name, thread in built if thread != WRITER]
    assert on_loop == [], f"store ops built off the writer thread: {on_loop}"
    store = st.open_store()
    try:
        calls = store.calls(session_id)
        assert [c.call_id for c in calls] == [*(f"c{i}" for i in range(20)), "p1", "n1"]
        assert [c.text for c in calls[:20]] == [f"ok {i}" for i in range(20)]
        assert {c.outcome for c in calls} == {"ok"}
        assert [c.batch for c in calls] == [*range(1, 21), 21, 21]
        assert [c.position for c in calls[-2:]] == [0, 1]
        assert calls[-2].permission == "allow" and calls[0].decided_by == "read_only"
        assert all(c.result_sha256 and c.result_ref for c in calls)
        [notice] = [e for e in store.entries(session_id) if e.kind == "notice"]
        assert notice.text == "heads up" and notice.seq == calls[3].seq + 1
        assert calls[3].shown == "ok 3\n\nheads up"
        [fact] = store.facts(session_id)
        assert fact.call_id == "p1" and fact.tool == "poke"
    finally:
        store.close()


def test_a_group_of_calls_is_a_handful_of_statements_not_four_per_call(tmp_path: Path) -> None:
    """The SQLite writer reads and writes each session's counters once per group and inserts
    the group's calls in one statement: the GIL goes to the writer per statement, so a busy
    event loop waits for the writer per group, not per call."""
    host = Host.boot({}, plugins=[Tools()], entrypoints=False, surface="full")
    statements: list[str] = []

    async def go() -> str:
        async with host.open_session(str(tmp_path)) as session:
            await session.run_batch([ToolCall("first", "noop", {"text": "0"})])
            session.flush()
            session.journal.store._writer_conn().set_trace_callback(statements.append)
            session.journal.recorder._idle = False  # as if woken already: the flush's group
            for i in range(50):
                await session.run_batch([ToolCall(f"c{i}", "noop", {"text": str(i)})])
            session.flush()
            session.journal.store._writer_conn().set_trace_callback(None)
            return session.id

    session_id = asyncio.run(go())
    # SQLite reports a statement again as each trigger it fires starts (the search index's),
    # and the triggers' own statements as comments: the statements run are what is left
    run = [s for i, s in enumerate(statements)
           if not s.startswith("--") and s not in statements[max(0, i - 8):i]]
    assert run[0].startswith("BEGIN") and run[-1] == "COMMIT"
    assert len(run) <= 8, [s[:60] for s in run]  # four per call (200) before
    store = st.open_store()
    try:
        calls = store.calls(session_id)
        assert [c.call_id for c in calls] == ["first", *(f"c{i}" for i in range(50))]
        assert [c.seq for c in calls] == list(range(1, 52))
        assert [c.batch for c in calls] == list(range(1, 52))
        assert [c.text for c in calls[1:]] == [f"ok {i}" for i in range(50)]
        info = store.session(session_id)
        assert info is not None and info.calls == 51
        assert info.preview == 'noop {"text":"0"}'
        # the rows the result store reads back are the calls' own
        assert store.result_text(_row(store, session_id, "c49")) == "ok 49"
    finally:
        store.close()


def _row(store: Any, session: str, call_id: str) -> int:
    [(row, *_rest)] = store.call_results(session, call_id)
    return row
