"""The refusal hint as a unit, on the messages real programs print: one line naming the key
that would allow what failed, and nothing when the sandbox is not why it failed."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from callgate_sandbox import Policy, refusal_hint

NETWORK = ("the sandbox has no network, so connections fail (the host's loopback and Unix "
           "sockets included); set [sandbox] network = true to allow them")


@pytest.fixture
def layout(tmp_path: Path) -> dict[str, Path]:
    """A workspace, an outside directory the host may write, and a 'private' directory that
    stands in for the sandbox's own /tmp, with a hidden host directory inside it."""
    paths = {name: tmp_path / name for name in ("ws", "outside", "private", "extra")}
    for path in paths.values():
        path.mkdir()
    (paths["private"] / "hidden").mkdir()
    (paths["private"] / "hidden" / "data.txt").write_text("x")
    return paths


def policy(layout: dict[str, Path], **kwargs: object) -> Policy:
    values = {"workspace": (str(layout["ws"]),), "tmp_dir": "/unused",
              "private_dirs": (str(layout["private"]),), **kwargs}
    return Policy(**values)  # type: ignore[arg-type]


def hint(layout, output: str, exit_code: int | None = 1, **kwargs: object) -> str | None:
    return refusal_hint(output, exit_code, policy(layout, **kwargs), str(layout["ws"]),
                        home=str(layout["outside"]))


@pytest.mark.parametrize("message", [
    "touch: cannot touch '{p}/f': Read-only file system",
    "bash: line 1: {p}/f: Read-only file system",
    "bash: /usr/bin/tool: {p}/f: Read-only file system",
    "OSError: [Errno 30] Read-only file system: '{p}/f'",
    "npm ERR! EROFS: read-only file system, open '{p}/f'",
    "error: could not lock config file {p}/f: Read-only file system",
    "mkdir: cannot create directory ‘{p}/f’: Read-only file system",
    "PermissionError: [Errno 13] Permission denied: '{p}/f'",
    "bash: {p}/f: Permission denied",
])
def test_a_write_refused_outside_the_workspace_names_writable(layout, message):
    outside = layout["outside"]
    text = hint(layout, "building...\n" + message.format(p=outside) + "\nmore output\n")
    assert text == (f"the sandbox keeps {outside}/f read-only (only the workspace and a private "
                    f'/tmp are writable); to allow writing there, add "{outside}" to '
                    "[sandbox] writable")


def test_paths_are_named_as_the_command_wrote_them(layout):
    text = hint(layout, "touch: cannot touch '../outside/new/deeper': Read-only file system")
    assert text is not None
    assert text.startswith("the sandbox keeps ../outside/new/deeper read-only")
    assert text.endswith(f'add "{layout["outside"]}" to [sandbox] writable')
    text = hint(layout, "touch: cannot touch '~/f': Read-only file system")
    assert text is not None and f'add "{layout["outside"]}"' in text


def test_a_read_only_file_system_without_a_path_still_gets_the_hint(layout):
    assert hint(layout, "cp: Read-only file system") == (
        "the sandbox keeps everything outside the workspace read-only; add the directory to "
        "[sandbox] writable to allow writing there")


@pytest.mark.parametrize("output", [
    "touch: cannot touch 'f': Read-only file system",  # in the workspace: not the sandbox
    "bash: ./build/out: Permission denied",
    "bash: /proc/sys/kernel/x: Read-only file system",  # kernel interfaces are not for config
    "cat: missing.txt: No such file or directory",
    "cat: /definitely/not/here: No such file or directory",
    "all good",
])
def test_failures_the_sandbox_did_not_cause_get_no_hint(layout, output):
    assert hint(layout, output) is None


def test_configured_writable_paths_get_no_hint(layout):
    extra = layout["extra"]
    assert hint(layout, f"bash: {extra}/f: Permission denied", writable=(str(extra),)) is None


def test_a_success_gets_no_hint_whatever_it_printed(layout):
    output = f"touch: cannot touch '{layout['outside']}/f': Read-only file system\n"
    assert hint(layout, output, exit_code=0) is None
    assert hint(layout, output, exit_code=None) is not None  # killed: still worth saying


