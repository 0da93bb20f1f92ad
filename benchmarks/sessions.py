"""The session store's costs (issue 18), each against a baseline measured in the same run.

- **Recording overhead**: a trivial call (a non-blocking tool returning "ok") through
  ``session.run`` with ``[sessions] record = "all"`` vs ``"off"``, rounds interleaved;
  the difference of the medians per call. Target ≤ 20 µs.
- **History search** over a store of 100,000 recorded calls (plus a message per ten calls,
  spread over 100 sessions of two workspaces), project scope, default kinds (and with
  ``tool_output`` too, reported), through the
  store's ``search`` (what ``history`` calls) and through the ``history`` tool; median over
  a set of queries from rare to common words. Baseline: a ``LIKE '%word%'`` scan of the same
  rows (what a grep over the records costs). Target ≤ 50 ms.
- **Resume** of a session with 10,000 calls (and 500 observed files, todo and goal state):
  ``host.open_session(workspace, resume=id)`` until the session is usable, and its close.
  Baseline: opening a new session on the same store. Target ≤ 200 ms.
- **Store size** per 1,000 typical calls (a mix of small, medium and large results like
  read_file, grep and bash produce), with and without the search index (report).

Everything happens in a temporary ``CALLGATE_HOME``.

    uv run python benchmarks/sessions.py [--calls 100000] [--repeat 7] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sqlite3
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import _hermetic  # noqa: F401  (first: a private CALLGATE_HOME and user config)

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _timing import summary
from callgate_goals import GOALS
from callgate_workflow import TODOS

TARGET_RECORD_US = 20.0
TARGET_SEARCH_MS = 50.0
TARGET_RESUME_MS = 200.0
QUERIES = ("timeout", "parse config", "socket connection refused", "utf-8 decode error",
           "deprecated warning", "tempfile cleanup", "kestrel")


class Corpus:
    """Typical recorded text: real source lines of the Python standard library (what
    read_file and grep return), its comments (what people and models write about code),
    its file paths and identifiers (tool arguments). Fixed seed, sorted files."""

    def __init__(self, seed: int, files: int = 400) -> None:
        import sysconfig

        self.rng = random.Random(seed)
        root = Path(sysconfig.get_paths()["stdlib"])
        paths = sorted(p for p in root.rglob("*.py") if "test" not in p.parts)[:files]
        self.lines: list[str] = []
        self.comments: list[str] = []
        self.paths = [str(p.relative_to(root)) for p in paths]
        for path in paths:
            for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
                self.lines.append(line)
                if line.strip().startswith("#") and len(line.strip()) > 20:
                    self.comments.append(line.strip().lstrip("# "))
        self.words = sorted({w for line in self.lines[:20000] for w in line.split()
                             if w.isidentifier() and len(w) > 3})

    def window(self, lines: int) -> str:
        start = self.rng.randrange(0, len(self.lines) - lines)
        return "\n".join(f"{i + 1}→{t}" for i, t in
                         enumerate(self.lines[start:start + lines]))

    def result(self) -> str:
        """Mostly short (a grep, an edit), some a read_file window, a few a long log."""
        pick = self.rng.random()
        size = self.rng.randint(3, 40) if pick < 0.6 else self.rng.randint(40, 200) \
            if pick < 0.9 else self.rng.randint(200, 800)
        return self.window(size)

    def error(self) -> str:
        rng = self.rng
        return rng.choice((
            f"FS_NOT_FOUND: {rng.choice(self.paths)} does not exist",
            f"FS_STALE_VERSION: {rng.choice(self.paths)} changed since it was read",
            f"blocked: bash is denied by rule Bash(rm -rf:*) ({rng.choice(self.comments)})",
            f"invalid_arguments: /pattern: {rng.choice(self.words)} is not a string"))

    def message(self) -> str:
        return " ".join(self.rng.choice(self.comments) for _ in range(self.rng.randint(1, 3)))

    def arguments(self) -> dict[str, Any]:
        return {"path": self.rng.choice(self.paths), "pattern": self.rng.choice(self.words)}


# --- recording overhead -----------------------------------------------------------------


def _trivial_host(record: str) -> Any:
    from callgate import Host, Registry, ToolSpec, hookimpl

    class Noop:
        __name__ = "noop"

        @hookimpl
        def callgate_register_tools(self, registry: Registry) -> None:
            registry.add(ToolSpec(name="noop", description="Do nothing.", read_only=True,
                                  schema={"type": "object", "properties": {
                                      "path": {"type": "string"}}},
                                  execute=lambda ctx, args: "ok", blocking=False,
                                  visibility="surface"))

    return Host.boot({"sessions": {"record": record}}, plugins=[Noop()], entrypoints=False,
                     surface="full")


async def _recording(calls: int, rounds: int, workspace: str) -> dict[str, Any]:
    from callgate import ToolCall

    sessions = {mode: _trivial_host(mode).open_session(workspace) for mode in ("all", "off")}
    per_call: dict[str, list[float]] = {"all": [], "off": []}
    call = ToolCall("c", "noop", {"path": "a.txt"})
    for session in sessions.values():  # warm-up
        for _ in range(200):
            await session.run(call)
    for _ in range(rounds):
        for mode, session in sessions.items():
            for _ in range(calls // rounds):
                started = time.perf_counter()
                await session.run(call)
                per_call[mode].append(time.perf_counter() - started)
    for session in sessions.values():
        await session.close()
    on, off = summary(per_call["all"], "us"), summary(per_call["off"], "us")
    return {"record_all": on, "record_off": off,
            "overhead_us": round(on["median"] - off["median"], 2),
            "ratio": round(on["median"] / off["median"], 3), "target_us": TARGET_RECORD_US}


# --- a big store ----------------------------------------------------------------------------


def populate(store: Any, calls: int, sessions: int, workspaces: tuple[str, str] = ("/a", "/b"),
             seed: int = 18) -> list[str]:
    """``calls`` typical recorded calls (three per batch, a message per ten calls, one in
    twenty an error) over ``sessions`` sessions of two workspaces; the session ids."""
    from callgate import store as st

    corpus = Corpus(seed)
    rng = corpus.rng
    run = st.RunStarted("bench", 1, "bench", None, time.time())
    store.write([run])
    ids = []
    per = calls // sessions
    now = time.time() - 86400
    for s in range(sessions):
        sid = f"{s:032x}"
        ids.append(sid)
        ops: list[Any] = [st.SessionOpened(run, sid, None, workspaces[s % 2], None, None,
                                           now + s, "lean", "posix", "linux", "all"),
                          st.SessionClosed(sid, now + s + 60)]
        batch = None
        for i in range(per):
            if i % 10 == 0:
                ops.append(st.MessageRecorded(sid, "user" if i % 20 == 0 else "assistant",
                                              corpus.message(), now + s))
            if i % 3 == 0:
                batch = st.BatchStarted(sid)
                ops.append(batch)
            name = rng.choice(("read_file", "grep", "bash", "edit_file", "glob"))
            start = st.CallStarted(sid, batch, i % 3, f"c{i}", name, corpus.arguments(),
                                   "human", now + s, run)
            failed = rng.random() < 0.05
            text = corpus.error() if failed else corpus.result()
            end = st.CallEnded(start, None, "tool_error" if failed else "ok", failed,
                               "x" if failed else None, "allow", "read_only", text,
                               text[:30000] if len(text) > 30000 else None, now + s + 0.01, i)
            start.end = end
            ops += [start, end]
            if len(ops) > 3000:
                store.write(ops)
                ops = []
        store.write(ops)
    return ids


def _search(store: Any, workspace: str, repeat: int) -> dict[str, Any]:
    from callgate.store import SEARCH_KINDS

    times, like, outputs = [], [], []
    conn = store._reader_conn()
    for _ in range(repeat):
        for query in QUERIES:
            started = time.perf_counter()
            store.search(query, workspaces=[workspace])
            times.append(time.perf_counter() - started)
            started = time.perf_counter()
            store.search(query, workspaces=[workspace], kinds=SEARCH_KINDS)
            outputs.append(time.perf_counter() - started)
            word = query.split()[0]
            started = time.perf_counter()  # the baseline: scan every row, as grep would
            conn.execute("SELECT COUNT(*) FROM entries e JOIN sessions s ON s.id = e.session "
                         "WHERE s.workspace = ? AND (e.text LIKE ? OR e.arguments LIKE ?)",
                         (workspace, f"%{word}%", f"%{word}%")).fetchall()
            like.append(time.perf_counter() - started)
    found = summary(times, "ms")
    scan = summary(like, "ms")
    return {"search": found, "search_with_outputs": summary(outputs, "ms"), "like_scan": scan,
            "ratio": round(found["median"] / scan["median"], 3), "target_ms": TARGET_SEARCH_MS}


def _history_tool(workspace: str, repeat: int) -> dict[str, Any]:
    import callgate_sessions
    from callgate import ToolCall, sync

    host = sync.Host.boot({}, plugins=[callgate_sessions], entrypoints=False, surface="full")
    session = host.open_session(workspace)
    times = []
    for _ in range(repeat):
        for query in QUERIES:
            started = time.perf_counter()
            result = session.run(ToolCall("h", "history", {"operation": "search",
                                                          "query": query}))
            times.append(time.perf_counter() - started)
            assert not result.is_error, result.text
    host.close()
    return summary(times, "ms")


def _sizes(home: Path, calls: int) -> dict[str, Any]:
    path = home / "sizes.sqlite3"
    from callgate_store_sqlite._store import SqliteStore

    store = SqliteStore.open(str(path))
    populate(store, calls, 10, seed=7)
    store.close()
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    total = path.stat().st_size
    try:
        index = conn.execute("SELECT SUM(pgsize) FROM dbstat WHERE name LIKE 'search%'"
                             ).fetchone()[0] or 0
    except sqlite3.OperationalError:
        index = None
    text = conn.execute("SELECT SUM(LENGTH(CAST(text AS BLOB))) + SUM(LENGTH(CAST(arguments "
                        "AS BLOB))) FROM entries").fetchone()[0]
    conn.close()
    per = 1000 / calls
    return {"calls": calls, "bytes": total, "per_1000_calls_mb": round(total * per / 2**20, 2),
            "search_index_per_1000_calls_mb": None if index is None else
            round(index * per / 2**20, 2),
            "recorded_text_per_1000_calls_mb": round(text * per / 2**20, 2)}


# --- resume -----------------------------------------------------------------------------------


def _resume(home: Path, workspace: str, calls: int, repeat: int) -> dict[str, Any]:
    import callgate_files
    import callgate_goals
    import callgate_workflow
    from callgate import ToolCall, sync
    from callgate import store as st

    host = sync.Host.boot({}, plugins=[callgate_files, callgate_goals, callgate_workflow],
                          entrypoints=False, surface="full")
    session = host.open_session(workspace, origin="human")
    for i in range(500):
        Path(workspace, f"f{i}.txt").write_text(f"file {i}\n")
    for i in range(500):
        session.run(ToolCall(f"r{i}", "read_file", {"path": f"f{i}.txt"}))
    session.run(ToolCall("g", "create_goal", {"objective": "ship it"}))
    session.run(ToolCall("t", "todo_write", {"todos": [{"content": f"step {i}",
                                                        "status": "pending"}
                                                       for i in range(20)]}))
    sid = session.id
    session.close()
    store = host.store
    corpus = Corpus(3)
    run = st.RunStarted("fill", 1, "bench", None, time.time())
    ops: list[Any] = [run]
    batch = st.BatchStarted(sid)
    ops.append(batch)
    for i in range(calls - 502):
        start = st.CallStarted(sid, batch, 0, f"x{i}", "grep", {"pattern": "x"}, "human",
                               time.time(), run)
        end = st.CallEnded(start, None, "ok", False, None, "allow", "read_only",
                           corpus.result(), None, time.time(), 1000 + i)
        start.end = end
        ops += [start, end]
    store.write(ops)
    resumed, fresh = [], []
    for _ in range(repeat):
        started = time.perf_counter()
        again = host.open_session(workspace, resume=sid)
        assert again.extension(GOALS).current() is not None and len(again.extension(TODOS)) == 20
        assert len(again.observations()) == 500
        resumed.append(time.perf_counter() - started)
        again.close()
        started = time.perf_counter()
        new = host.open_session(workspace)
        fresh.append(time.perf_counter() - started)
        new.close()
    host.close()
    r, f = summary(resumed, "ms"), summary(fresh, "ms")
    return {"calls": calls, "observed_files": 500, "resume": r, "new_session": f,
            "ratio": round(r["median"] / f["median"], 3), "target_ms": TARGET_RESUME_MS}


# --- the run ------------------------------------------------------------------------------------


def run(calls: int = 100_000, repeat: int = 7, record_calls: int = 20_000,
        resume_calls: int = 10_000, size_calls: int = 5_000) -> dict[str, Any]:
    previous = os.environ.get("CALLGATE_HOME")
    with tempfile.TemporaryDirectory(prefix="callgate-bench-sessions-") as tmp:
        home = Path(tmp) / "home"
        os.environ["CALLGATE_HOME"] = str(home)
        try:
            workspace = Path(tmp) / "ws"
            workspace.mkdir()
            out: dict[str, Any] = {}
            out["recording"] = asyncio.run(_recording(record_calls, 10, str(workspace)))
            from callgate.store import open_store

            store = open_store()
            pair = []
            for name in ("a", "b"):
                (Path(tmp) / name).mkdir()
                pair.append(str((Path(tmp) / name).resolve()))
            started = time.perf_counter()
            populate(store, calls, 100, (pair[0], pair[1]))
            out["populate_s"] = round(time.perf_counter() - started, 1)
            out["search_calls"] = calls
            out["history"] = _search(store, pair[0], repeat)
            store.close()
            out["history_tool"] = _history_tool(pair[0], max(1, repeat // 2))
            out["resume"] = _resume(home, str(workspace), resume_calls, repeat)
            out["size"] = _sizes(home, size_calls)
            return out
        finally:
            if previous is None:
                os.environ.pop("CALLGATE_HOME", None)
            else:
                os.environ["CALLGATE_HOME"] = previous


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    result = run(args.calls, args.repeat)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        rec, hist, res, size = (result["recording"], result["history"], result["resume"],
                                result["size"])
        print(f"recording: {rec['record_all']['median']} µs vs off "
              f"{rec['record_off']['median']} µs: +{rec['overhead_us']} µs per call "
              f"(target ≤ {TARGET_RECORD_US:.0f})")
        print(f"history search over {result['search_calls']:,} calls: "
              f"{hist['search']['median']} ms (LIKE scan {hist['like_scan']['median']} ms; "
              f"the history tool {result['history_tool']['median']} ms; target ≤ "
              f"{TARGET_SEARCH_MS:.0f})")
        print(f"resume of {res['calls']:,} calls: {res['resume']['median']} ms (a new session "
              f"{res['new_session']['median']} ms; target ≤ {TARGET_RESUME_MS:.0f})")
        print(f"store size: {size['per_1000_calls_mb']} MB per 1,000 typical calls (search "
              f"index {size['search_index_per_1000_calls_mb']} MB, recorded text "
              f"{size['recorded_text_per_1000_calls_mb']} MB)")
    return result


if __name__ == "__main__":
    main()
