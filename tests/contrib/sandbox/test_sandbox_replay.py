"""Done means (issue 13): ``callgate replay`` with ``[sandbox] enabled = true`` shows a
command that writes in the workspace succeed and one that writes outside fail with the
hint; the entry-point plugins are the installed ones, as a user runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

from .sandbox_helpers import needs_bwrap

pytestmark = needs_bwrap

REPO = Path(__file__).resolve().parents[3]


def test_replay_with_the_sandbox_on(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    etc_probe = f"/etc/callgate-sandbox-probe-{uuid.uuid4().hex}"
    transcript = [
        {"id": "c1", "name": "bash",
         "arguments": {"command": "echo inside > inside.txt && cat inside.txt"}},
        {"id": "c2", "name": "bash", "arguments": {"command": "echo outside > ../outside.txt"}},
        {"id": "c3", "name": "bash", "arguments": {"command": f"touch {etc_probe}"}},
        {"id": "c4", "name": "bash", "arguments": {"command": f"echo job > {etc_probe}",
                                                   "run_in_background": True}},
        {"id": "c5", "name": "job_output", "arguments": {"job_id": "bash-1", "wait": True,
                                                         "timeout_ms": 10000}},
    ]
    (tmp_path / "t.jsonl").write_text("".join(json.dumps(x) + "\n" for x in transcript))
    (tmp_path / "callgate.toml").write_text("[sandbox]\nenabled = true\n")
    env = {**os.environ, "CALLGATE_LOAD_PLUGINS": "shell,sandbox"}
    try:
        done = subprocess.run(
            [sys.executable, "-m", "callgate_cli", "replay", str(tmp_path / "t.jsonl"),
             "--workspace", str(workspace), "--config", str(tmp_path / "callgate.toml")],
            capture_output=True, text=True, env=env, timeout=120, cwd=REPO, check=False)
    finally:
        leaked = os.path.exists(etc_probe)
        if leaked:
            os.unlink(etc_probe)
    assert done.returncode == 0, done.stderr
    out = {r["id"]: r for r in map(json.loads, done.stdout.splitlines())}

    assert out["c1"]["content"] == "inside\n[exit code 0]" and not out["c1"]["is_error"]
    assert (workspace / "inside.txt").read_text() == "inside\n"

    assert out["c2"]["is_error"] and out["c2"]["error"]["signature"] == "exit:1"
    assert out["c2"]["content"].endswith(
        "line 1: ../outside.txt: Permission denied\n"
        "[note: the sandbox keeps ../outside.txt read-only (only the workspace and a private "
        f'/tmp are writable); to allow writing there, add "{tmp_path}" to [sandbox] '
        "writable]\n[exit code 1]")
    assert not (tmp_path / "outside.txt").exists()

    assert not leaked
    assert out["c3"]["is_error"] and "Read-only file system" in out["c3"]["content"]
    assert out["c5"]["content"].startswith("[bash-1] failed (exit code 1)\n")
    if os.access("/etc", os.W_OK):  # the hint is given only when the host would allow it
        for call in ("c3", "c5"):
            assert f'[note: the sandbox keeps {etc_probe} read-only' in out[call]["content"]
            assert 'add "/etc" to [sandbox] writable]' in out[call]["content"]
