"""fleet through the full pipeline: preflight refusals before any child starts, dependency
skips, fail_fast, caps, the output budget for 64 children, background fleets."""

from __future__ import annotations

import os
import re
import time
from typing import Any

import anyio
import pytest
from callgate_tasks import FLEETS, SubagentError

from .conftest import ScriptedRunner, completed

REF = re.compile(r"Subagent reference: (sa_[0-9a-f]{16})")


def reader(prompt: str, **extra: Any) -> dict[str, Any]:
    return {"prompt": prompt, "read_only": True, **extra}


class Tracker:
    """A runner whose children sleep ``delay`` seconds, fail when the prompt says so, and
    record how many ran at once (all, and writers: prompts starting with ``w``)."""

    def __init__(self, delay: float = 0.02) -> None:
        self.delay = delay
        self.now = self.peak = self.writers = self.peak_writers = 0
        self.started: list[str] = []

    async def respond(self, request: Any) -> Any:
        writer = request.prompt.startswith("w")
        self.started.append(request.prompt)
        self.now += 1
        self.writers += writer
        self.peak = max(self.peak, self.now)
        self.peak_writers = max(self.peak_writers, self.writers)
        try:
            await anyio.sleep(
                float(request.prompt.split("sleep=")[1])
                if "sleep=" in request.prompt
                else self.delay
            )
            if "fail" in request.prompt:
                raise SubagentError("broke", retryable=True)
            return completed(f"answer to {request.prompt}")
        finally:
            self.now -= 1
            self.writers -= writer


def _no_child_ran(s: Any, runner: ScriptedRunner) -> None:
    assert runner.requests == []
    s.session.flush()
    assert not [k for k in s.session.store.state(s.session.id) if k[0] == "subagents"]


# --- preflight ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "claims",
    [
        ([], []),  # two writers without paths: the workspace twice
        (["src"], ["src/a.py"]),  # a directory and a file below it
        (["src/a.py"], ["./src/../src/a.py"]),  # one file, spelled twice
        (["src/a.py"], []),  # a path and the whole workspace
        (["alias/a.py"], ["src/a.py"]),  # a symlink does not hide the overlap
    ],
)
def test_overlapping_writers_are_refused_before_either_starts(tasks, claims) -> None:
    runner = ScriptedRunner()
    s = tasks(runner)
    (s.workspace / "src").mkdir()
    (s.workspace / "src" / "a.py").write_text("x = 1\n")
    os.symlink("src", s.workspace / "alias")
    before = s.snapshot()
    first, second = (
        {"prompt": f"w{i}", **({"write_paths": c} if c else {})} for i, c in enumerate(claims)
    )
    r = s.expect_error("fleet", {"tasks": [first, second, reader("r")]}, kind="invalid_arguments")
    assert "/tasks/1/write_paths" in r.text and "overlap" in r.text
    _no_child_ran(s, runner)
    assert s.snapshot() == before


def test_disjoint_or_ordered_writers_and_any_readers_run(tasks) -> None:
    runner = ScriptedRunner()
    s = tasks(runner)
    r = s.call(
        "fleet",
        {
            "tasks": [
                {"prompt": "w1", "write_paths": ["src"]},
                {"prompt": "w2", "write_paths": ["docs", "README.md"]},
                {"prompt": "w3", "id": "after", "depends_on": ["task-1", "task-2"]},  # all, later
                reader("r1"),
                reader("r2"),
            ]
        },
    )
    assert not r.is_error, r.text
    assert sorted(q.prompt for q in runner.requests) == ["r1", "r2", "w1", "w2", "w3"]
    assert r.text.startswith("Completed fleet of 5 tasks: 5 completed.")


def test_a_write_path_outside_the_workspace_is_refused(tasks) -> None:
    runner = ScriptedRunner()
    s = tasks(runner)
    r = s.expect_error(
        "fleet",
        {"tasks": [{"prompt": "w", "write_paths": ["../elsewhere"]}, reader("r")]},
        kind="invalid_arguments",
    )
    assert "/tasks/0/write_paths/0" in r.text
    _no_child_ran(s, runner)


