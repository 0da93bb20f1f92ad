"""Confinement through the full pipeline with ``[sandbox] enabled = true`` (bwrap): the
workspace and a private /tmp are writable; the user's home, /etc and sibling directories
are not, and each refusal carries the hint naming ``[sandbox] writable``/``readable``."""

from __future__ import annotations

import os
import tempfile
import uuid
from pathlib import Path

import pytest
from callgate_sandbox import SANDBOX

from .sandbox_helpers import needs_bwrap

pytestmark = needs_bwrap


def snapshot(directory: Path) -> tuple[list[str], int]:
    """A directory's entries and mtime: what a refused write must leave unchanged."""
    return sorted(os.listdir(directory)), directory.stat().st_mtime_ns


def note_of(text: str) -> str:
    [line] = [x for x in text.splitlines() if x.startswith("[note: ")]
    return line


def test_writing_inside_the_workspace_works(sandboxed):
    s = sandboxed()
    r = s.call("bash", {"command": "mkdir -p out && printf 'hi\\n' > out/f.txt && cat out/f.txt"})
    assert r.text == "hi\n[exit code 0]" and not r.is_error
    assert s.read("out/f.txt") == b"hi\n"
    r = s.call("bash", {"command": "pwd -P; rm out/f.txt && echo removed"})
    assert r.text == f"{os.path.realpath(s.workspace)}\nremoved\n[exit code 0]"
    assert not s.path("out/f.txt").exists()


def test_writing_to_the_users_home_fails_with_the_hint(sandboxed):
    home = Path(os.path.expanduser("~")).resolve()
    if not home.is_dir() or not os.access(home, os.W_OK) or str(home).startswith("/tmp"):
        pytest.skip(f"needs a writable home directory outside /tmp; HOME is {home}")
    name = f".callgate-sandbox-probe-{uuid.uuid4().hex}"
    before = snapshot(home)
    s = sandboxed()
    try:
        r = s.call("bash", {"command": f'echo secret > "$HOME/{name}"'})
    finally:
        leaked = (home / name).exists()
        (home / name).unlink(missing_ok=True)
    assert not leaked
    assert r.is_error and r.error.signature == "exit:1"
    assert "Read-only file system" in r.text
    assert note_of(r.text) == (
        f"[note: the sandbox keeps {home}/{name} read-only (only the workspace and a private "
        f'/tmp are writable); to allow writing there, add "{home}" to [sandbox] writable]')
    assert r.text.endswith("]\n[exit code 1]")
    assert snapshot(home) == before


def test_writing_to_etc_fails_with_the_hint(sandboxed):
    if not os.access("/etc", os.W_OK):
        pytest.skip("the host itself cannot write /etc for this user, so there is no hint to give")
    name = f"/etc/callgate-sandbox-probe-{uuid.uuid4().hex}"
    before = snapshot(Path("/etc"))
    s = sandboxed()
    try:
        r = s.call("bash", {"command": f"touch {name}"})
    finally:
        leaked = os.path.exists(name)
        if leaked:
            os.unlink(name)
    assert not leaked and r.is_error
    assert f"touch: cannot touch '{name}': Read-only file system" in r.text
    assert 'add "/etc" to [sandbox] writable]' in note_of(r.text)
    assert snapshot(Path("/etc")) == before


def test_a_sibling_of_the_workspace_in_tmp_is_hidden_and_the_hint_says_which_key(
        sandboxed, tmp_path):
    ws, sibling = tmp_path / "ws", tmp_path / "sibling"
    ws.mkdir()
    sibling.mkdir()
    (sibling / "keep.txt").write_text("kept\n")
    before = snapshot(sibling)
    s = sandboxed(workspace=ws)
    r = s.call("bash", {"command": "echo x > ../sibling/new.txt"})
    assert r.is_error and "No such file or directory" in r.text
    assert note_of(r.text) == (
        f"[note: ../sibling/new.txt is in {sibling}, which the sandbox hides (it has its own "
        f'/tmp); to allow writing there, add "{sibling}" to [sandbox] writable (or readable to '
        "read it)]")
    r = s.call("bash", {"command": f"cat {sibling}/keep.txt"})
    assert r.is_error
    assert note_of(r.text) == (
        f"[note: {sibling}/keep.txt exists outside the sandbox but is hidden (the sandbox has "
        f'its own /tmp); to allow it, add "{sibling}/keep.txt" to [sandbox] readable (or '
        "writable to change it)]")
    assert snapshot(sibling) == before and (sibling / "keep.txt").read_text() == "kept\n"


def test_writing_next_to_a_workspace_in_tmp_fails_instead_of_landing_in_a_copy(sandboxed,
                                                                                tmp_path):
    ws = tmp_path / "deep" / "ws"
    ws.mkdir(parents=True)
    before = snapshot(tmp_path)
    s = sandboxed(workspace=ws)
    for target in ("../outside.txt", "../../outside.txt"):
        r = s.call("bash", {"command": f"echo x > {target}; echo status=$?"})
        assert f"{target}: Permission denied\nstatus=1\n" in r.text
    r = s.call("bash", {"command": "echo x > ../outside.txt"})
    assert note_of(r.text).endswith(f'add "{tmp_path / "deep"}" to [sandbox] writable]')
    assert snapshot(tmp_path) == before and sorted(os.listdir(tmp_path / "deep")) == ["ws"]
    private = Path(s.session.extension(SANDBOX).tmp_dir)
    assert not list(private.rglob("outside.txt"))
    s.close()
    assert not private.exists()


