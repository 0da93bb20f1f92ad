"""Background jobs, job_output, job_kill and the hidden aliases through the whole pipeline
(shell.md §5.17-§5.31, plus log storage, the job-log fallback and the dashboard list)."""

from __future__ import annotations

import os
import re
import stat
import time

import pytest
from shell_helpers import jobs_of, pid_alive, read_pid, wait_until

pytestmark = pytest.mark.skipif(os.name != "posix", reason="bash end-to-end tests need POSIX")


def start(s, command, **extra):
    r = s.call("bash", {"command": command, "run_in_background": True, **extra})
    assert not r.is_error, r.text
    return r


def wait_done(s, job_id, timeout_ms=10_000):
    r = s.call("job_output", {"job_id": job_id, "wait": True, "timeout_ms": timeout_ms})
    assert not r.text.startswith(f"[{job_id}] running"), r.text
    return r


def test_background_start_returns_at_once_with_a_running_job(shell):  # §5.17
    s = shell()
    t0 = time.monotonic()
    r = start(s, "echo one; sleep 1; echo two")
    assert time.monotonic() - t0 < 1
    assert r.text.startswith("Started background job bash-1: echo one; sleep 1; echo two\n"
                             'Read new output with job_output(job_id="bash-1"); stop it with '
                             'job_kill(job_id="bash-1"). job_output() with no job_id lists all '
                             "jobs.")
    assert r.meta["job_id"] == "bash-1"
    assert s.call("job_output", {"job_id": "bash-1"}).text.startswith("[bash-1] running")


def test_ids_count_per_session_and_skip_foreground_calls(shell):  # §5.18
    s = shell()
    ids = []
    for _ in range(3):
        ids.append(start(s, "true").meta["job_id"])
        s.call("bash", {"command": "true"})
    assert ids == ["bash-1", "bash-2", "bash-3"]
    other = shell()
    assert start(other, "true").meta["job_id"] == "bash-1"
    assert other.call("job_output", {"job_id": "bash-2"}).error.kind == "not_found"


def test_reads_return_only_new_output(shell):  # §5.19
    s = shell()
    start(s, "echo first; while [ ! -e go ]; do sleep 0.05; done; echo second")
    assert wait_until(lambda: jobs_of(s).get("bash-1").total > 0, 5)
    first = s.call("job_output", {"job_id": "bash-1"})
    assert first.text == "[bash-1] running\nfirst"
    s.write("go", "")
    second = s.call("job_output", {"job_id": "bash-1", "wait": True, "timeout_ms": 5000})
    assert second.text.startswith("[bash-1] done (exit code 0)\n")
    assert "second" in second.text and "first" not in second.text
    third = s.call("job_output", {"job_id": "bash-1"})
    assert third.text == "[bash-1] done (exit code 0)\n(no new output)"


def test_a_waiting_read_gives_up_at_its_timeout(shell):  # §5.20
    s = shell()
    start(s, "sleep 30")
    t0 = time.monotonic()
    r = s.call("job_output", {"job_id": "bash-1", "wait": True, "timeout_ms": 300})
    assert 0.3 <= time.monotonic() - t0 < 2
    assert r.text.startswith("[bash-1] running\n")
    assert "(still running after waiting 300 ms)" in r.text


def test_filter_shows_matching_new_lines_and_still_moves_the_cursor(shell):  # §5.21
    s = shell()
    start(s, "printf 'a1\\nb2\\na3\\n'")
    wait_until(lambda: jobs_of(s).get("bash-1").finished.is_set(), 5)
    r = s.call("job_output", {"job_id": "bash-1", "filter": "^a"})
    assert r.text == "[bash-1] done (exit code 0)\na1\na3\n(filter kept 2 of 3 new lines)"
    assert s.call("job_output", {"job_id": "bash-1"}).text.endswith("(no new output)")

    start(s, "printf 'a1\\nb2\\na3\\n'")
    wait_until(lambda: jobs_of(s).get("bash-2").finished.is_set(), 5)
    bad = s.call("job_output", {"job_id": "bash-2", "filter": "("})
    assert bad.error.kind == "invalid_arguments" and bad.meta["executed"] is False
    assert "/filter" in bad.text
    assert s.call("job_output", {"job_id": "bash-2"}).text.endswith("a1\nb2\na3")