@pytest.mark.parametrize(
    "fleet, where, says",
    [
        (
            [reader("a", id="a", depends_on=["b"]), reader("b", id="b", depends_on=["a"])],
            "/tasks/0/depends_on",
            "a -> b -> a",
        ),
        ([reader("a", id="a", depends_on=["a"]), reader("b")], "/tasks/0/depends_on", "a -> a"),
        (
            [
                reader("a", id="a"),
                reader("b", id="b", depends_on=["c"]),
                reader("c", id="c", depends_on=["d"]),
                reader("d", id="d", depends_on=["b"]),
            ],
            "/tasks/1/depends_on",
            "b -> c -> d -> b",
        ),
        (
            [reader("a", id="a"), reader("b", depends_on=["nope"])],
            "/tasks/1/depends_on/0",
            "'nope'",
        ),
        ([reader("a", id="x"), reader("b", id="x")], "/tasks/1/id", "'x'"),
        ([reader("a"), reader("b", id="task-1")], "/tasks/1/id", "'task-1'"),
    ],
)
def test_bad_dependency_graphs_are_refused_before_anything_starts(
    tasks, fleet, where, says
) -> None:
    runner = ScriptedRunner()
    s = tasks(runner)
    r = s.expect_error("fleet", {"tasks": fleet}, kind="invalid_arguments")
    assert where in r.text and says in r.text, r.text
    _no_child_ran(s, runner)


@pytest.mark.parametrize("count", [1, 65])
def test_a_fleet_has_2_to_64_tasks(tasks, count) -> None:
    runner = ScriptedRunner()
    s = tasks(runner)
    s.expect_error(
        "fleet", {"tasks": [reader(f"r{i}") for i in range(count)]}, kind="invalid_arguments"
    )
    _no_child_ran(s, runner)


# --- running -----------------------------------------------------------------------------


def test_a_failure_skips_only_its_dependents(tasks) -> None:
    tracker = Tracker()
    s = tasks(ScriptedRunner(tracker.respond))
    r = s.call(
        "fleet",
        {
            "tasks": [
                reader("fail a", id="a"),
                reader("b", id="b", depends_on=["a"]),
                reader("c", id="c", depends_on=["b"]),
                reader("d", id="d"),
                reader("e", id="e", depends_on=["d"]),
                reader("f", id="f", depends_on=["d", "a"]),
            ]
        },
    )
    assert not r.is_error
    status = {t["id"]: (t["status"], t["reason"]) for t in r.meta["fleet"]["tasks"]}
    assert status == {
        "a": ("failed", None),
        "b": ("skipped", "dependency a ended failed"),
        "c": ("skipped", "dependency b ended skipped"),
        "d": ("completed", None),
        "e": ("completed", None),
        "f": ("skipped", "dependency a ended failed"),
    }
    assert sorted(tracker.started) == ["d", "e", "fail a"]
    assert r.text.startswith("Completed fleet of 6 tasks: 2 completed, 1 failed, 3 skipped.")
    assert "── b ── b\nSkipped: dependency a ended failed (no child started)" in r.text
    assert "status=failed retryable=true error_code=broke" in r.text


def test_dependents_start_only_after_their_dependencies_complete(tasks) -> None:
    order: list[str] = []

    async def respond(request: Any) -> Any:
        order.append(f"start {request.prompt}")
        await anyio.sleep(0.05 if request.prompt == "slow" else 0.0)
        order.append(f"end {request.prompt}")
        return completed(request.prompt)

    s = tasks(ScriptedRunner(respond))
    s.call("fleet", {"tasks": [reader("then", depends_on=["first"]), reader("slow", id="first")]})
    assert order == ["start slow", "end slow", "start then", "end then"]


