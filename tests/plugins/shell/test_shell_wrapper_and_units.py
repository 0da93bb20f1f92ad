"""The confinement hook as the shell sees it (shell.md §1.8: `callgate.process`'s
``callgate_confine_process``), the reaping-exemption lexer (§2), the environment (§1.4) and
the bounded buffers (§1.7, §4) as units."""

from __future__ import annotations

import os
import time

import callgate_shell
import pytest
from callgate import hookimpl
from callgate.process import Confined
from callgate_shell._capture import ByteTail, Capture, incomplete_utf8_suffix
from callgate_shell._env import FORCED, command_env
from callgate_shell._exemption import keeps_background_processes
from shell_helpers import jobs_of, wait_until

posix_only = pytest.mark.skipif(os.name != "posix", reason="needs POSIX")


OBJECT_SANDBOX = pytest.mark.local_executor_only(
    "the sandbox is a plugin object whose record the test reads in this process; a worker "
    "boots plugins by name, so it refuses the call rather than run unconfined "
    "(tests/core/test_executor.py::test_a_sandbox_the_worker_cannot_boot_refuses_the_remote_call)")


class Wrapper:
    """Prefixes every command with ``env WRAPPED=yes`` and notes what it saw."""

    def __init__(self) -> None:
        self.seen: list[tuple[list[str], str, str, str]] = []

    @hookimpl
    def callgate_confine_process(self, launch, session):
        self.seen.append((list(launch.argv), launch.cwd, launch.call.name, launch.workspace))

        def note(output, exit_code):
            return f"wrapper saw exit {exit_code} after {len(output)} characters"

        return Confined(argv=["env", "WRAPPED=yes", *launch.argv],
                        env={**launch.env, "FROM_WRAPPER": "1"}, cwd=launch.cwd, note=note)


@posix_only
@OBJECT_SANDBOX
def test_the_wrapper_runs_every_foreground_command_and_adds_its_note(callgate_session):
    wrapper = Wrapper()
    s = callgate_session(plugins=[callgate_shell, ("wrapper", wrapper)])
    r = s.call("bash", {"command": "echo $WRAPPED $FROM_WRAPPER"})
    assert r.text == ("yes 1\n[note: wrapper saw exit 0 after 6 characters]\n[exit code 0]")
    [(argv, cwd, name, access)] = wrapper.seen
    assert argv[1:] == ["-c", "echo $WRAPPED $FROM_WRAPPER"] and argv[0].endswith("bash")
    assert cwd == os.path.realpath(s.workspace) and name == "bash" and access == "write"


@posix_only
@OBJECT_SANDBOX
def test_the_wrapper_runs_background_jobs_and_its_note_joins_the_job_notes(callgate_session):
    wrapper = Wrapper()
    s = callgate_session(plugins=[callgate_shell, ("wrapper", wrapper)])
    s.call("bash", {"command": "echo $WRAPPED; exit 2", "run_in_background": True})
    assert wait_until(lambda: jobs_of(s).get("bash-1").finished.is_set(), 5)
    r = s.call("job_output", {"job_id": "bash-1"})
    assert r.text == ("[bash-1] failed (exit code 2)\nyes\n"
                      "[note: wrapper saw exit 2 after 4 characters]")


@pytest.mark.parametrize(("command", "kept"), [
    ("nohup sleep 60 >/dev/null 2>&1 & echo $! > p", True),
    ("setsid sleep 60 >/dev/null 2>&1 & echo $! > p", True),
    ("sleep 60 >/dev/null 2>&1 & disown", True),
    ("FOO=1 env nohup make &", True),
    ("(nohup sleep 1 &)", True),
    ("build &\nnohup serve", True),
    ("sleep 60 & echo $! > p", False),
    ("echo nohup; sleep 60 & echo $! > p", False),
    ("nohup make && make test", False),
    ("nohup make 2>&1", False),
    ("nohup make &> log", False),
    ("echo 'nohup' >&2", False),
    ("echo \"unbalanced", False),
])
def test_the_exemption_needs_a_lone_ampersand_and_a_keeper_in_command_position(command, kept):
    assert keeps_background_processes(command) is kept


def test_the_environment_is_forced_and_secrets_filtered_on_request():
    base = {"TERM": "xterm", "A_SECRET": "s", "DB_PASSWORD": "p", "x_access_key": "k",
            "SECRET_KEY_BASE": "kept", "HOME": "/h", "SPECIAL": "x"}
    env = command_env({"filter_secret_env": False}, base)
    assert env["TERM"] == "dumb" and env["A_SECRET"] == "s"
    assert all(env[k] == v for k, v in FORCED.items())
    env = command_env({"filter_secret_env": True, "secret_env_names": ["special"]}, base)
    assert set(env) - set(FORCED) == {"HOME"}  # SECRET_KEY_BASE (Rails' secret) is one too


def test_the_memory_tail_keeps_exactly_the_last_bytes():
    tail = ByteTail(10)
    for chunk in (b"abc", b"defgh", b"ijklmnop", b"q"):
        tail.add(chunk)
    assert tail.data() == b"hijklmnopq" and tail.start == 7 and tail.total == 17
    tail.add(b"0123456789ABC")
    assert tail.data() == b"3456789ABC"


def test_the_capture_guard_keeps_head_and_tail_only_beyond_its_limit():
    whole = Capture(8)
    whole.add(b"12345678")
    assert whole.text() == "12345678" and whole.dropped == 0
    cut = Capture(8)
    for _ in range(5):
        cut.add(b"abcd")
    assert cut.text() == "abcd\n[... 12 bytes dropped by the capture limit ...]\nabcd"


def test_an_unfinished_utf8_character_is_held_back():
    assert incomplete_utf8_suffix("é".encode()[:1]) == 1
    assert incomplete_utf8_suffix("ok中".encode()[:-1]) == 2
    assert incomplete_utf8_suffix("ok中".encode()) == 0
    assert incomplete_utf8_suffix(b"plain") == 0


@posix_only
def test_a_running_job_read_never_splits_a_character(shell):
    s = shell()
    s.call("bash", {"command": "printf '\\xe4\\xb8'; while [ ! -e go ]; do sleep 0.05; done; "
                               "printf '\\xad\\n'", "run_in_background": True})
    assert wait_until(lambda: jobs_of(s).get("bash-1").total == 2, 5)
    assert s.call("job_output", {"job_id": "bash-1"}).text == "[bash-1] running\n(no new output)"
    s.write("go", "")
    time.sleep(0.05)
    r = s.call("job_output", {"job_id": "bash-1", "wait": True, "timeout_ms": 5000})
    assert r.text == "[bash-1] done (exit code 0)\n中"
