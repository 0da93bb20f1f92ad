"""What an integrator holds: the host's sessions and what it reports.

- `callgate.Host` boots a host; ``host.open_session(workspace)`` opens a `Session` (the
  concrete `callgate.SessionView`: what tools and hooks see of it, plus what only the
  integrator drives: batches, turns, modes, cancellation, closing).
- `SessionPair`: a planner and an executor over one workspace (``SessionPair(host, ws)``).
- `SharedResources`: what a family of sessions shares (``session.shared``).
- `PluginInfo` (``host.plugins()``) and `ExecutionFact` (``host.execution_facts()``).
- `BootError` and `ConfigError`: why a host did not boot (a plugin may raise `BootError`
  while it registers; ``registry.config_error`` builds a `ConfigError`).
- `sessions_settings(config, workspace)`: the ``[sessions]`` table and store location a host
  would use, read without booting one (``callgate sessions`` finds the store with it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._host.host import Host, PluginInfo
from ._host.settings import sessions_settings
from ._model.errors import BootError, ConfigError
from ._model.facts import ExecutionFact

if TYPE_CHECKING:
    from ._pipeline.shared import SharedResources
    from ._session.pair import SessionPair
    from ._session.session import Session

#: imported on first use: the session layer (the pipeline, its worker threads) is what a
#: plugin importing `BootError` from here at registration does not need (issue 38)
_LAZY = {
    "SharedResources": "._pipeline.shared",
    "SessionPair": "._session.pair",
    "Session": "._session.session",
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(_LAZY[name], "callgate"), name)
    globals()[name] = value
    return value


__all__ = [
    "BootError",
    "ConfigError",
    "ExecutionFact",
    "Host",
    "PluginInfo",
    "Session",
    "SessionPair",
    "SharedResources",
    "sessions_settings",
]