def test_fail_fast_cancels_the_running_and_skips_the_rest(tasks) -> None:
    tracker = Tracker()
    s = tasks(ScriptedRunner(tracker.respond), config={"tasks": {"fleet_max_parallel": 2}})
    start = time.monotonic()
    r = s.call(
        "fleet",
        {
            "fail_fast": True,
            "tasks": [reader("fail sleep=0.05"), reader("slow sleep=30"), reader("later")],
        },
    )
    assert time.monotonic() - start < 10
    assert [t["status"] for t in r.meta["fleet"]["tasks"]] == ["failed", "cancelled", "skipped"]
    assert r.meta["fleet"]["stopped"] == "fail_fast: task-1 ended failed"
    assert "stopped (fail_fast: task-1 ended failed)" in r.text.splitlines()[0]
    assert r.is_error and r.error.signature == "FLEET_ALL_FAILED"


def test_concurrency_and_writers_are_capped(tasks) -> None:
    tracker = Tracker(delay=0.03)
    s = tasks(
        ScriptedRunner(tracker.respond),
        config={"tasks": {"fleet_max_parallel": 3, "fleet_max_writers": 1}},
    )
    fleet = [{"prompt": f"w{i}", "write_paths": [f"dir{i}"]} for i in range(4)]
    fleet += [reader(f"r{i}") for i in range(6)]
    r = s.call("fleet", {"tasks": fleet})
    assert r.text.startswith("Completed fleet of 10 tasks: 10 completed.")
    assert tracker.peak == 3 and tracker.peak_writers == 1


def test_the_children_are_real_sessions_of_the_workspace(tasks) -> None:
    seen: dict[str, Any] = {}

    async def respond(request: Any) -> Any:
        child = request.session
        assert child is not None and child.parent is not None
        assert child.workspace.root == request.workspace
        assert request.profile.max_depth == 3 and child.profile == request.profile
        seen[request.description] = (request.profile, request.prompt)
        return completed(request.prompt)

    s = tasks(ScriptedRunner(respond))
    r = s.call(
        "fleet",
        {
            "tasks": [
                reader("a", description="plain", tools=["read_file", "g*"]),
                {"prompt": "where is x defined", "description": "scout", "profile": "explore"},
                {
                    "prompt": "is my change safe",
                    "description": "audit",
                    "profile": "security_review",
                },
            ]
        },
    )
    assert not r.is_error, r.text
    plain, _ = seen["plain"]
    assert (plain.name, plain.read_only, plain.tools) == ("fleet:task-1", True, ("read_file", "g*"))
    scout, prompt = seen["scout"]
    assert scout.name == "explore" and scout.read_only and "grep" in scout.tools
    assert prompt.startswith("You are an exploration subagent") and prompt.endswith(
        "Task:\nwhere is x defined"
    )
    audit, prompt = seen["audit"]
    assert audit.name == "security_review" and "Change set:\n" in prompt


@pytest.mark.parametrize(
    "task, where",
    [
        ({"prompt": "p", "profile": "explore", "write_paths": ["a"]}, "/tasks/0/profile"),
        ({"prompt": "p", "profile": "explore", "read_only": False}, "/tasks/0/profile"),
        ({"prompt": "p", "profile": "explore", "tools": ["bash"]}, "/tasks/0/tools"),
        ({"prompt": "p", "profile": "writer"}, "/tasks/0/profile"),
    ],
)
def test_a_profile_is_a_strict_reader_with_its_own_tools(tasks, task, where) -> None:
    runner = ScriptedRunner()
    s = tasks(runner)
    r = s.expect_error("fleet", {"tasks": [task, reader("r")]}, kind="invalid_arguments")
    assert where in r.text
    _no_child_ran(s, runner)


