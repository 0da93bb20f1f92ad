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
