"""Figure 4, concurrency.

1. N sessions (on two hosts) read one file, then all change it at once from that same
   observation with edit_file / multi_edit / delete_range / write_file: each round exactly
   one wins, every other is refused (FS_STALE_VERSION), and the file holds exactly the
   winner's change.
2. Eight threads drive one session with mixed batches (reads, searches, edits of a
   shared file, writes, shell commands, job reads): nothing deadlocks (every thread
   finishes within a timeout), each batch's results come back in call order with the
   right content, and no edit of the shared file is lost.
"""

from __future__ import annotations

import faulthandler
import sys
import threading
from collections.abc import Callable
from typing import Any

import pytest
from callgate import ToolCall, sync
from callgate.files import held_paths

LINES = [f"line {i}" for i in range(8)]
BUILT_IN = ["files", "shell", "search"]


def change_for(i: int) -> tuple[str, dict[str, Any], str]:
    """Session ``i``'s change of ``f.txt`` and the text the file holds if it wins."""
    text = "\n".join(LINES) + "\n"
    kind = i % 4
    if kind == 0:
        return "edit_file", {"path": "f.txt", "old_string": f"line {i}",
                             "new_string": f"LINE {i} by {i}"}, \
            text.replace(f"line {i}\n", f"LINE {i} by {i}\n")
    if kind == 1:
        return "multi_edit", {"path": "f.txt", "edits": [
            {"old_string": f"line {i}", "new_string": f"L{i}"},
            {"old_string": "line 0", "new_string": f"zero by {i}"}]}, \
            text.replace(f"line {i}\n", f"L{i}\n").replace("line 0\n", f"zero by {i}\n")
    if kind == 2:
        return "delete_range", {"path": "f.txt", "start_anchor": f"line {i}",
                                "end_anchor": f"line {i}"}, text.replace(f"line {i}\n", "")
    return "write_file", {"path": "f.txt", "content": f"written by {i}\n"}, f"written by {i}\n"


