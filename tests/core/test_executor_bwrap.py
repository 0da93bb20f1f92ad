"""A real remote backend, run here (issue 37): ``callgate worker`` in a bwrap mount
namespace of its own, which the host cannot see into. A model-only transcript, replayed
with ``--executor``, edits files that exist only inside the worker's namespace; the host's
file system (a decoy directory at the very same path) is untouched.

``pytest --executor=bwrap-worker`` runs whole suites this way (tests/conftest.py);
`test_the_suite_option_binds_sessions_to_a_bwrap_worker` proves it does.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from callgate import ToolCall, hookimpl
from callgate._executor.remote import RemoteExecutor

BWRAP = shutil.which("bwrap")
REPO = Path(__file__).resolve().parents[2]


def _bwrap_works() -> str | None:
    if BWRAP is None:
        return "bubblewrap is not installed (.ci/run installs it)"
    probe = subprocess.run(
        [BWRAP, "--ro-bind", "/", "/", "--unshare-pid", "--dev", "/dev", "--", "true"],
        capture_output=True,
        text=True,
    )
    if probe.returncode != 0:
        return f"bwrap cannot make namespaces here: {probe.stderr.strip()}"
    return None


WHY_NOT = _bwrap_works()
pytestmark = pytest.mark.skipif(WHY_NOT is not None, reason=WHY_NOT or "")


def isolated_worker(files: dict[str, str]) -> list[str]:
    """A worker whose workspace is a tmpfs in its own mount namespace (mounted over the
    path the host has too), its files written there before the worker starts."""
    setup = " && ".join(
        f"printf %s {_quote(text)} > {{workspace}}/{name}" for name, text in files.items()
    )
    # a checkout (and its .venv) under /tmp, as CI's clean clone may be, stays visible
    keep = [arg for path in dict.fromkeys([str(REPO), sys.prefix]) if path.startswith("/tmp/")
            for arg in ("--ro-bind", path, path)]
    return [
        "bwrap", "--die-with-parent", "--unshare-pid", "--unshare-ipc",
        "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
        "--tmpfs", "/tmp", *keep, "--tmpfs", "{workspace}",
        "--setenv", "CALLGATE_HOME", "/tmp/worker-home",
        "--", "sh", "-c", f'{setup} && exec "$0" "$@"',
        sys.executable, "-m", "callgate_cli", "worker", "--workspace", "{workspace}",
    ]  # fmt: skip


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def _replay(lines: list[dict[str, Any]], workspace: Path, *args: str) -> list[dict[str, Any]]:
    text = "\n".join(json.dumps(line) for line in lines) + "\n"
    done = subprocess.run(
        [sys.executable, "-m", "callgate_cli", "replay", "-", "--workspace", str(workspace), *args],
        input=text,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_a_transcript_edits_files_only_the_workers_namespace_has(tmp_path: Path) -> None:
    decoy = tmp_path / "ws"  # the host's own directory at the path the worker serves
    decoy.mkdir()
    (decoy / "app.py").write_text("HOST COPY\n")
    before = _tree(decoy)
    worker = isolated_worker({"app.py": "def main():\n    return 1\n"})
    results = _replay(
        [
            {"name": "read_file", "arguments": {"path": "app.py"}},
            {
                "name": "edit_file",
                "arguments": {
                    "path": "app.py",
                    "old_string": "return 1",
                    "new_string": "return 2",
                },
            },
            {"name": "write_file", "arguments": {"path": "new.txt", "content": "made remotely\n"}},
            {"name": "bash", "arguments": {"command": "cat app.py new.txt; ls"}},
            {"name": "grep", "arguments": {"pattern": "return 2"}},
        ],
        decoy,
        "--executor",
        json.dumps(worker),
        "--surface",
        "full",
    )
    assert [r["is_error"] for r in results] == [False] * 5, results
    assert "return 1" in results[0]["content"]  # the worker's file, not the decoy
    assert "return 2" in results[3]["content"] and "made remotely" in results[3]["content"]
    assert "app.py" in results[4]["content"]
    assert _tree(decoy) == before  # the host's file system is untouched


def test_a_transcript_runs_where_the_host_has_no_such_directory(tmp_path: Path) -> None:
    ghost = tmp_path / "only-in-the-worker"
    worker = isolated_worker({"a.txt": "inside\n"})
    results = _replay(
        [
            {"name": "read_file", "arguments": {"path": "a.txt"}},
            {"name": "write_file", "arguments": {"path": "b.txt", "content": "b\n"}},
        ],
        ghost,
        "--executor",
        json.dumps(worker),
    )
    assert "inside" in results[0]["content"] and not results[1]["is_error"], results
    assert not ghost.exists()


def test_the_suite_option_binds_sessions_to_a_bwrap_worker(
    callgate_session: Any, request: pytest.FixtureRequest
) -> None:
    """Under ``--executor=bwrap-worker`` every session of the suite runs on a worker in a
    mount namespace of its own (bwrap's child: not the transport's pid, not this process's
    mount namespace)."""
    if request.config.getoption("--executor") != "bwrap-worker":
        pytest.skip("runs under --executor=bwrap-worker")
    import callgate_files

    session = callgate_session(plugins=[callgate_files], files={"a.txt": "x"})
    session.expect_ok("read_file", {"path": "a.txt"})
    executor = session.session.executor
    assert isinstance(executor, RemoteExecutor) and executor.link.argv[0].endswith("bwrap")
    conn = executor.link.connection
    assert conn is not None and conn._proc is not None
    worker = conn.handshake["pid"]
    assert worker not in (conn._proc.pid, os.getpid())
    assert os.readlink(f"/proc/{worker}/ns/mnt") != os.readlink("/proc/self/ns/mnt")


class _Approver:
    """Approves every ask, keeping the previews it was shown (it runs at the host)."""

    def __init__(self) -> None:
        self.previews: list[Any] = []

    @hookimpl
    def callgate_ask_permission(self, call: Any, tool: Any, session: Any, preview: Any) -> bool:
        self.previews.append(preview)
        return True


def test_an_approval_previews_the_workers_files_not_the_hosts(tmp_path: Path) -> None:
    """An ``ask`` on a remote session is previewed by the worker (``tool/preview``): the
    approver sees the change to the file only the worker has, the approval binds to that
    file's version, and the approved edit runs there; the host's decoy is untouched."""
    import callgate_files
    from callgate import sync
    from callgate_toolkit.diffs import FilePreview

    decoy = tmp_path / "ws"
    decoy.mkdir()
    (decoy / "app.py").write_text("HOST COPY\nreturn 1\n")
    before = _tree(decoy)
    approver = _Approver()
    worker = isolated_worker({"app.py": "def main():\n    return 1\n"})
    config = {"permissions": {"mode": "ask"}, "files": {"watch": False}}
    with sync.Host.boot(config, plugins=[callgate_files, approver], entrypoints=False) as host:
        session = host.open_session(decoy, executor=worker)
        read = session.run(ToolCall("r1", "read_file", {"path": "app.py"}))
        edit = session.run(
            ToolCall(
                "e1",
                "edit_file",
                {"path": "app.py", "old_string": "return 1", "new_string": "return 2"},
            )
        )
        after = session.run(ToolCall("r2", "read_file", {"path": "app.py"}))
        session.close()
    assert not read.is_error and not edit.is_error, (read.text, edit.text)
    [preview] = approver.previews
    assert isinstance(preview, FilePreview) and preview.kind == "modify"
    assert preview.old_bytes == b"def main():\n    return 1\n"  # the worker's file
    assert preview.new_bytes == b"def main():\n    return 2\n"
    assert "HOST COPY" not in (preview.diff or "")
    assert "return 2" in after.text
    assert _tree(decoy) == before
