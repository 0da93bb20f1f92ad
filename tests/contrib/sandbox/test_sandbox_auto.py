"""``[sandbox] enabled = "auto"``, the default (issue 25, item 7): confined wherever a
backend works, with the workspace and a private /tmp writable and the network allowed;
unconfined after one boot notice where none works; a workspace config the user config
does not trust cannot turn it off."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import callgate_sandbox
import callgate_shell
from callgate import sync
from callgate.testing import run_replay

from .sandbox_helpers import needs_bwrap

PLUGINS = [callgate_shell, callgate_sandbox]
WHO = "cat /proc/$PPID/comm; touch ../outside.txt 2>&1 | tail -1; echo done > in.txt; cat in.txt"


@needs_bwrap
def test_no_sandbox_table_means_confined(callgate_session: Any, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    s = callgate_session(plugins=PLUGINS, workspace=ws)
    r = s.call("bash", {"command": WHO})
    assert r.text.splitlines()[0] == "bwrap", r.text
    assert ("Read-only file system" in r.text or "Permission denied" in r.text), r.text
    assert not (tmp_path / "outside.txt").exists()
    assert "done" in r.text  # the workspace stays writable
    assert s.host.host.config("sandbox")["network"] is True
    assert not any("sandbox: off" in w for w in s.host.host.warnings)


@needs_bwrap
def test_replay_confines_by_default(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    [r] = run_replay([{"id": "a", "name": "bash", "arguments": {"command": WHO}}], ws)
    assert r["content"].splitlines()[0] == "bwrap" and not (tmp_path / "outside.txt").exists()


def test_without_a_working_backend_auto_runs_unconfined_after_one_notice(
        callgate_session: Any, tmp_path: Path, monkeypatch: Any) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "bash").symlink_to(shutil.which("bash") or "/bin/bash")
    for tool in ("cat", "touch", "tail"):
        found = shutil.which(tool)
        if found:
            (bin_dir / tool).symlink_to(found)
    monkeypatch.setenv("PATH", str(bin_dir))  # no bwrap on PATH
    ws = tmp_path / "ws"
    ws.mkdir()
    s = callgate_session(plugins=PLUGINS, workspace=ws)
    notices = [w for w in s.host.host.warnings if w.startswith("sandbox: off")]
    assert len(notices) == 1 and "\n" not in notices[0]
    assert "enabled = false" in notices[0] and "bwrap" in notices[0]
    [info] = [p for p in s.host.host.plugins() if p.name == "callgate_sandbox"]
    assert info.info[0].startswith('sandbox: off (enabled = "auto" and no backend works here')
    r = s.call("bash", {"command": "echo ran > in.txt; cat in.txt"})
    assert r.text.startswith("ran")


def test_an_untrusted_workspace_config_cannot_turn_the_sandbox_off(
        tmp_path: Path, user_config: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "callgate.toml").write_text("[sandbox]\nenabled = false\nnetwork = true\n"
                                      'backend = "none"\n')
    (user_config / "config.toml").write_text("[sandbox]\nnetwork = false\n")
    host = sync.Host.boot(None, workspace=ws, plugins=PLUGINS, entrypoints=False)
    try:
        assert host.host.config("sandbox")["enabled"] == "auto"
        assert host.host.config("sandbox")["network"] is False
        assert host.host.config("sandbox")["backend"] == "auto"
        ignored = [w for w in host.host.warnings if "in the workspace config is ignored" in w]
        assert len(ignored) == 3
    finally:
        host.close()
    # the user turns it off for everything, in the user config
    (user_config / "config.toml").write_text("[sandbox]\nenabled = false\n")
    host = sync.Host.boot(None, workspace=ws, plugins=PLUGINS, entrypoints=False)
    assert host.host.config("sandbox")["enabled"] is False
    host.close()


def test_a_workspace_config_may_turn_the_sandbox_on_strictly(tmp_path: Path, user_config: Path,
                                                             monkeypatch: Any) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "callgate.toml").write_text("[sandbox]\nenabled = true\n")
    (user_config / "config.toml").write_text(
        f"[sandbox]\nenabled = false\n[trust]\nworkspaces = [{json.dumps(str(tmp_path / 'x'))}]\n")
    host = sync.Host.boot(None, workspace=ws, plugins=PLUGINS, entrypoints=False)
    assert host.host.config("sandbox")["enabled"] is True  # tighter: applied
    host.close()


@needs_bwrap
def test_a_program_installed_under_tmp_still_runs_in_the_private_tmp(
        callgate_session: Any, tmp_path: Path) -> None:
    """The sandbox gives commands a private /tmp; a program that itself lives under /tmp (rg
    in the .venv of a checkout under /tmp, as a CI clone may be) must stay visible, or the
    command does not start (grep answered "(no matches)")."""
    from callgate import process

    if not tmp_path.is_relative_to("/tmp"):
        import pytest
        pytest.skip("the test's temporary directory is not under /tmp here")
    tool_dir = tmp_path / "venv" / "bin"
    tool_dir.mkdir(parents=True)
    echo = tool_dir / "say"
    shutil.copy("/bin/echo", echo)
    ws = tmp_path / "ws"
    ws.mkdir()
    s = callgate_session(plugins=PLUGINS, workspace=ws)
    prepared = process.prepare(s.session, [str(echo), "started"], sandbox="required",
                               purpose="test")
    done = prepared.run(text=True, timeout=60)
    assert done.returncode == 0 and done.stdout == "started\n", done.stderr