def test_a_profiled_task_never_claims_paths(tasks) -> None:
    """Two profiled tasks and a writer of the whole workspace: only the writer claims."""
    runner = ScriptedRunner()
    s = tasks(runner)
    r = s.call(
        "fleet",
        {
            "tasks": [
                {"prompt": "w"},
                {"prompt": "p", "profile": "explore"},
                {"prompt": "q", "profile": "research"},
            ]
        },
    )
    assert r.text.startswith("Completed fleet of 3 tasks: 3 completed."), r.text


# --- the combined result ---------------------------------------------------------------------


@pytest.mark.parametrize("max_chars", [30000, 16000])
def test_a_64_task_fleet_stays_under_the_output_limit(tasks, max_chars) -> None:
    def respond(request: Any) -> Any:
        n = int(request.prompt[1:])
        return completed(f"<{n}>" + "x" * (100 if n % 2 else 6000) + f"</{n}>")

    runner = ScriptedRunner(respond)
    s = tasks(runner, max_chars=max_chars)
    r = s.call(
        "fleet",
        {
            "tasks": [
                reader(f"r{i}", description=f"look at part {i} " + "d" * 60) for i in range(64)
            ]
        },
    )
    assert not r.is_error
    assert len(r.text) <= max_chars - 512
    assert r.meta.get("truncated") is None and "truncated" not in str(r.meta)
    refs = REF.findall(r.text)
    assert len(refs) == 64 == len(set(refs))
    assert refs == [t["ref"] for t in r.meta["fleet"]["tasks"]]
    for i in range(64):
        assert f"── task-{i + 1} ──" in r.text
    # fair: a short answer is shown whole; the long ones are cut, each to about the same size
    assert "<1>" + "x" * 100 + "</1>" in r.text
    longs = [len(m) for m in re.findall(r"<\d*[02468]>x*", r.text)]
    assert len(longs) == 32 and max(longs) - min(longs) <= 2
    assert 'read_subagent_result(ref="' in r.text
    page = s.call("read_subagent_result", {"ref": refs[0]})
    assert "<0>" in page.text and "</0>" in page.text


# --- background ------------------------------------------------------------------------------


def test_a_background_fleet_returns_a_job_id_read_with_fleet_output(tasks) -> None:
    tracker = Tracker(delay=0.3)
    s = tasks(ScriptedRunner(tracker.respond))
    start = time.monotonic()
    r = s.call(
        "fleet",
        {"run_in_background": True, "tasks": [reader("a"), reader("b", depends_on=["task-1"])]},
    )
    assert time.monotonic() - start < 0.3
    assert r.meta["job_id"] == "fleet-1" and 'fleet_output(job_id="fleet-1")' in r.text
    progress = s.call("fleet_output", {"job_id": "fleet-1"})
    assert progress.meta["status"] == "running" and "of 2 tasks finished" in progress.text
    done = s.call("fleet_output", {"job_id": "fleet-1", "wait": True, "timeout_ms": 20000})
    assert done.meta["status"] == "finished"
    assert done.text.startswith("Completed fleet of 2 tasks: 2 completed.")
    assert len(REF.findall(done.text)) == 2
    s.expect_error("fleet_output", {"job_id": "fleet-9"}, kind="not_found")


def test_closing_the_session_cancels_a_background_fleet(tasks) -> None:
    tracker = Tracker()
    s = tasks(ScriptedRunner(tracker.respond))
    s.call(
        "fleet", {"run_in_background": True, "tasks": [reader("sleep=60"), reader("x sleep=60")]}
    )
    deadline = time.monotonic() + 10
    while tracker.now < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    job = s.session.extension(FLEETS).get("fleet-1")
    start = time.monotonic()
    s.sync.close()
    assert job.done.is_set() and time.monotonic() - start < 5
    assert [t.status for t in job.run.slots] == ["cancelled", "cancelled"]


def test_without_a_runner_there_is_no_fleet(tasks) -> None:
    s = tasks(None)
    s.expect_error("fleet", {"tasks": [reader("a"), reader("b")]}, kind="unavailable")  # 36.6


