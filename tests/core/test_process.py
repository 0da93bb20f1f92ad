"""`callgate.process`, the one door for every program a session starts: the environment
filter, program lookup, the sandbox hook and its refusal, the start forms, and the
lifetime (the session's marker swept at close, the lifeline helper when the host dies).
The attacks through the front doors are in tests/trust/test_spawn_door.py."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import callgate_files
import psutil
import pytest
from callgate import ToolError, hookimpl, process
from callgate._host.host import UNCONFINED
from callgate._pipeline.lifeline import HELPER, MARKER, lifeline
from callgate.process import Confined, Environment

posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX processes")
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc")


# --- the environment ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", [
    "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "GITHUB_TOKEN", "GH_TOKEN", "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY", "AZURE_STORAGE_KEY", "PGPASSWORD", "DB_PASSWD", "HF_TOKEN",
    "GOOGLE_APPLICATION_CREDENTIALS", "SECRET_KEY_BASE", "npm_config__auth", "GITHUB_PAT",
    "SENTRY_DSN", "MYSQL_PWD", "x_access_key"])
def test_secret_names_are_recognised(name: str) -> None:
    assert process.is_secret(name)


@pytest.mark.parametrize("name", ["PATH", "HOME", "USER", "LANG", "LC_ALL", "PWD", "OLDPWD",
                                  "SSH_AUTH_SOCK", "TERM", "VIRTUAL_ENV", "GOPATH", "EDITOR"])
def test_ordinary_names_are_not_secrets(name: str) -> None:
    assert not process.is_secret(name, "/usr/bin")


def test_a_url_with_a_password_is_a_secret_whatever_its_name() -> None:
    assert process.is_secret("DATABASE_URL", "postgres://app:hunter2@db.internal/app")
    assert not process.is_secret("DATABASE_URL", "postgres://db.internal/app")
    assert not process.is_secret("HOMEPAGE", "https://example.org/a:b")


def test_the_environment_drops_secrets_keeps_what_is_asked_and_sets_last(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "bin").mkdir(parents=True)
    base = {"PATH": os.pathsep.join(["bin", "", str(ws / "bin"), "/usr/bin", "/usr/bin"]),
            "HOME": "/home/u", "A_TOKEN": "t", "PLAIN": "p", "SPECIAL": "s", "LISTED_KEY": "k"}
    env = Environment().build([str(ws)], base)
    assert env == {"PATH": "/usr/bin", "HOME": "/home/u", "PLAIN": "p", "SPECIAL": "s"}
    env = Environment(inherit="minimal", keep=("LISTED_KEY",), drop=("special",),
                      set={"A_TOKEN": "mine"}).build([str(ws)], base)
    assert env == {"PATH": "/usr/bin", "HOME": "/home/u", "LISTED_KEY": "k", "A_TOKEN": "mine"}
    env = Environment(secrets=True, path_from_workspace=True).build([str(ws)], base)
    assert env == base


def test_which_never_finds_a_program_in_a_relative_or_workspace_path_entry(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, callgate_session: Any) -> None:
    s = callgate_session()
    host_bin = tmp_path / "host-bin"
    for directory in (s.workspace / "bin", host_bin):
        directory.mkdir()
        tool = directory / "tool-x"
        tool.write_text("#!/bin/sh\n")
        tool.chmod(0o755)
    monkeypatch.chdir(s.workspace)
    path = os.pathsep.join(["bin", str(s.workspace / "bin"), str(host_bin)])
    assert process.which("tool-x", s.session, path=path) == str(host_bin / "tool-x")
    assert process.which("tool-x", s.session, path=os.pathsep.join(["bin", str(
        s.workspace / "bin")])) is None


# --- prepare: the sandbox hook --------------------------------------------------------------------


class Confiner:
    """A sandbox stand-in: runs every program under ``env CONFINED=1`` and records what the
    door asked."""

    def __init__(self) -> None:
        self.seen: list[Any] = []

    @hookimpl
    def callgate_confine_process(self, launch: Any, session: Any) -> Confined:
        self.seen.append(launch)
        return Confined(argv=["env", "CONFINED=1", *launch.argv], env=launch.env,
                        cwd=launch.cwd, note=lambda output, code: "noted")


@posix_only
def test_the_hook_confines_what_it_is_asked_to_and_the_marker_rides_along(
        callgate_session: Any) -> None:
    confiner = Confiner()
    s = callgate_session(plugins=[callgate_files, ("confiner", confiner)])
    prepared = process.prepare(s.session, ["sh", "-c", "echo $CONFINED $" + MARKER],
                               workspace="read", purpose="test")
    assert prepared.confined and prepared.note is not None
    [launch] = confiner.seen
    assert launch.workspace == "read" and launch.network is False and launch.purpose == "test"
    assert os.path.isabs(launch.argv[0]) and launch.cwd == s.session.workspace.root
    done = prepared.run(timeout=30, text=True)
    confined, marker = done.stdout.split()
    assert confined == "1" and marker == launch.env[MARKER]
    assert not s.host.host.warnings  # a confining plugin is loaded: no boot notice


def test_a_program_that_needs_the_sandbox_is_refused_without_one(callgate_session: Any) -> None:
    s = callgate_session(plugins=[callgate_files])
    assert s.host.host.warnings.count(UNCONFINED) == 1  # said once, at boot
    with pytest.raises(ToolError) as caught:
        process.prepare(s.session, ["true"], sandbox="required", because="it runs the build",
                        purpose="the builder")
    assert caught.value.signature == process.SANDBOX_REQUIRED
    assert caught.value.kind == "unavailable" and caught.value.meta["executed"] is False
    assert caught.value.message.startswith("the builder was not started: it runs the build")
    unconfined = process.prepare(s.session, ["true"])  # "if_available": runs as it is
    assert not unconfined.confined


def test_the_door_refuses_what_it_cannot_promise(callgate_session: Any) -> None:
    with pytest.raises(ValueError, match='sandbox="off"'):
        process.prepare(None, ["true"])
    with pytest.raises(FileNotFoundError):
        process.prepare(None, ["no-such-program-anywhere-x"], sandbox="off")
    prepared = process.prepare(None, ["true"], sandbox="off")
    assert MARKER not in prepared.env  # the host's own helper: no session to end with
    with pytest.raises(TypeError, match="env"):
        prepared.popen(env={})


@posix_only
def test_run_kills_the_whole_group_on_timeout(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    prepared = process.prepare(None, ["sh", "-c", f"sleep 300 & echo $! > {pidfile}; wait"],
                               sandbox="off")
    with pytest.raises(subprocess.TimeoutExpired):
        prepared.run(timeout=1)
    child = int(pidfile.read_text())
    assert _gone(child)


async def _start_and_read(prepared: process.Prepared) -> bytes:
    import asyncio

    proc = await prepared.start(stdout=asyncio.subprocess.PIPE)
    out, _ = await proc.communicate()
    return out


@posix_only
def test_the_asyncio_start_runs_the_prepared_program() -> None:
    import asyncio

    prepared = process.prepare(None, ["sh", "-c", "echo started"], sandbox="off")
    assert asyncio.run(_start_and_read(prepared)) == b"started\n"


# --- lifetime ------------------------------------------------------------------------------------


def _gone(pid: int, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.05)
    return False


@linux_only
def test_a_session_ends_what_escaped_its_process_groups_the_family_what_it_shares(
        callgate_session: Any) -> None:
    s = callgate_session()
    child = s.child()
    own = process.prepare(child.session, ["sleep", "301"]).popen(start_new_session=True)
    shared = process.prepare(child.session, ["sleep", "302"], lifetime="family").popen(
        start_new_session=True)
    try:
        child.close()
        assert _gone(own.pid)
        own.wait()
        time.sleep(0.2)
        assert shared.poll() is None  # the family's (an MCP server) outlives one member
        s.close()
        assert _gone(shared.pid)
        shared.wait()
    finally:
        for proc in (own, shared):
            if proc.poll() is None:
                proc.kill()
                proc.wait()


@linux_only
def test_the_lifeline_helper_ends_what_carries_the_host_marker_when_the_host_goes() -> None:
    token = "feedfacecafebeef"
    marked = subprocess.Popen(["sleep", "303"], start_new_session=True,
                              env={**os.environ, MARKER: f"{token}.0123"})
    other = subprocess.Popen(["sleep", "304"], start_new_session=True,
                             env={**os.environ, MARKER: "0000000000000000.0123"})
    helper = subprocess.Popen([sys.executable, "-I", "-S", "-c", HELPER, MARKER, token],
                              stdin=subprocess.PIPE)
    try:
        time.sleep(0.2)
        assert marked.poll() is None
        assert helper.stdin is not None
        helper.stdin.close()  # as when the host dies: the pipe's write end closes
        helper.wait(10)
        assert marked.wait(10) == -signal.SIGKILL
        assert other.poll() is None  # another host's: left alone
    finally:
        for proc in (marked, other, helper):
            if proc.poll() is None:
                proc.kill()
                proc.wait()


@linux_only
def test_the_lifeline_helper_is_started_again_after_it_died(callgate_session: Any) -> None:
    s = callgate_session()
    process.prepare(s.session, ["true"])
    first = lifeline.pid
    assert first is not None
    os.kill(first, signal.SIGKILL)
    psutil.Process(first).wait(5)
    process.prepare(s.session, ["true"])
    assert lifeline.pid not in (None, first)
