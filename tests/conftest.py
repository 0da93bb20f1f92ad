"""Suite-wide options: the default run is fast; ``--reliability`` runs the full counts."""

from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--reliability", action="store_true", default=False,
                     help="run tests/reliability with their full case counts")


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
