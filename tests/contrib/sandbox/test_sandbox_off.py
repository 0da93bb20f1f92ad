"""With the sandbox off (``enabled = false``, ``backend = "none"``, or the plugin not loaded)
shell results are byte-identical to the shell plugin alone, and hosts in one process do not
share a sandbox setting. (The default, ``enabled = "auto"``, confines: test_sandbox_auto.py.)"""

from __future__ import annotations

import os
import uuid

import callgate_sandbox
import callgate_shell
import pytest
from callgate import ToolCall
from callgate_sandbox import SANDBOX

from .sandbox_helpers import needs_bwrap

pytestmark = pytest.mark.skipif(os.name != "posix", reason="the shell story here is POSIX")

CALLS = [
    ("bash", {"command": "echo hi; echo err 1>&2; echo bye"}),
    ("bash", {"command": "exit 3"}),
    ("bash", {"command": "printf abc"}),
    ("bash", {"command": "pwd -P; cat /proc/$PPID/comm"}),
    ("bash", {"command": "echo data > f.txt && cat f.txt && cat missing.txt"}),
    ("bash", {"command": "echo start; sleep 5", "timeout_ms": 300}),
    ("bash", {"command": "echo bg; exit 2", "run_in_background": True}),
    ("job_output", {"job_id": "bash-1", "wait": True, "timeout_ms": 5000}),
    ("job_output", {"job_id": "bash-1"}),
]
VARYING = {"pid", "duration_ms"}


def story(session) -> list[tuple[object, ...]]:
    out = []
    for i, (name, args) in enumerate(CALLS):
        [r] = session.run(ToolCall(f"c{i}", name, args))
        meta = {k: v for k, v in r.meta.items() if k not in VARYING}
        out.append((r.text, r.is_error, r.error, meta))
    return out


@pytest.mark.parametrize("sandbox", [{"enabled": False},
                                     {"enabled": True, "backend": "none"},
                                     {"enabled": False, "network": False, "backend": "bwrap"}],
                         ids=["enabled-false", "backend-none", "enabled-false-other-keys"])
def test_results_are_byte_identical_to_the_shell_alone(callgate_session, tmp_path, sandbox):
    alone_ws, off_ws = tmp_path / "a" / "ws", tmp_path / "b" / "ws"
    alone_ws.mkdir(parents=True)
    off_ws.mkdir(parents=True)
    alone = callgate_session(plugins=[callgate_shell], workspace=alone_ws)
    off = callgate_session(plugins=[callgate_shell, callgate_sandbox],
                           config={"sandbox": sandbox}, workspace=off_ws)
    expected, got = story(alone), story(off)
    # the workspaces differ only by their directory name
    expected = [tuple(x.replace(str(alone_ws), "WS") if isinstance(x, str) else x for x in row)
                for row in expected]
    got = [tuple(x.replace(str(off_ws), "WS") if isinstance(x, str) else x for x in row)
           for row in got]
    assert got == expected
    assert "bwrap" not in got[3][0]  # the shell's parent is the host, not a sandbox
    assert off.session.extension(SANDBOX).tmp_dir is None  # no command was wrapped


@needs_bwrap
def test_two_hosts_in_one_process_keep_their_own_setting(callgate_session, tmp_path):
    marker = tmp_path / f"host-file-{uuid.uuid4().hex}"
    marker.write_text("x")
    on = callgate_session(plugins=[callgate_shell, callgate_sandbox],
                          config={"sandbox": {"enabled": True}})
    off = callgate_session(plugins=[callgate_shell, callgate_sandbox],
                           config={"sandbox": {"enabled": False}})
    look = {"command": f"test -e {marker} && echo visible || echo hidden"}
    assert on.call("bash", look).text == "hidden\n[exit code 0]"
    assert off.call("bash", look).text == "visible\n[exit code 0]"
    assert on.call("bash", look).text == "hidden\n[exit code 0]"
