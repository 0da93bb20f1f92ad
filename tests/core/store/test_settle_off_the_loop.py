"""Issue 38: while a session records, its result store's per-call bookkeeping (settling the
results whose records are committed: letting their records and bytes go, forgetting the
oldest) runs on the store's writer thread after each commit, not on the calling thread
(the event loop) once per call; and the writer is woken once per gathering, not per call."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest
from callgate import Host, Registry, ToolCall, ToolSpec, hookimpl
from callgate._results.results import ResultStore
from callgate._store.recorder import Recorder

WRITER = "callgate-store-writer"


async def echo(ctx: Any, args: dict[str, Any]) -> str:
    return args["text"]


class Tools:
    __name__ = "settle_tools"

    @hookimpl
    def callgate_register_tools(self, registry: Registry) -> None:
        schema = {"type": "object", "properties": {"text": {"type": "string"}},
                  "required": ["text"], "additionalProperties": False}
        registry.add(ToolSpec(name="echo", description="Echoes.", schema=schema,
                              read_only=True, execute=echo, blocking=False))


def count_by_thread(monkeypatch: pytest.MonkeyPatch, cls: type, name: str) -> list[str]:
    """The name of the thread of every call of ``cls.name`` from now on."""
    seen: list[str] = []
    original = getattr(cls, name)

    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(threading.current_thread().name)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(cls, name, wrapper)
    return seen


def test_the_result_store_settles_on_the_writer_thread_not_per_call(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    host = Host.boot({}, plugins=[Tools()], entrypoints=False, surface="full")
    settled = count_by_thread(monkeypatch, ResultStore, "_release_memory")
    big = "x" * 70_000  # beyond what is kept in memory once committed

    async def go() -> tuple[list[Any], int]:
        async with host.open_session(str(tmp_path)) as session:
            for i in range(20):
                await session.run_batch([ToolCall(f"c{i}", "echo", {"text": f"{i} {big}"})])
            session.flush()
            held = session.results.listing()
            return held, session.results.memory_bytes

    held, memory = asyncio.run(go())
    on_loop = [t for t in settled if t != WRITER]
    assert on_loop == [], f"{len(on_loop)} settlings on the calling thread"  # 20 before
    assert WRITER in settled
    # what settling does is done: every committed record let go, the big bytes too
    assert len(held) == 20
    assert all(item.end is None and item.row is not None for item in held)
    assert all(item.data is None for item in held) and memory == 0


def test_the_writer_is_woken_once_per_gathering_not_per_call(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """200 back-to-back calls (the loop never idles) wake the writer far fewer times than
    they queue entries (400: a start and an end each)."""
    host = Host.boot({}, plugins=[Tools()], entrypoints=False, surface="full")
    wakes: list[str] = []
    deferred: list[int] = []
    original_defer = Recorder.defer

    def defer(self: Recorder, entry: tuple[Any, ...]) -> None:
        deferred.append(1)
        if self._idle:
            wakes.append(threading.current_thread().name)
        original_defer(self, entry)

    monkeypatch.setattr(Recorder, "defer", defer)

    async def go() -> None:
        async with host.open_session(str(tmp_path)) as session:
            session.journal.call_started = session.journal.call_ended = \
                session.journal.recorder.defer
            for i in range(200):
                await session.run_batch([ToolCall(f"c{i}", "echo", {"text": str(i)})])
            session.flush()

    asyncio.run(go())
    assert len(deferred) == 400
    assert len(wakes) <= 50, f"{len(wakes)} wake-ups for 400 entries"


def test_a_call_whose_record_failed_to_build_holds_up_no_later_result(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The first call's start cannot be built (the writer logs it and goes on), so it never
    gets a record: its stored result must not stay linked to the pipeline's step, or every
    later result would keep its bytes (the result store settles in order and stops at the
    first one not committed)."""
    from callgate._pipeline import record

    host = Host.boot({}, plugins=[Tools()], entrypoints=False, surface="full")
    original = record._started
    failed: list[int] = []

    def _started(journal: Any, calls: Any, origin: Any, at: float) -> Any:
        if not failed:
            failed.append(1)
            raise RuntimeError("cannot build this one")
        return original(journal, calls, origin, at)

    monkeypatch.setattr(record, "_started", _started)
    big = "x" * 70_000

    async def go() -> tuple[list[Any], int]:
        async with host.open_session(str(tmp_path)) as session:
            for i in range(5):
                await session.run_batch([ToolCall(f"c{i}", "echo", {"text": f"{i} {big}"})])
            session.flush()
            return session.results.listing(), session.results.memory_bytes

    held, memory = asyncio.run(go())
    later = [item for item in held if item.call_id != "c0"]
    assert failed and [item.call_id for item in later] == ["c1", "c2", "c3", "c4"]
    assert all(item.end is None and item.row is not None for item in later)
    assert all(item.data is None for item in later) and memory == 0
