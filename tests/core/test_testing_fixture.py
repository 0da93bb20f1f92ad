"""The documented fixture is hermetic by default (issue 36.2): a plugin author's own config
and session store are neither read nor written by `callgate_session` or `run_replay`,
unless a test opts in with ``@pytest.mark.callgate_user_dirs``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

AUTHOR_TESTS = '''
import pytest
from callgate.testing import run_replay


def test_edit_through_the_fixture(callgate_session):
    s = callgate_session(entrypoints=["files"], files={"a.txt": "x\\n"})
    s.expect_ok("read_file", {"path": "a.txt"})
    s.expect_ok("edit_file", {"path": "a.txt", "old_string": "x", "new_string": "y"})


def test_edit_through_replay(tmp_path):
    (tmp_path / "a.txt").write_text("x\\n")
    read, edit = run_replay(
        [{"id": "r", "name": "read_file", "arguments": {"path": "a.txt"}},
         {"id": "e", "name": "edit_file",
          "arguments": {"path": "a.txt", "old_string": "x", "new_string": "y"}}],
        tmp_path, env={"CALLGATE_LOAD_PLUGINS": "files"})
    assert not edit["is_error"], edit


@pytest.mark.callgate_user_dirs
def test_opting_in_reads_the_authors_config(callgate_session):
    s = callgate_session(entrypoints=["files"], files={"a.txt": "x\\n"})
    s.expect_ok("read_file", {"path": "a.txt"})
    s.expect_error("edit_file", {"path": "a.txt", "old_string": "x", "new_string": "y"},
                   kind="blocked")
'''


def _run_author_suite(tmp_path: Path, *select: str) -> tuple[subprocess.CompletedProcess[str],
                                                             Path]:
    """The author's project in ``tmp_path/project``, their real dirs in ``tmp_path/real``:
    a config that denies every edit, and a state directory that must stay empty."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "test_author.py").write_text(AUTHOR_TESTS)
    config_home, state_home = tmp_path / "real" / "config", tmp_path / "real" / "state"
    config_home.mkdir(parents=True)
    state_home.mkdir(parents=True)
    (config_home / "config.toml").write_text('[permissions]\ndeny = ["Edit"]\n')
    env = {**os.environ, "CALLGATE_CONFIG_HOME": str(config_home),
           "CALLGATE_HOME": str(state_home)}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
         "--rootdir", str(project), *select, str(project / "test_author.py")],
        cwd=project, env=env, capture_output=True, text=True, timeout=300)
    return proc, state_home


def test_the_fixture_and_replay_ignore_the_authors_config_and_store(tmp_path: Path) -> None:
    proc, state_home = _run_author_suite(tmp_path, "-k", "not opting_in")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2 passed" in proc.stdout
    assert sorted(p.name for p in state_home.rglob("*")) == []  # nothing written there


def test_a_marked_test_uses_the_authors_dirs(tmp_path: Path) -> None:
    proc, state_home = _run_author_suite(tmp_path, "-k", "opting_in")
    assert any(state_home.iterdir())  # its session was recorded in the real store
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 passed" in proc.stdout
