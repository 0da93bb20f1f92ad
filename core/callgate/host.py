"""What an integrator holds: the host's sessions and what it reports.

- `callgate.Host` boots a host; ``host.open_session(workspace)`` opens a `Session` (the
  concrete `callgate.SessionView`: what tools and hooks see of it, plus what only the
  integrator drives: batches, turns, modes, cancellation, closing).
- `SessionPair`: a planner and an executor over one workspace (``SessionPair(host, ws)``).
- `SharedResources`: what a family of sessions shares (``session.shared``).
- `PluginInfo` (``host.plugins()``) and `ExecutionFact` (``host.execution_facts()``).
- `BootError` and `ConfigError`: why a host did not boot (a plugin may raise `BootError`
  while it registers; ``registry.config_error`` builds a `ConfigError`).
"""

from ._host.host import Host, PluginInfo
from ._model.errors import BootError, ConfigError
from ._model.facts import ExecutionFact
from ._pipeline.shared import SharedResources
from ._session.pair import SessionPair
from ._session.session import Session

__all__ = [
    "BootError",
    "ConfigError",
    "ExecutionFact",
    "Host",
    "PluginInfo",
    "Session",
    "SessionPair",
    "SharedResources",
]
