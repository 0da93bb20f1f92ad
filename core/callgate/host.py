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
- `rendering(name)` and `rendering_names()`: the provider renderings installed (the
  ``callgate.renderings`` entry points; ``callgate-providers`` registers the built-in ones).
- `MODES`: the modes a session takes (``session.set_mode``); `NO_TOOLS`: what boot says when
  no tool plugin is installed.
- `serve_worker(workspace, listen=...)`: ``callgate worker``, the far end of a remote
  executor (over stdio, or a websocket with a bearer token).
- `entry_points(group)`: the installed entry points of a group, as
  ``importlib.metadata.entry_points(group=...)`` lists them, read without importing
  ``importlib.metadata`` where the environment allows (boot lists plugins with it; the
  command line its add-on commands).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._host.host import NO_TOOLS, Host, PluginInfo
from ._host.renderings import names as rendering_names
from ._host.renderings import rendering
from ._model.entrypoints import entry_points
from ._model.errors import BootError, ConfigError
from ._model.facts import ExecutionFact

if TYPE_CHECKING:
    from ._host.settings import sessions_settings
    from ._pipeline.shared import SharedResources
    from ._session.pair import SessionPair
    from ._session.session import MODES, Session

#: imported on first use: the session layer (the pipeline, its worker threads) is what a
#: plugin importing `BootError` from here at registration does not need (issue 38)
_LAZY = {
    "MODES": "._session.session",
    "SharedResources": "._pipeline.shared",
    "SessionPair": "._session.pair",
    "Session": "._session.session",
    # `callgate sessions` finds the store with it; the store's locations stay unloaded
    "sessions_settings": "._host.settings",
}


def serve_worker(
    workspace: str,
    *,
    listen: str | None = None,
    token_file: str | None = None,
    token_env: str | None = None,
) -> int:
    """``callgate worker --workspace DIR``: serve one executor over stdio (the far end of
    ``[executor] transport``) until stdin closes, or with ``listen="HOST:PORT"`` over a
    websocket to hosts presenting the bearer token read from ``token_file`` or the variable
    ``token_env`` names (``[executor] url``) until stopped; the exit code. `ValueError` says
    what is wrong with the listening options (nothing listens then)."""
    if listen is None:
        from ._host.worker import serve

        return serve(workspace)
    from ._host.worker_listen import serve_listening

    return serve_listening(workspace, listen, token_file, token_env)


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(_LAZY[name], "callgate"), name)
    globals()[name] = value
    return value


__all__ = [
    "MODES",
    "NO_TOOLS",
    "BootError",
    "ConfigError",
    "ExecutionFact",
    "Host",
    "PluginInfo",
    "Session",
    "SessionPair",
    "SharedResources",
    "entry_points",
    "rendering",
    "rendering_names",
    "serve_worker",
    "sessions_settings",
]