def test_sessions_racing_from_one_observation_have_exactly_one_winner(
        callgate_session: Callable[..., Any], cases: Callable[[int, int], int],
        figure: Callable[..., None]) -> None:
    rounds, n = cases(200, 8), 8
    first = callgate_session(entrypoints=["files"], config={"files": {"watch": False}})
    other_host = sync.Host.boot({"files": {"watch": False}}, entrypoints=["files"])
    try:
        sessions = [first.sync] + [first.host.open_session(first.workspace)
                                   for _ in range(n // 2 - 1)] + \
            [other_host.open_session(first.workspace) for _ in range(n - n // 2)]
        target = first.workspace / "f.txt"
        failures: list[str] = []
        winners: dict[str, int] = {}
        for r in range(rounds):
            target.write_text("\n".join(LINES) + "\n")
            for s in sessions:
                assert not s.run(ToolCall("r", "read_file", {"path": "f.txt"})).is_error
            barrier = threading.Barrier(n)
            results: list[Any] = [None] * n

            def go(i: int, barrier: threading.Barrier, results: list[Any]) -> None:
                tool, args, _ = change_for(i)
                barrier.wait(timeout=30)
                results[i] = sessions[i].run(ToolCall(f"c{i}", tool, args))

            threads = [threading.Thread(target=go, args=(i, barrier, results))
                       for i in range(n)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(timeout=60)
            if any(t.is_alive() for t in threads):
                faulthandler.dump_traceback(file=sys.stderr)
                pytest.fail(f"round {r}: a session hung")
            ok = [i for i, res in enumerate(results) if not res.is_error]
            refused = [i for i, res in enumerate(results)
                       if res.is_error and res.error.kind == "stale_version"]
            if len(ok) != 1 or len(refused) != n - 1:
                failures.append(f"round {r}: {len(ok)} won, {len(refused)} refused: " +
                                "; ".join(res.text[:80] for res in results))
                continue
            tool, _, expected = change_for(ok[0])
            winners[tool] = winners.get(tool, 0) + 1
            if target.read_text() != expected:
                failures.append(f"round {r}: the file does not hold the winner's change")
            if held_paths():
                failures.append(f"round {r}: writer locks still held: {held_paths()}")
    finally:
        other_host.close()
    figure("concurrency: one observation, N sessions", cases=rounds, sessions=n,
           failures=len(failures), winners_by_tool=winners)
    assert not failures, "\n".join(failures[:10])


def test_eight_threads_with_mixed_batches_on_one_session_finish_in_order(
        callgate_session: Callable[..., Any], cases: Callable[[int, int], int],
        figure: Callable[..., None]) -> None:
    threads_n, batches = 8, cases(125, 4)
    files = {f"t{t}.txt": f"thread {t} count 0\n" for t in range(threads_n)}
    files["shared.txt"] = "".join(f"slot {t}: 0\n" for t in range(threads_n))
    files["src/a.py"] = "def needle():\n    return 1\n"
    s = callgate_session(entrypoints=BUILT_IN, files=files,
                         config={"files": {"watch": False}, "shell": {"max_running_jobs": 64}})
    assert not s.call("read_file", {"path": "shared.txt"}).is_error
    failures: list[str] = []
    done = [0] * threads_n

    def batch(t: int, b: int) -> list[tuple[ToolCall, Callable[[Any], bool]]]:
        mine = f"t{t}.txt"
        return [
            (ToolCall(f"{t}-{b}-r", "read_file", {"path": mine}),
             lambda r: f"thread {t} count {b}" in r.text),
            (ToolCall(f"{t}-{b}-g", "grep", {"pattern": "needle", "path": "src"}),
             lambda r: r.text.startswith("src/a.py:1:")),
            (ToolCall(f"{t}-{b}-e", "edit_file", {"path": mine, "old_string": f"count {b}",
                                                   "new_string": f"count {b + 1}"}),
             lambda r: not r.is_error),
            (ToolCall(f"{t}-{b}-s", "edit_file", {"path": "shared.txt",
                                                   "old_string": f"slot {t}: {b}\n",
                                                   "new_string": f"slot {t}: {b + 1}\n"}),
             lambda r: not r.is_error),
            (ToolCall(f"{t}-{b}-l", "ls", {"path": "."}), lambda r: "shared.txt" in r.text),
            (ToolCall(f"{t}-{b}-x", "bash", {"command": f"echo token-{t}-{b}"}),
             lambda r: r.text.startswith(f"token-{t}-{b}\n")),
            (ToolCall(f"{t}-{b}-j", "job_output", {}), lambda r: not r.is_error),
        ]

    def worker(t: int) -> None:
        assert not s.call("read_file", {"path": f"t{t}.txt"}).is_error
        for b in range(batches):
            planned = batch(t, b)
            results = s.sync.run_batch([c for c, _ in planned])
            ids = [r.call_id for r in results]
            if ids != [c.id for c, _ in planned]:
                failures.append(f"thread {t} batch {b}: results out of order: {ids}")
            for (call, check), result in zip(planned, results, strict=True):
                if not check(result):
                    failures.append(f"thread {t} batch {b}: {call.name} gave "
                                    f"{result.text[:120]!r}")
            done[t] += 1

    workers = [threading.Thread(target=worker, args=(t,), daemon=True)
               for t in range(threads_n)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=30 + 4 * batches)
    hung = [t for t, w in enumerate(workers) if w.is_alive()]
    if hung:
        faulthandler.dump_traceback(file=sys.stderr)
    shared = (s.workspace / "shared.txt").read_text()
    lost = shared != "".join(f"slot {t}: {batches}\n" for t in range(threads_n))
    figure("concurrency: 8 threads, one session", cases=sum(done), threads=threads_n,
           calls=sum(done) * 7, deadlocks=len(hung), lost_updates=int(lost),
           failures=len(failures) + len(hung) + int(lost))
    assert not hung, f"threads {hung} did not finish: a deadlock"
    assert not failures, "\n".join(failures[:10])
    assert not lost, shared