def test_timeout_ms_is_ignored_in_the_background(shell):  # §5.22
    s = shell()
    start(s, "sleep 1; echo late", timeout_ms=200)
    r = wait_done(s, "bash-1")
    assert r.text.startswith("[bash-1] done (exit code 0)") and "late" in r.text


def test_list_mode_shows_every_job_and_moves_no_cursor(shell):  # §5.23
    s = shell()
    assert s.call("job_output", {}).text == "No background jobs in this session."
    start(s, "echo built", description="build")
    wait_until(lambda: jobs_of(s).get("bash-1").finished.is_set(), 5)
    start(s, "sleep 30")
    lines = s.call("job_output", {}).text.splitlines()
    assert lines[0] == "Background jobs in this session: 2 (1 running)"
    assert re.match(r"^bash-1  done  exit=0  runtime=\d+\.\ds  unread=6B  build$", lines[1])
    assert re.match(r"^bash-2  running  exit=-  runtime=\d+\.\ds  unread=0B  sleep 30$", lines[2])
    assert s.call("job_output", {"filter": "zzz"}).text.splitlines()[1] == lines[1]
    assert s.call("job_output", {"job_id": "bash-1"}).text.endswith("built")


def test_list_mode_with_wait_waits_for_running_jobs(shell):
    s = shell()
    start(s, "sleep 0.3")
    r = s.call("job_output", {"wait": True, "timeout_ms": 5000})
    assert r.text.startswith("Background jobs in this session: 1 (0 running)\nbash-1  done")


def test_job_kill_returns_at_once_and_the_job_settles_killed(shell):  # §5.24
    s = shell()
    start(s, "sleep 60 & echo $! > p; wait")
    pid = read_pid(s.path("p"))
    t0 = time.monotonic()
    r = s.call("job_kill", {"job_id": "bash-1"})
    assert time.monotonic() - t0 < 1
    assert r.text == "Kill requested for background job bash-1; it will settle as killed."
    assert s.call("job_output", {"job_id": "bash-1"}).text.startswith("[bash-1] killed (job_kill)")
    assert wait_until(lambda: not pid_alive(pid), 5)
    assert s.call("job_output", {}).text.splitlines()[1].startswith("bash-1  killed  exit=-")


def test_job_kill_on_finished_or_unknown_jobs(shell):  # §5.25
    s = shell()
    start(s, "true")
    wait_done(s, "bash-1")
    r = s.call("job_kill", {"job_id": "bash-1"})
    assert not r.is_error and "is not running (status: done)" in r.text
    for tool in ("job_kill", "job_output"):
        r = s.call(tool, {"job_id": "bash-99"})
        assert r.is_error and r.error.kind == "not_found"
        assert r.text.startswith('no background job "bash-99" in this session')


def test_max_lifetime_kills_a_long_job(shell):  # §5.26
    s = shell({"shell": {"job_max_lifetime_ms": 500}})
    start(s, "sleep 30")
    assert wait_until(lambda: s.call("job_output", {"job_id": "bash-1"}).text.startswith(
        "[bash-1] killed (max lifetime exceeded)"), 3, interval=0.2)


def test_running_job_limit_and_disabled_jobs_refuse_to_start(shell):  # §5.27
    s = shell({"shell": {"max_running_jobs": 2}})
    start(s, "sleep 30")
    start(s, "sleep 30")
    r = s.call("bash", {"command": "touch third", "run_in_background": True})
    assert r.is_error and "too many running background jobs (2)" in r.text
    assert s.call("job_output", {}).text.startswith("Background jobs in this session: 2 ")
    assert not s.path("third").exists()
    off = shell({"shell": {"background_jobs": False}})
    r = off.call("bash", {"command": "touch ran", "run_in_background": True})
    assert r.is_error and r.text.startswith("background jobs are not available in this context")
    assert not off.path("ran").exists()
    assert off.call("job_output", {}).text == "No background jobs in this session."


