"""Foreground bash commands through the whole pipeline, with real processes (shell.md §5.3-§5.16,
§5.32, plus cancellation, foreign signals, the capture limit and launch failures)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import threading
import time

import psutil
import pytest
from shell_helpers import group_members, pid_alive, read_pid, wait_until

pytestmark = pytest.mark.skipif(os.name != "posix", reason="bash end-to-end tests need POSIX")


def test_stdout_and_stderr_come_back_together_with_the_exit_status(shell):  # §5.3
    s = shell()
    r = s.call("bash", {"command": "echo hi; echo err 1>&2; echo bye"})
    assert r.text == "hi\nerr\nbye\n[exit code 0]"
    assert r.is_error is False
    assert r.meta["exit_code"] == 0 and r.meta["timed_out"] is False


def test_interleaved_stdout_and_stderr_keep_their_write_order(shell):  # §5.4
    s = shell()
    r = s.call("bash", {"command": "for i in 1 2 3; do echo o$i; echo e$i >&2; done"})
    assert r.text.splitlines()[:6] == ["o1", "e1", "o2", "e2", "o3", "e3"]


def test_nonzero_exit_is_an_error_with_the_exit_code(shell):  # §5.5
    s = shell()
    r = s.call("bash", {"command": "exit 3"})
    assert r.text == "(no output)\n[exit code 3]"
    assert r.is_error is True
    assert r.meta["exit_code"] == 3
    assert (r.error.kind, r.error.signature) == ("tool_error", "exit:3")


def test_output_without_final_newline_gets_one_before_the_status(shell):  # §5.6
    s = shell()
    assert s.call("bash", {"command": "printf abc"}).text == "abc\n[exit code 0]"


@pytest.mark.parametrize("arguments", [
    {"command": ""},
    {"command": "   "},
    {"command": "touch ran", "timeout_ms": 600001},
    {"command": "touch ran", "timeout_ms": 0},
    {"command": "touch ran", "extra": 1},
])
def test_invalid_arguments_are_refused_and_nothing_runs(shell, arguments):  # §5.7
    s = shell()
    r = s.call("bash", arguments)
    assert r.is_error and r.error.kind == "invalid_arguments"
    assert r.meta["executed"] is False
    assert not s.path("ran").exists()
    if arguments["command"] == "   ":
        assert "command must not be blank" in r.text


def test_timeout_kills_the_group_and_keeps_partial_output(shell):  # §5.8
    s = shell()
    start = time.monotonic()
    r = s.call("bash", {"command": "echo start; sleep 30", "timeout_ms": 500})
    assert time.monotonic() - start < 5
    assert r.text.startswith("start\n")
    assert r.text.endswith("[timed out after 500 ms; process group killed; output above is "
                           "partial]")
    assert r.is_error and (r.error.kind, r.error.signature) == ("timeout", "timeout")
    assert r.meta["timed_out"] is True and r.meta["exit_code"] is None
    assert wait_until(lambda: not group_members(r.meta["pid"]), 3)


def test_timeout_also_ends_background_children_of_the_command(shell):  # §5.9
    s = shell()
    r = s.call("bash", {"command": "sleep 30 & echo $! > p; wait", "timeout_ms": 500})
    assert r.error.kind == "timeout"
    pid = read_pid(s.path("p"))
    assert wait_until(lambda: not pid_alive(pid), 3)


def test_a_group_that_ignores_sigterm_is_killed_after_the_grace_period(shell):
    s = shell()
    start = time.monotonic()
    r = s.call("bash", {"command": "trap '' TERM; sleep 30 & echo $! > p; wait",
                        "timeout_ms": 300})
    elapsed = time.monotonic() - start
    assert r.error.kind == "timeout"
    assert 2.0 <= elapsed < 8, elapsed  # SIGKILL comes 2 s after SIGTERM
    assert wait_until(lambda: not pid_alive(read_pid(s.path("p"))), 3)


def test_stdin_is_empty_so_readers_return_at_once(shell):  # §5.10
    s = shell()
    start = time.monotonic()
    r = s.call("bash", {"command": "cat; echo done"})
    assert time.monotonic() - start < 2
    assert r.text == "done\n[exit code 0]"
    assert "rc=1" in s.call("bash", {"command": "read -r x; echo rc=$?"}).text


def test_environment_is_forced_non_interactive(shell, monkeypatch):  # §5.11
    monkeypatch.setenv("TERM", "xterm-256color")
    monkeypatch.setenv("PAGER", "less")
    s = shell()
    r = s.call("bash", {"command": 'echo "$NO_COLOR|$TERM|$PAGER|$GIT_PAGER|'
                                   '$GIT_TERMINAL_PROMPT|$GIT_EDITOR"'})
    assert r.text.splitlines()[0] == "1|dumb|cat|cat|0|true"


def test_cwd_is_the_workspace_and_nothing_carries_over(shell):  # §5.12
    s = shell()
    root = os.path.realpath(s.workspace)
    assert s.call("bash", {"command": "pwd -P"}).text.splitlines()[0] == root
    s.call("bash", {"command": "export FOO=1; cd /tmp"})
    assert s.call("bash", {"command": "echo ${FOO:-unset}; pwd -P"}).text.splitlines()[:2] == \
        ["unset", root]


def test_secret_filter_drops_secret_variables_unless_turned_off(shell, monkeypatch):  # §5.13
    monkeypatch.setenv("OPENAI_API_KEY", "sk-1")
    monkeypatch.setenv("GH_TOKEN", "gh-1")
    monkeypatch.setenv("MY_CUSTOM", "c-1")
    monkeypatch.setenv("PLAIN", "p-1")
    on = shell({"shell": {"secret_env_names": ["my_custom"]}})  # on by default (issue 30)
    names = {line.split("=", 1)[0]
             for line in on.call("bash", {"command": "env"}).text.split("\n")}
    assert "PLAIN" in names
    assert not names & {"OPENAI_API_KEY", "GH_TOKEN", "MY_CUSTOM"}
    off = shell({"shell": {"filter_secret_env": False}})  # the user's explicit choice
    names = {line.split("=", 1)[0]
             for line in off.call("bash", {"command": "env"}).text.split("\n")}
    assert {"GH_TOKEN", "OPENAI_API_KEY", "PLAIN"} <= names


@pytest.mark.parametrize("command", ["sleep 60 & echo $! > p",
                                     "echo nohup; sleep 60 & echo $! > p"])
def test_leftover_background_processes_are_reaped_after_exit(shell, command):  # §5.14
    s = shell()
    start = time.monotonic()
    r = s.call("bash", {"command": command})
    assert time.monotonic() - start < 3
    assert r.text.endswith("[exit code 0]")
    pid = read_pid(s.path("p"))
    assert wait_until(lambda: not pid_alive(pid), 3)


@pytest.mark.parametrize("command", [
    "nohup sleep 60 >/dev/null 2>&1 & echo $! > p",
    "setsid sleep 60 >/dev/null 2>&1 & echo $! > p",
    "sleep 60 >/dev/null 2>&1 & disown; echo $! > p",
])
def test_nohup_setsid_disown_keep_their_process(shell, strays, command):  # §5.15
    s = shell()
    r = s.call("bash", {"command": command})
    assert r.text.endswith("[exit code 0]")
    pid = read_pid(s.path("p"))
    strays.append(pid)
    time.sleep(1)
    assert pid_alive(pid)
    os.kill(pid, signal.SIGKILL)


def test_an_exempt_process_holding_the_pipe_stops_the_read_after_5_s(shell, strays):  # §5.15
    s = shell()
    start = time.monotonic()
    r = s.call("bash", {"command": "nohup sleep 30 &"})
    elapsed = time.monotonic() - start
    strays.append(r.meta["pid"])  # the sleep is still in the shell's process group
    assert 5 <= elapsed <= 8, elapsed
    assert ("[note: a process kept the output pipe open; stopped reading 5 s after the shell "
            "exited]\n[exit code 0]") in r.text
    assert r.text.endswith("[exit code 0]")
    assert group_members(r.meta["pid"]), "the exempt sleep should still be running"


def test_large_output_is_shaped_by_the_core_and_pageable_whole(shell):  # §5.16
    s = shell()
    [r] = s.run({"id": "big", "name": "bash",
                 "arguments": {"command": "head -c 1000000 /dev/zero | tr '\\0' a; echo"}})
    assert len(r.text) <= 30_000
    assert "…[truncated tool=bash call_id=big result_ref=" in r.text
    ref = r.meta["result_ref"]
    assert r.text.startswith("aaaa") and r.text.endswith("a\n[exit code 0]")
    pages, offset = [], 0
    while True:
        page = s.session.results.page("big", ref, offset, 24_576)
        header, _, body = page.partition("\n")
        pages.append(body)
        meta = json.loads(header)
        if meta["complete"]:
            break
        offset = meta["next_offset"]
    assert "".join(pages) == "a" * 1_000_000 + "\n[exit code 0]"


def test_large_output_pages_back_whole_through_session_tool_result(callgate_session):  # §5.16
    callgate_capability = pytest.importorskip("callgate_capability")
    import callgate_shell

    s = callgate_session(plugins=[callgate_shell, callgate_capability], surface="lean")
    [r] = s.run({"id": "big", "name": "bash",
                 "arguments": {"command": "head -c 1000000 /dev/zero | tr '\\0' a; echo"}})
    ref = r.meta["result_ref"]
    assert f"result_ref={ref}" in r.text and '"capability_id":"session:tool_result"' in r.text
    pages, offset = [], 0
    while True:
        page = s.call("use_capability", {"action": "call", "capability_id": "session:tool_result",
                                         "arguments": {"tool_call_id": "big", "result_ref": ref,
                                                       "offset": offset}})
        assert not page.is_error, page.text
        header, _, body = page.text.partition("\n")
        meta = json.loads(header)
        pages.append(body)
        if meta["complete"]:
            break
        offset = meta["next_offset"]
    assert "".join(pages) == "a" * 1_000_000 + "\n[exit code 0]"


def test_undecodable_bytes_become_replacement_characters(shell):  # §5.32
    s = shell()
    r = s.call("bash", {"command": "printf '\\xff\\xfeok'"})
    assert "ok" in r.text and "\ufffd" in r.text
    assert r.is_error is False


def test_cancelling_the_session_ends_the_group(shell):
    s = shell()
    s.call("bash", {"command": "true"})  # a remote executor's worker starts on the first call
    threading.Timer(0.5, s.session.cancel).start()
    start = time.monotonic()
    r = s.call("bash", {"command": "echo start; sleep 30 & echo $! > p; wait"})
    assert time.monotonic() - start < 5
    assert r.text.startswith("start\n")
    assert r.text.endswith("[cancelled; process group killed; output above is partial]")
    assert (r.error.kind, r.error.signature) == ("cancelled", "cancelled")
    assert r.meta["cancelled"] is True
    assert wait_until(lambda: not pid_alive(read_pid(s.path("p"))), 3)


def test_a_foreign_signal_is_reported_by_name(shell):
    s = shell()
    r = s.call("bash", {"command": "echo before; kill -TERM $$"})
    assert r.text == "before\n[terminated by signal 15 (SIGTERM)]"
    assert (r.error.kind, r.error.signature) == ("tool_error", "signal:15")
    assert r.meta["signal"] == 15 and r.meta["exit_code"] is None


def test_capture_limit_keeps_head_and_tail_around_a_marker(shell):
    s = shell({"shell": {"max_capture_bytes": 4096}})
    r = s.call("bash", {"command": "printf 'H%.0s' $(seq 3000); printf 'T%.0s' $(seq 3000)"})
    assert r.text.startswith("H" * 2048 + "\n[... 1904 bytes dropped by the capture limit ...]\n"
                             + "T" * 2048)
    assert r.meta["capture_dropped_bytes"] == 1904 and r.meta["output_bytes"] == 6000


def test_printing_hundreds_of_megabytes_does_not_exhaust_memory(shell):
    s = shell({"shell": {"max_capture_bytes": 1 << 20}})
    me = psutil.Process()
    before = me.memory_info().rss
    peak = [before]
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            peak[0] = max(peak[0], me.memory_info().rss)
            time.sleep(0.01)

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        r = s.call("bash", {"command": "head -c 268435456 /dev/zero"})
    finally:
        stop.set()
        sampler.join()
    assert r.meta["output_bytes"] == 268435456
    assert r.meta["capture_dropped_bytes"] == 268435456 - (1 << 20)
    assert peak[0] - before < 64 << 20, (peak[0] - before) >> 20


def test_a_launch_failure_says_it_could_not_start_bash(shell):
    s = shell()
    # the session reaches where its tools run while the workspace exists (a remote
    # session opens its side on the worker with its first call there: with no workspace
    # the worker answers unavailable, and bash is never tried)
    assert not s.call("bash", {"command": "true"}).is_error
    shutil.rmtree(s.workspace)
    r = s.call("bash", {"command": "echo hi"})
    assert r.is_error and r.error.kind == "tool_error"
    assert r.text.startswith("could not start bash: ")
    s.workspace.mkdir()
