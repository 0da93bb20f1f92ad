"""Suite-wide options and isolation.

The default run is fast; ``--reliability`` runs the full counts. Nothing here may
read or write the user's real callgate directories: every test, and every
subprocess it starts, gets its own state directory (``$CALLGATE_HOME``: memory
stores, the session store) and its own empty user config directory
(``$CALLGATE_CONFIG_HOME``; the ``user_config`` fixture hands it to a test that
wants to write a ``config.toml`` there). Module- and session-scoped fixtures, and
environments copied at import, which come before those, see private directories
set at import.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import platformdirs
import pytest


def _snapshot(root: str) -> dict[str, tuple[int, int]]:
    """Every entry under ``root`` with its size and mtime (empty when it does not exist)."""
    found: dict[str, tuple[int, int]] = {}
    for directory, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(directory, name)
            try:
                info = os.lstat(path)
            except OSError:
                continue
            found[path] = (info.st_size, info.st_mtime_ns)
    return found


# The user's real callgate directories, watched for the whole run: a test (or a subprocess it
# starts with a hand-built environment) that reaches them fails the run at the end.
_REAL_DIRS = (platformdirs.user_state_dir("callgate", appauthor=False),
              platformdirs.user_config_dir("callgate", appauthor=False, roaming=True))
_REAL_BEFORE = {root: _snapshot(root) for root in _REAL_DIRS}

os.environ["CALLGATE_CONFIG_HOME"] = tempfile.mkdtemp(prefix="callgate-user-config-")
_SUITE_HOME = os.environ["CALLGATE_HOME"] = tempfile.mkdtemp(prefix="callgate-suite-home-")


def pytest_unconfigure(config: pytest.Config) -> None:
    shutil.rmtree(_SUITE_HOME, ignore_errors=True)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail the run when anything in the user's real callgate directories changed."""
    changed = []
    for root, before in _REAL_BEFORE.items():
        after = _snapshot(root)
        changed += sorted(path for path in before.keys() | after.keys()
                          if before.get(path) != after.get(path))
    if changed:
        shown = "\n  ".join(changed[:20])
        print(f"\nThe suite changed the user's real callgate directories ({len(changed)} "
              f"entries); a test or a subprocess it started lacks CALLGATE_HOME or "
              f"CALLGATE_CONFIG_HOME:\n  {shown}")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--reliability", action="store_true", default=False,
                     help="run tests/reliability with their full case counts")
    parser.addoption("--executor", choices=("local", "bwrap-worker"), default="local",
                     help="where sessions' tools run: here (local), or on a `callgate worker` "
                     "in a bwrap mount namespace of its own (bwrap-worker: the "
                     "user config of every test binds its sessions to it; issue 37)")


def bwrap_worker_transport() -> list[str]:
    """A worker in its own mount, ipc and uts namespaces: the host's file system read-only
    except /tmp (where the tests' workspaces, and the outside targets of the confinement
    races, are), a private /dev and /proc.

    It shares the host's pid namespace, as a container started with ``--pid=host`` or a pod
    with ``shareProcessNamespace`` does: the suites' tests look up the processes a call
    started (a job's process group, a writer's live temp file) from the test process.
    (tests/core/test_executor_bwrap.py runs workers in pid namespaces of their own.) bwrap
    is named by its absolute path, found once: a test that narrows ``PATH`` to hide a tool
    from the session must not hide the transport."""
    import sys
    bwrap = shutil.which("bwrap") or "bwrap"
    return [bwrap, "--die-with-parent", "--unshare-ipc", "--unshare-uts",
            "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--bind", "/tmp", "/tmp",
            "--", sys.executable, "-m", "callgate.cli", "worker", "--workspace", "{workspace}"]


@pytest.fixture
def reliability(request: pytest.FixtureRequest) -> bool:
    """True under --reliability: tests scale their case counts up."""
    return bool(request.config.getoption("--reliability"))


@pytest.fixture(autouse=True)
def _private_callgate_home(tmp_path_factory: pytest.TempPathFactory,
                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test gets its own callgate state directory (``$CALLGATE_HOME``), inherited by the
    subprocesses it starts: the suite never reads or writes the user's real one."""
    monkeypatch.setenv("CALLGATE_HOME", str(tmp_path_factory.mktemp("callgate-home")))


@pytest.fixture(autouse=True)
def user_config(tmp_path_factory: pytest.TempPathFactory,
                monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> Path:
    """This test's own user config directory (``$CALLGATE_CONFIG_HOME``), empty: a test
    that wants a user config writes ``config.toml`` in it."""
    home = tmp_path_factory.mktemp("user-config")
    monkeypatch.setenv("CALLGATE_CONFIG_HOME", str(home))
    if request.config.getoption("--executor") == "bwrap-worker":
        import json
        transport = json.dumps(bwrap_worker_transport())
        (home / "config.toml").write_text(f"[executor]\ntransport = {transport}\n")
    return home
