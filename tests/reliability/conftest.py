"""Shared plumbing of the reliability suite (issue 12).

Every test here is marked ``reliability``. The default run uses small case
counts (the whole directory stays well under a minute); ``pytest --reliability``
scales each test to the counts ``docs/reliability.md`` reports. Each test
records what it measured with the ``figure`` fixture; the figures are printed
in the terminal summary (by ``tests/conftest.py``, which the process that prints it loads
under pytest-xdist too) and, when ``CALLGATE_RELIABILITY_OUT`` names a file,
appended to it as JSON lines.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

# the key of a figure in a test report's user_properties; tests/conftest.py prints them
FIGURE = "callgate-reliability-figure"
HERE = Path(__file__).parent


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.reliability)


@pytest.fixture
def cases(reliability: bool) -> Callable[[int, int], int]:
    """``cases(full, fast)``: the full count under ``--reliability``, else the fast one."""

    def pick(full: int, fast: int) -> int:
        return full if reliability else fast

    return pick


@pytest.fixture
def figure(request: pytest.FixtureRequest, reliability: bool) -> Iterator[Callable[..., None]]:
    """``figure(name, cases=..., failures=..., **extra)`` records one measured figure."""
    started = time.monotonic()

    def record(name: str, **values: Any) -> None:
        entry = {"figure": name, "test": request.node.nodeid, "full": reliability,
                 "seconds": round(time.monotonic() - started, 1), **values}
        # the test's report carries it to the process that prints the summary (under
        # pytest-xdist that is the controller, not this worker)
        request.node.user_properties.append((FIGURE, json.dumps(entry, default=str)))
        out = os.environ.get("CALLGATE_RELIABILITY_OUT")
        if out:
            with open(out, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(entry, default=str) + "\n")

    yield record
