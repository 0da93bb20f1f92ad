"""The memory plugin's hook implementation: config, tools and `MEMORY`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from callgate import hookimpl

from ._keys import MEMORY
from .config import CONFIG_SCHEMA
from .tools.specs import TOOLS

if TYPE_CHECKING:
    from ._session import SessionMemory


def _session_memory(session: Any) -> SessionMemory:
    """The session's memory: the store, index and renderer are imported when a session
    opens, not while the plugin registers (issue 38)."""
    from ._session import SessionMemory

    return SessionMemory(session)


@hookimpl
def callgate_register_tools(registry: Any) -> None:
    registry.add_config("memory", CONFIG_SCHEMA)
    registry.add_session_extension(MEMORY, _session_memory)
    for spec in TOOLS:
        registry.add(spec)
