"""Writer calls of sibling sessions on one host: serialized per path by the gate's writer
lease and recorded as execution facts (who, what, which paths, when) — issue 22, item 1."""

from __future__ import annotations

import itertools
import threading
import time
from pathlib import Path

from callgate import ChildProfile, PathRole, ToolSpec, hookimpl

SLOW = 0.15


class SlowWriter:
    """``append_line {path, text}``: appends after a pause, so overlapping writers would
    interleave their read-pause-write and lose a line; it counts how many run at once."""

    __name__ = "facts_slow_writer"

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.running = 0
        self.most = 0

    def _append(self, ctx, args):
        with self.lock:
            self.running += 1
            self.most = max(self.most, self.running)
        try:
            # the gate leases the path (a new name); the lines go to a file beside it
            target = Path(ctx.gated["path"].path + ".lines")
            old = target.read_text() if target.exists() else ""
            time.sleep(SLOW)
            target.write_text(old + args["text"] + "\n")
            return "ok"
        finally:
            with self.lock:
                self.running -= 1

    @hookimpl
    def callgate_register_tools(self, registry):
        registry.add(
            ToolSpec(
                name="append_line",
                description="Append a line to a file.",
                visibility="surface",
                schema={
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["path", "text"],
                    "properties": {"path": {"type": "string"}, "text": {"type": "string"}},
                },
                execute=self._append,
                mutates_paths=(PathRole("path", "create"),),
            )
        )
        registry.add(
            ToolSpec(
                name="peek",
                description="Read nothing.",
                visibility="surface",
                read_only=True,
                schema={"type": "object", "additionalProperties": False, "properties": {}},
                execute=lambda ctx, args: "nothing",
            )
        )


def test_sibling_writers_of_one_path_never_overlap_and_are_recorded(callgate_session):
    writer = SlowWriter()
    s = callgate_session(plugins=[writer])
    kids = [s.child(ChildProfile(name=f"writer{i}")) for i in range(3)]
    errors: list[str] = []

    def write(i: int) -> None:
        r = kids[i].call("append_line", {"path": "log.txt", "text": f"line {i}"})
        if r.is_error:
            errors.append(r.text)

    threads = [threading.Thread(target=write, args=(i,)) for i in range(3)]
    began = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [], errors
    assert writer.most == 1  # never two at once on the path
    lines = s.read("log.txt.lines").decode().splitlines()
    assert sorted(lines) == ["line 0", "line 1", "line 2"]  # no lost update
    assert time.monotonic() - began >= SLOW * 3 * 0.9  # they took turns

    facts = [f for f in s.host.execution_facts() if f.tool == "append_line"]
    assert {f.session for f in facts} == {k.session.id for k in kids}
    assert {f.profile for f in facts} == {"writer0", "writer1", "writer2"}
    assert all(f.depth == 1 and f.paths == (str(s.path("log.txt").resolve()),) for f in facts)
    spans = sorted((f.started, f.ended) for f in facts if f.outcome == "ok")
    assert all(a_end <= b_start for (_, a_end), (b_start, _) in itertools.pairwise(spans))


def test_read_only_calls_leave_no_fact(callgate_session):
    s = callgate_session(plugins=[SlowWriter()])
    s.expect_ok("peek", {})
    assert s.host.execution_facts() == []
    s.expect_ok("append_line", {"path": "a.txt", "text": "x"})
    [fact] = s.host.execution_facts()
    assert (fact.session, fact.profile, fact.depth, fact.outcome) == (s.session.id, None, 0, "ok")


def test_a_call_the_gate_refused_leaves_no_fact(callgate_session):
    """Issue 36.11: facts record what executed; the gate's refusals never ran."""
    s = callgate_session(plugins=[SlowWriter()], files={".git/config": "[core]\n"})
    s.expect_error("append_line", {"path": ".git/config", "text": "x"})  # protected
    s.expect_error("append_line", {"path": "../out.txt", "text": "x"}, kind="outside_workspace")
    assert s.host.execution_facts() == []
    s.expect_ok("append_line", {"path": "b.txt", "text": "x"})
    assert [f.call_id for f in s.host.execution_facts()] != []
