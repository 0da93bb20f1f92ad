"""Fixtures for the shell plugin's tests: a session factory with only the plugin loaded,
and a cleanup net for processes a test leaves running on purpose."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Callable, Iterator
from typing import Any

import callgate_shell
import pytest


@pytest.fixture
def strays() -> Iterator[list[int]]:
    """PIDs (and process groups) a test may leave running on purpose; killed at teardown."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        with contextlib.suppress(OSError):
            os.killpg(pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


@pytest.fixture
def shell(callgate_session: Callable[..., Any]) -> Callable[..., Any]:
    """``shell(config={...}, os_name=...)``: a session with only the shell plugin loaded."""

    def make(config: dict[str, Any] | None = None, **kwargs: Any) -> Any:
        return callgate_session(plugins=[callgate_shell], config=config or {}, **kwargs)

    return make
