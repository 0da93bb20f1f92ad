"""Suite-wide options and isolation.

The default run is fast and parallel (pytest-xdist, ``-n`` in ``pyproject.toml``; each
worker is a process of its own with its own private directories below, ``-n0`` runs
serially); ``--reliability`` runs the full counts. Nothing here may read or write the
user's real callgate directories: every test, and every
subprocess it starts, gets its own state directory (``$CALLGATE_HOME``: memory
stores, the session store) and its own empty user config directory
(``$CALLGATE_CONFIG_HOME``; the ``user_config`` fixture hands it to a test that
wants to write a ``config.toml`` there). Module- and session-scoped fixtures, and
environments copied at import, which come before those, see private directories
set at import.
"""

from __future__ import annotations

import json
import os
import py_compile
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import platformdirs
import pytest


def _write_bytecode() -> None:
    """Bytecode caches (the git-ignored ``__pycache__``) are written even where the
    environment says PYTHONDONTWRITEBYTECODE: without them every test module is compiled and
    its asserts rewritten again in every run and every xdist worker (about 50 s of a serial
    run's collection on this 2-core machine), and every ``callgate`` subprocess a test starts
    compiles the core, the plugins and their libraries from source again (issue 38). The
    subprocesses inherit it; what this process imported before this file (pytest, its
    plugins) is compiled here, once: later runs find the caches."""
    if not sys.dont_write_bytecode and "PYTHONDONTWRITEBYTECODE" not in os.environ:
        return
    sys.dont_write_bytecode = False
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    for module in list(sys.modules.values()):
        source, cached = getattr(module, "__file__", None), getattr(module, "__cached__", None)
        if source and cached and source.endswith(".py") and not os.path.exists(cached):
            try:
                py_compile.compile(source, cfile=cached, doraise=True)
            except (OSError, py_compile.PyCompileError):
                continue  # a read-only install or an odd source: it is compiled as before


_write_bytecode()


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
    """Fail the run when anything in the user's real callgate directories changed.

    Under pytest-xdist the controller checks, from before the first worker started to after
    the last one ended: a worker's exit status does not reach the run's."""
    if hasattr(session.config, "workerinput"):
        return
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


def pytest_runtest_setup(item: pytest.Item) -> None:
    """``@pytest.mark.local_executor_only("why")``: a test whose subject exists only in the
    process that runs a local session's tools (an object-registered plugin, a lease held in
    the test process) is skipped under ``--executor=bwrap-worker``, with its reason shown."""
    marker = item.get_closest_marker("local_executor_only")
    if marker is not None and item.config.getoption("--executor") != "local":
        reason = marker.args[0] if marker.args else marker.kwargs.get("reason", "")
        pytest.skip(f"not applicable to a remote executor: {reason}")


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
            "--", sys.executable, "-m", "callgate_cli", "worker", "--workspace", "{workspace}"]


# what tests/reliability's ``figure`` fixture measured, from the test reports (which reach
# this process under pytest-xdist too: the workers' modules do not)
_FIGURE = "callgate-reliability-figure"
_FIGURES: list[dict[str, Any]] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when == "call":
        _FIGURES.extend(json.loads(value) for key, value in report.user_properties
                        if key == _FIGURE)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not _FIGURES:
        return
    terminalreporter.section("callgate reliability figures")
    for entry in _FIGURES:
        rest = {k: v for k, v in entry.items() if k not in ("figure", "test", "full")}
        terminalreporter.write_line(f"{entry['figure']}: " + ", ".join(
            f"{k}={v}" for k, v in rest.items()))


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