def test_a_path_the_sandbox_hides_names_readable_or_writable(layout):
    hidden = layout["private"] / "hidden"
    private = layout["private"]
    text = hint(layout, f"cat: {hidden}/data.txt: No such file or directory")
    assert text == (f"{hidden}/data.txt exists outside the sandbox but is hidden (the sandbox "
                    f'has its own {private}); to allow it, add "{hidden}/data.txt" to '
                    "[sandbox] readable (or writable to change it)")
    text = hint(layout, f"bash: {hidden}/new/f: No such file or directory")
    assert text == (f"{hidden}/new/f is in {hidden}, which the sandbox hides (it has its own "
                    f'{private}); to allow writing there, add "{hidden}" to [sandbox] writable '
                    "(or readable to read it)")
    # missing on the host as well, or the private directory itself: no hint
    assert hint(layout, f"cat: {private}/nothing: No such file or directory") is None
    assert hint(layout, f"cat: {hidden}/data.txt: No such file or directory",
                readable=(str(hidden),)) is None


def test_the_directories_holding_a_workspace_in_a_private_dir_are_not_writable(layout):
    private = layout["private"]
    holder = private / "hold"
    (holder / "ws").mkdir(parents=True)
    inner = policy(layout, workspace=(str(holder / "ws"),))
    assert not inner.writable_inside(str(holder / "x")) and inner.holds_bind(str(holder))
    assert inner.writable_inside(str(private / "x"))  # the private dir itself is writable
    assert inner.writable_inside(str(holder / "ws" / "x"))
    text = refusal_hint("bash: line 1: ../x: Permission denied", 1, inner, str(holder / "ws"))
    assert text is not None and text.startswith("the sandbox keeps ../x read-only")
    assert text.endswith(f'add "{holder}" to [sandbox] writable')


@pytest.mark.parametrize("message", [
    "curl: (7) Failed to connect to 127.0.0.1 port 8000 after 0 ms: Couldn't connect to server",
    "urllib.error.URLError: <urlopen error [Errno 111] Connection refused>",
    "urllib.error.URLError: <urlopen error [Errno 101] Network is unreachable>",
    "urllib.error.URLError: <urlopen error [Errno -3] Temporary failure in name resolution>",
    "fatal: unable to access 'https://github.com/x/y/': Could not resolve host: github.com",
    "npm ERR! request to https://registry.npmjs.org/x failed, reason: getaddrinfo EAI_AGAIN",
    "Error: connect ECONNREFUSED 127.0.0.1:5432",
])
def test_an_unreachable_network_names_the_network_key(layout, message):
    assert hint(layout, message) == NETWORK
    assert hint(layout, message, network=True) is None


def test_several_refusals_make_one_line(layout):
    output = (f"cp: cannot create regular file '{layout['outside']}/a': Read-only file system\n"
              "curl: (6) Could not resolve host: example.com\n"
              f"cp: cannot create regular file '{layout['outside']}/b': Read-only file system\n")
    text = hint(layout, output)
    assert text is not None and "\n" not in text
    assert text.count("[sandbox] writable") == 1 and text.endswith(NETWORK)


def test_a_huge_output_is_scanned_quickly_at_its_start_and_end(layout):
    refusal = f"bash: {layout['outside']}/f: Read-only file system\n"
    filler = ("x" * 199 + "\n") * 100_000  # 20 MB
    for output in (filler + refusal, refusal + filler):
        started = time.monotonic()
        assert hint(layout, output) is not None
        assert time.monotonic() - started < 2
    noisy = "cat: nope: No such file or directory\n" * 100_000
    started = time.monotonic()
    assert hint(layout, noisy) is None
    assert time.monotonic() - started < 2


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere on the host")
def test_a_place_the_host_refuses_too_gets_no_hint(layout):
    locked = layout["outside"] / "locked"
    locked.mkdir(mode=0o555)
    assert hint(layout, f"bash: {locked}/f: Permission denied") is None