def test_closing_the_session_kills_its_jobs_and_removes_the_logs(shell):  # §5.28
    s = shell()
    start(s, "sleep 60 & echo $! > p; wait")
    pid = read_pid(s.path("p"))
    directory = jobs_of(s).directory
    assert os.path.isdir(directory)
    t0 = time.monotonic()
    s.close()
    assert wait_until(lambda: not pid_alive(pid), max(0.1, 10 - (time.monotonic() - t0)))
    assert not os.path.exists(directory)


def test_a_finished_job_is_announced_once_on_the_next_result(shell):  # §5.29
    s = shell()
    start(s, "echo hi")
    assert wait_until(lambda: jobs_of(s).get("bash-1").finished.is_set(), 5)
    r = s.call("bash", {"command": "true"})
    last = r.text.splitlines()[-1]
    assert "bash-1" in last and "done" in last and "job_output" in last
    assert r.text.startswith("(no output)\n[exit code 0]\n\n[background jobs finished")
    assert s.call("bash", {"command": "true"}).text == "(no output)\n[exit code 0]"


def test_a_job_read_after_it_ended_is_never_announced(shell):  # §5.29
    s = shell()
    start(s, "echo hi")
    wait_done(s, "bash-1")
    for _ in range(2):
        assert s.call("bash", {"command": "true"}).text == "(no output)\n[exit code 0]"


def test_killed_jobs_get_no_notice_but_max_lifetime_does(shell):
    s = shell({"shell": {"job_max_lifetime_ms": 1500}})
    start(s, "sleep 30")
    start(s, "sleep 30")
    s.call("job_kill", {"job_id": "bash-2"})
    assert wait_until(lambda: jobs_of(s).get("bash-1").finished.is_set(), 5)
    assert wait_until(lambda: jobs_of(s).get("bash-2").finished.is_set(), 5)
    text = s.call("bash", {"command": "true"}).text
    assert "bash-1 (sleep 30) killed (max lifetime exceeded)" in text
    assert "bash-2" not in text


def test_bash_output_reads_like_job_output_and_shares_the_cursor(shell):  # §5.30
    s = shell()
    start(s, "echo one; while [ ! -e go ]; do sleep 0.05; done; echo two")
    assert wait_until(lambda: jobs_of(s).get("bash-1").total > 0, 5)
    assert s.call("bash_output", {"job_id": "bash-1"}).text == "[bash-1] running\none"
    assert s.call("job_output", {"job_id": "bash-1"}).text == "[bash-1] running\n(no new output)"
    s.write("go", "")
    wait_until(lambda: jobs_of(s).get("bash-1").finished.is_set(), 5)
    r = s.call("bash_output", {"job_id": "bash-1", "filter": "t"})
    assert r.text == "[bash-1] done (exit code 0)\ntwo\n(filter kept 1 of 1 new lines)"
    assert s.call("bash_output", {"job_id": "bash-1", "filter": "("}).error.kind == \
        "invalid_arguments"


def test_kill_shell_behaves_as_job_kill(shell):  # §5.30
    s = shell()
    start(s, "sleep 60 & echo $! > p; wait")
    pid = read_pid(s.path("p"))
    r = s.call("kill_shell", {"job_id": "bash-1"})
    assert r.text == "Kill requested for background job bash-1; it will settle as killed."
    assert wait_until(lambda: not pid_alive(pid), 5)
    assert "is not running (status: killed)" in s.call("kill_shell", {"job_id": "bash-1"}).text
    assert s.call("kill_shell", {"job_id": "bash-9"}).error.kind == "not_found"


