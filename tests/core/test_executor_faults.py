"""The tests' fault-injection plugin module (tests/faults.py) reaches a remote session's
worker through the worker's ordinary plugin loading (the host's plugin modules, by name)
and the host's config; a workspace can never switch a fault on, here or on the worker."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import callgate_files
import pytest
from callgate import ToolCall, sync

from tests import faults

WORKER = [sys.executable, "-m", "callgate_cli", "worker", "--workspace", "{workspace}"]
REWRITE = {"test_faults": {"rewrite_before_temp": "ONE"}}


def _edit(session: Any) -> Any:
    session.run(ToolCall("r", "read_file", {"path": "a.txt"}))
    return session.run(
        ToolCall("e", "edit_file", {"path": "a.txt", "old_string": "two", "new_string": "2"})
    )


@pytest.mark.parametrize("where", ["local", "worker"])
def test_a_fault_in_the_hosts_config_is_in_place_where_the_tools_run(
    tmp_path: Path, where: str
) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo\n")
    config = {"files": {"watch": False}, **REWRITE}
    with sync.Host.boot(config, plugins=[callgate_files, faults], entrypoints=False) as host:
        session = host.open_session(tmp_path, executor=WORKER if where == "worker" else [])
        result = _edit(session)
    assert result.is_error and result.error.signature == "FS_STALE_VERSION", result.text
    assert (tmp_path / "a.txt").read_bytes() == b"ONE\ntwo\n"


@pytest.mark.parametrize("where", ["local", "worker"])
def test_a_workspace_cannot_switch_a_fault_on(tmp_path: Path, where: str) -> None:
    """The attack: a planted ``callgate.toml`` names the fault. The table is user-only, so
    the workspace's value is dropped (a boot warning), on the host and on the worker (which
    layers the workspace's config on the host's as a host does): the edit lands."""
    (tmp_path / "a.txt").write_text("one\ntwo\n")
    (tmp_path / "callgate.toml").write_text('[test_faults]\nrewrite_before_temp = "ONE"\n')
    config = {"files": {"watch": False}}
    with sync.Host.boot(
        None,  # the workspace's own config is read (and layered on the user's)
        user_config=config,
        plugins=[callgate_files, faults],
        entrypoints=False,
        workspace=tmp_path,
    ) as host:
        assert host.config("test_faults")["rewrite_before_temp"] == ""
        session = host.open_session(tmp_path, executor=WORKER if where == "worker" else [])
        result = _edit(session)
    assert not result.is_error, result.text
    assert (tmp_path / "a.txt").read_bytes() == b"one\n2\n"


def test_two_sessions_ending_in_either_order_leave_no_fault_behind(tmp_path: Path) -> None:
    """Two local sessions of one process both patch the atomic writer; the first to end
    must not restore over the second's patch (which would leave the second's wrapper in
    place for good when it ends): after both, the writer is the original function."""
    import callgate._fs.atomic as atomic

    original = atomic.write_temp
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    config = {"files": {"watch": False}, **REWRITE}
    with sync.Host.boot(config, plugins=[callgate_files, faults], entrypoints=False) as host:
        first = host.open_session(tmp_path / "a", executor=[])
        second = host.open_session(tmp_path / "b", executor=[])
        first.close()
        assert atomic.write_temp is not original  # the second's fault still applies
        second.close()
    assert atomic.write_temp is original
