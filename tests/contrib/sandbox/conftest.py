"""Fixtures for the sandbox tests: a session with the shell and sandbox plugins."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import callgate_sandbox
import callgate_shell
import pytest


@pytest.fixture
def sandboxed(callgate_session: Callable[..., Any]) -> Callable[..., Any]:
    """``sandboxed(sandbox={...}, plugins=[...], files=..., workspace=...)``: a session with
    the shell and sandbox plugins (plus ``plugins``) and ``[sandbox] enabled = true``."""

    def make(sandbox: dict[str, Any] | None = None, plugins: tuple[Any, ...] = (),
             config: dict[str, Any] | None = None, **kwargs: Any) -> Any:
        cfg = {**(config or {}), "sandbox": {"enabled": True, **(sandbox or {})}}
        return callgate_session(plugins=[callgate_shell, callgate_sandbox, *plugins],
                                config=cfg, **kwargs)

    return make