@pytest.mark.parametrize("background", [False, True])
def test_a_reader_is_a_strict_read_only_child_and_a_writer_may_write(
    callgate_session, background
) -> None:
    import callgate_files
    import callgate_tasks
    from callgate import ToolCall

    from .conftest import RunnerIntegration

    async def respond(request: Any) -> Any:
        target = request.prompt
        r = await request.session.run(
            ToolCall(f"c-{target}", "write_file", {"path": target, "content": "new\n"})
        )
        return completed(f"{target}: {'refused' if r.is_error else 'written'}")

    s = callgate_session(
        plugins=[callgate_tasks, callgate_files, RunnerIntegration(ScriptedRunner(respond))]
    )
    r = s.call(
        "fleet",
        {
            "tasks": [
                {"prompt": "reader.txt", "read_only": True},
                {"prompt": "writer.txt", "write_paths": ["writer.txt"]},
            ],
            "run_in_background": background,
        },
    )
    if background:  # the children run on the fleet's own thread and event loop
        r = s.call("fleet_output", {"job_id": r.meta["job_id"], "wait": True})
    assert "reader.txt: refused" in r.text and "writer.txt: written" in r.text
    assert not (s.workspace / "reader.txt").exists()
    assert (s.workspace / "writer.txt").read_text() == "new\n"


# --- callgate replay --subagents -------------------------------------------------------------


def test_a_fleet_end_to_end_through_replay_with_scripted_children(tmp_path) -> None:
    """``callgate replay --subagents DIR``: each child replays DIR/<slug>.jsonl in its own
    session; the reader's write is refused by its strict profile, the writer's lands, the
    failing child's dependent is skipped."""
    import json
    import subprocess
    import sys

    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("hello\n")
    kids = tmp_path / "kids"
    kids.mkdir()
    (kids / "scan.jsonl").write_text(
        json.dumps({"name": "read_file", "arguments": {"path": "notes.txt"}})
        + "\n"
        + json.dumps({"name": "write_file", "arguments": {"path": "x.txt", "content": "x"}})
        + "\n"
        + json.dumps({"answer": "scanned"})
        + "\n"
    )
    (kids / "write.jsonl").write_text(
        json.dumps({"name": "write_file", "arguments": {"path": "out.txt", "content": "done"}})
        + "\n"
        + json.dumps({"answer": "wrote out.txt"})
        + "\n"
    )
    (kids / "break.jsonl").write_text(
        json.dumps({"outcome": {"status": "failed", "error_code": "broke", "answer": "it broke"}})
        + "\n"
    )
    fleet = {
        "tasks": [
            {"id": "scan", "description": "scan", "prompt": "scan", "read_only": True},
            {
                "id": "write",
                "description": "write",
                "prompt": "write",
                "write_paths": ["out.txt"],
                "depends_on": ["scan"],
            },
            {"id": "break", "description": "break", "prompt": "break", "read_only": True},
            {
                "id": "after",
                "description": "after",
                "prompt": "after",
                "read_only": True,
                "depends_on": ["break"],
            },
        ]
    }
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(json.dumps({"name": "fleet", "arguments": fleet}) + "\n")
    env = {**os.environ, "CALLGATE_LOAD_PLUGINS": "tasks,files"}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "callgate_cli",
            "replay",
            str(transcript),
            "--workspace",
            str(ws),
            "--subagents",
            str(kids),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    [line] = proc.stdout.splitlines()
    result = json.loads(line)
    status = {t["id"]: t["status"] for t in result["meta"]["fleet"]["tasks"]}
    assert status == {
        "scan": "completed",
        "write": "completed",
        "break": "failed",
        "after": "skipped",
    }
    assert result["content"].startswith(
        "Completed fleet of 4 tasks: 2 completed, 1 failed, 1 skipped."
    )
    assert len(REF.findall(result["content"])) == 3
    assert (ws / "out.txt").read_text() == "done"
    assert not (ws / "x.txt").exists()
