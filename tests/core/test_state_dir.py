"""``callgate.paths.state_dir()``: ``$CALLGATE_HOME`` when set, else the platform's user state dir;
and the suite's own tests never see the real one."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs
from callgate.paths import state_dir


def test_callgate_home_wins(monkeypatch, tmp_path):
    monkeypatch.setenv("CALLGATE_HOME", str(tmp_path / "home"))
    assert state_dir() == str(tmp_path / "home")
    monkeypatch.setenv("CALLGATE_HOME", "relative/dir")
    assert state_dir() == os.path.abspath("relative/dir")


def test_without_callgate_home_it_is_the_user_state_dir(monkeypatch, tmp_path):
    monkeypatch.delenv("CALLGATE_HOME")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    expected = platformdirs.user_state_dir("callgate", appauthor=False)
    assert state_dir() == os.path.abspath(expected)
    assert not Path(expected).exists()  # asking never creates it


def test_every_test_runs_with_a_private_callgate_home():
    home = Path(os.environ["CALLGATE_HOME"])
    assert home.is_dir() and not any(home.iterdir())
    assert home != Path(platformdirs.user_state_dir("callgate", appauthor=False))
