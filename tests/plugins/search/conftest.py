"""Fixtures: every grep statement runs under both engines (search.md §6)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import callgate_search
import pytest
from callgate.testing import CallgateSession


@pytest.fixture(params=["rg", "python"])
def engine(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def search(callgate_session: Callable[..., CallgateSession], engine: str
           ) -> Callable[..., CallgateSession]:
    """``search(files={...}, config={...})``: a session with the search plugin on ``engine``."""

    def make(files: dict[str, Any] | None = None, config: dict[str, Any] | None = None,
             plugins: tuple[Any, ...] = (), **kwargs: Any) -> CallgateSession:
        cfg = {"search": {"grep_engine": engine, **(config or {})}}
        return callgate_session(plugins=[callgate_search, *plugins], files=files, config=cfg,
                                **kwargs)

    return make


@pytest.fixture
def plain(callgate_session: Callable[..., CallgateSession]) -> Callable[..., CallgateSession]:
    """A session with the search plugin on its default config (for glob and ls)."""

    def make(files: dict[str, Any] | None = None, **kwargs: Any) -> CallgateSession:
        return callgate_session(plugins=[callgate_search], files=files, **kwargs)

    return make
