"""Fixtures for the code plugin tests: a session with code, search and a read_file."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import callgate_code
import callgate_search
import pytest
from callgate.testing import CallgateSession

from ..search.helpers import reader_plugin


@pytest.fixture
def code(callgate_session: Callable[..., CallgateSession]) -> Callable[..., CallgateSession]:
    """``code(files={...})``: a session with code_index, delete_symbol and read_file."""

    def make(files: dict[str, Any] | None = None, plugins: tuple[Any, ...] = (),
             **kwargs: Any) -> CallgateSession:
        return callgate_session(plugins=[callgate_code, callgate_search, reader_plugin(),
                                         *plugins], files=files, **kwargs)

    return make
