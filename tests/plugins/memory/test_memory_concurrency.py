"""Two sessions remembering at once lose nothing: threads in one host, and two processes."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

from .conftest import store

PER_WRITER = 12


def _managed_lines(directory: Path) -> list[str]:
    return [line for line in (directory / "MEMORY.md").read_text().splitlines()
            if line.startswith("- [")]


def test_sessions_remembering_in_parallel_threads_lose_nothing(memory, tmp_path):
    sessions = [memory(tmp_path) for _ in range(4)]
    errors: list[str] = []
    start = threading.Barrier(len(sessions))

    def writer(n: int) -> None:
        start.wait()
        for i in range(PER_WRITER):
            result = sessions[n].call("remember", {"name": f"w{n}-f{i}", "description":
                                                   f"fact {i} of writer {n}", "body": "x"})
            if result.is_error:
                errors.append(result.text)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(len(sessions))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    directory = store(sessions[0])
    assert len(list(directory.glob("w*-f*.md"))) == 4 * PER_WRITER
    assert len(_managed_lines(directory)) == 4 * PER_WRITER
    listing = sessions[0].expect_ok("memory", {"operation": "list"})
    assert f"{4 * PER_WRITER} memories" in listing


def test_threads_updating_one_fact_each_get_their_own_revision(memory, tmp_path):
    sessions = [memory(tmp_path) for _ in range(4)]
    sessions[0].expect_ok("remember", {"name": "counter", "description": "c", "body": "0"})
    revisions: list[int] = []
    start = threading.Barrier(len(sessions))

    def bump(n: int) -> None:
        start.wait()
        for i in range(5):
            out = sessions[n].expect_ok("remember", {"name": "counter", "description": "c",
                                                     "body": f"{n}-{i}"})
            revisions.append(int(out.split("revision=")[1].split()[0]))

    threads = [threading.Thread(target=bump, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(revisions) == list(range(2, 22))  # every update counted, none lost


WRITER = Path(__file__).with_name("_writer.py")
PER_PROCESS = 40


def test_two_processes_remembering_at_once_lose_nothing(memory, tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    go = tmp_path / "go"
    procs = [subprocess.Popen([sys.executable, str(WRITER), str(workspace), prefix,
                               str(PER_PROCESS), str(go)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for prefix in ("a", "b")]
    for proc in procs:  # both booted and waiting: start them at the same moment
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    go.touch()
    outputs = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        outputs.append([json.loads(line) for line in out.splitlines()])
    for results in outputs:
        assert all(not r["is_error"] for r in results[:-1]), results
    # every update of the shared fact got its own revision: none overwrote another
    revisions = sorted(int(r["text"].split("revision=")[1].split()[0])
                       for results in outputs for r in results if r["id"].endswith("-bump"))
    assert revisions[0] in (1, 2) and revisions == list(range(revisions[0], revisions[0] + 80))
    owners = [results[-1] for results in outputs]
    # the subject_key is held by exactly one of the two, whichever locked first
    assert sorted(r["is_error"] for r in owners) == [False, True], owners
    assert next(r for r in owners if r["is_error"])["signature"] == "MEMORY_SUBJECT_TAKEN"

    directory = store(memory(workspace))
    names = {p.stem for p in directory.glob("*.md")} - {"MEMORY"}
    expected = {f"{p}-{i}" for p in "ab" for i in range(PER_PROCESS)}
    assert expected <= names and len(names) == 2 * PER_PROCESS + 2
    assert len(_managed_lines(directory)) == 2 * PER_PROCESS + 2
    assert "revision: 80" in (directory / "counter.md").read_text()
