"""Fixtures for the memory tests: sessions with the memory plugin, and the store on disk."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import callgate_capability
import callgate_memory
import pytest
from callgate.testing import CallgateSession
from callgate_memory import MEMORY


@pytest.fixture
def memory(callgate_session: Callable[..., CallgateSession]) -> Callable[..., CallgateSession]:
    """``memory(workspace=None, config=None, lean=False)``: a session with callgate-memory."""

    def make(workspace: Path | None = None, *, config: dict[str, Any] | None = None,
             lean: bool = False) -> CallgateSession:
        plugins: list[Any] = [callgate_memory]
        if lean:
            plugins.append(callgate_capability)
        return callgate_session(plugins=plugins, config=config or {}, workspace=workspace,
                                surface="lean" if lean else "full")

    return make


def store(s: CallgateSession, scope: str = "project") -> Path:
    """The session's store directory for ``scope``."""
    return Path(s.session.extension(MEMORY).directories[scope])


def tree(directory: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under ``directory`` (bytes, mtime): to prove a refusal wrote nothing."""
    out: dict[str, tuple[bytes, int]] = {}
    if not directory.exists():
        return out
    for root, _dirs, files in os.walk(directory):
        for name in files:
            path = Path(root) / name
            out[str(path.relative_to(directory))] = (path.read_bytes(), path.stat().st_mtime_ns)
    return out


def remember(s: CallgateSession, **args: Any) -> str:
    args.setdefault("description", "a fact")
    args.setdefault("body", "something worth knowing")
    return s.expect_ok("remember", args)


def search(s: CallgateSession, query: str, **args: Any) -> str:
    return s.expect_ok("memory", {"operation": "search", "query": query, **args})