def test_a_sibling_outside_tmp_is_read_only_and_writable_once_configured(callgate_session,
                                                                         sandboxed):
    if not os.access("/var/tmp", os.W_OK):
        pytest.skip("needs a writable /var/tmp for a workspace outside /tmp")
    with tempfile.TemporaryDirectory(dir="/var/tmp", prefix="callgate-sandbox-") as root:
        ws, sibling = Path(root, "ws"), Path(root, "sibling")
        ws.mkdir()
        sibling.mkdir()
        (sibling / "keep.txt").write_text("kept\n")
        before = snapshot(sibling)
        s = sandboxed(workspace=ws)
        r = s.call("bash", {"command": "cat ../sibling/keep.txt && echo more >> "
                                       "../sibling/keep.txt"})
        assert r.is_error and r.text.startswith("kept\n")
        assert "Read-only file system" in r.text
        assert note_of(r.text).endswith(f'add "{sibling}" to [sandbox] writable]')
        assert snapshot(sibling) == before and (sibling / "keep.txt").read_text() == "kept\n"

        s = sandboxed(workspace=ws, sandbox={"writable": [str(sibling)]})
        r = s.call("bash", {"command": "echo more >> ../sibling/keep.txt && echo new > "
                                       "../sibling/new.txt"})
        assert r.text == "(no output)\n[exit code 0]"
        assert (sibling / "keep.txt").read_text() == "kept\nmore\n"
        assert (sibling / "new.txt").read_text() == "new\n"


def test_readable_shows_a_hidden_path_read_only(sandboxed, tmp_path):
    ws, shared = tmp_path / "ws", tmp_path / "shared"
    ws.mkdir()
    shared.mkdir()
    (shared / "data.txt").write_text("shared data\n")
    s = sandboxed(workspace=ws, sandbox={"readable": [str(shared)]})
    r = s.call("bash", {"command": f"cat {shared}/data.txt"})
    assert r.text == "shared data\n[exit code 0]"
    r = s.call("bash", {"command": f"echo x > {shared}/data.txt"})
    assert r.is_error and "Read-only file system" in r.text
    assert note_of(r.text).endswith(f'add "{shared}" to [sandbox] writable]')
    assert (shared / "data.txt").read_text() == "shared data\n"


def test_tmp_is_private_to_the_session_and_removed_at_close(sandboxed, callgate_session):
    marker = f"callgate-sandbox-{uuid.uuid4().hex}"
    s = sandboxed()
    r = s.call("bash", {"command": f"echo one > /tmp/{marker} && mktemp -d /tmp/x.XXXX"})
    assert not r.is_error
    assert not os.path.exists(f"/tmp/{marker}")  # not the host's /tmp
    assert s.call("bash", {"command": f"cat /tmp/{marker}"}).text == "one\n[exit code 0]"
    other = sandboxed()
    assert other.call("bash", {"command": f"test -e /tmp/{marker}; echo $?"}).text == \
        "1\n[exit code 0]"
    private = s.session.extension(SANDBOX).tmp_dir
    assert private is not None and os.path.isfile(os.path.join(private, marker))
    s.close()
    assert not os.path.exists(private)


def test_tmpdir_from_the_environment_stays_usable(sandboxed, monkeypatch, tmp_path):
    tmpdir = tmp_path / "host-tmpdir"
    tmpdir.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmpdir))
    monkeypatch.setenv("CALLGATE_SANDBOX_PROBE", "passed through")
    s = sandboxed()
    r = s.call("bash", {"command": 'f=$(mktemp) && echo "$f" && echo "$CALLGATE_SANDBOX_PROBE'
                                   '|$NO_COLOR|$TERM|$GIT_TERMINAL_PROMPT"'})
    first, second, status = r.text.splitlines()
    assert first.startswith(f"{tmpdir}/") and status == "[exit code 0]"
    assert second == "passed through|1|dumb|0"
    assert os.listdir(tmpdir) == []  # the file went to the session's private temp dir


def test_tmpdir_holding_the_workspace_stays_writable(sandboxed, monkeypatch, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    s = sandboxed(workspace=ws)
    r = s.call("bash", {"command": "f=$(mktemp) && echo made > $f && cat $f && dirname $f"})
    assert r.text == f"made\n{tmp_path}\n[exit code 0]"
    assert sorted(os.listdir(tmp_path)) == ["ws"]


def test_proc_and_dev_are_minimal(sandboxed):
    s = sandboxed()
    r = s.call("bash", {"command": "ls /proc | grep -c '^[0-9]'; ls /dev"})
    count, *devices, status = r.text.splitlines()
    assert status == "[exit code 0]"
    assert int(count) < 10  # only the sandbox's own processes, not the host's
    assert {"null", "zero", "random", "urandom", "tty"} <= set(devices)
    assert set(devices) <= {"console", "core", "fd", "full", "null", "ptmx", "pts", "random",
                            "shm", "stderr", "stdin", "stdout", "tty", "urandom", "zero"}


@pytest.mark.skipif(os.geteuid() != 0, reason="only root could remount without the sandbox")
def test_root_inside_cannot_remount_its_way_out(sandboxed):
    name = f"/etc/callgate-sandbox-probe-{uuid.uuid4().hex}"
    s = sandboxed()
    try:
        r = s.call("bash", {"command": f"mount -o remount,rw,bind / 2>&1; touch {name}"})
    finally:
        leaked = os.path.exists(name)
        if leaked:
            os.unlink(name)
    assert not leaked and r.is_error and "Read-only file system" in r.text


def test_a_workspace_extra_root_is_writable_too(sandboxed, tmp_path):
    ws, extra = tmp_path / "ws", tmp_path / "extra"
    ws.mkdir()
    extra.mkdir()
    s = sandboxed(workspace=ws, config={"workspace": {"extra_roots": [str(extra)]}})
    r = s.call("bash", {"command": f"echo ok > {extra}/f && cat {extra}/f"})
    assert r.text == "ok\n[exit code 0]"