def test_wait_alias_blocks_per_job_under_one_deadline(shell):  # §5.30
    s = shell()
    start(s, "sleep 0.3; echo A")
    start(s, "sleep 0.6; echo B")
    r = s.call("wait", {})
    blocks = r.text.split("\n\n")
    assert blocks[0] == "[bash-1] done (exit code 0)\nA"
    assert blocks[1] == "[bash-2] done (exit code 0)\nB"
    unknown = s.call("wait", {"job_ids": ["bash-7"]})  # issue 36.8: as job_output answers
    assert unknown.error.kind == "not_found" and '"bash-7"' in unknown.text
    mixed = s.call("wait", {"job_ids": ["bash-1", "bash-8"]})  # refused whole, nothing waited
    assert mixed.error.kind == "not_found" and '"bash-8"' in mixed.text
    assert '"bash-1"' not in mixed.text
    assert s.call("wait", {}).text == "No background jobs to wait for."
    dup = s.call("wait", {"job_ids": ["bash-2", "bash-2", "bash-1"]}).text.split("\n\n")
    assert dup == ["[bash-2] done (exit code 0)\n(no new output)",
                   "[bash-1] done (exit code 0)\n(no new output)"]


def test_wait_alias_gives_up_at_timeout_seconds(shell):  # §5.30
    s = shell()
    start(s, "sleep 30")
    t0 = time.monotonic()
    r = s.call("wait", {"timeout_seconds": 1})
    assert time.monotonic() - t0 < 3
    assert r.text.startswith("[bash-1] running")
    assert "(still running after waiting" in r.text


def test_a_deny_on_job_kill_also_denies_kill_shell(shell):  # §5.31
    s = shell({"permissions": {"deny": ["job_kill"]}})
    start(s, "sleep 30")
    r = s.call("kill_shell", {"job_id": "bash-1"})
    assert r.is_error and r.error.kind == "blocked" and "job_kill" in r.text
    assert s.call("job_output", {"job_id": "bash-1"}).text.startswith("[bash-1] running")
    assert jobs_of(s).get("bash-1").running


def test_job_logs_are_private_files_holding_the_whole_output(shell):
    s = shell()
    start(s, "seq 1 100000")
    wait_done(s, "bash-1", 20_000)
    job = jobs_of(s).get("bash-1")
    assert stat.S_IMODE(os.stat(jobs_of(s).directory).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(job.log_path).st_mode) == 0o600
    with open(job.log_path, "rb") as fh:
        assert fh.read() == "".join(f"{i}\n" for i in range(1, 100001)).encode()


def test_an_unreadable_log_falls_back_to_the_memory_tail(shell):
    s = shell()
    start(s, "seq 1 30000")
    assert wait_until(lambda: jobs_of(s).get("bash-1").finished.is_set(), 10)
    os.unlink(jobs_of(s).get("bash-1").log_path)
    r = s.call("job_output", {"job_id": "bash-1"})
    lines = r.text.split("\n")
    assert lines[0] == "[bash-1] done (exit code 0)"
    assert lines[1].startswith("[job log unavailable: reading it failed: ")
    assert lines[1].endswith("; showing the last 64 KiB]")
    assert lines[-1] == "30000"
    assert len("\n".join(lines[2:]).encode()) <= 64 * 1024


def test_session_jobs_lists_the_jobs_for_dashboards(shell):
    s = shell()
    start(s, "echo x", description="say x")
    wait_done(s, "bash-1")
    [job] = jobs_of(s)()
    assert (job["id"], job["status"], job["label"], job["exit_code"]) == \
        ("bash-1", "done", "say x", 0)


def test_labels_collapse_whitespace_and_stop_at_48_characters(shell):
    s = shell()
    r = start(s, "echo   " + "x" * 60)
    assert r.text.splitlines()[0] == "Started background job bash-1: echo " + "x" * 43 + "…"
    r = start(s, "true", description="  build\n\tthe   docs ")
    assert r.text.splitlines()[0] == "Started background job bash-2: build the docs"


def test_a_failed_job_is_not_an_error_result(shell):
    s = shell()
    start(s, "echo oops; exit 4")
    r = wait_done(s, "bash-1")
    assert r.text == "[bash-1] failed (exit code 4)\noops"
    assert r.is_error is False
