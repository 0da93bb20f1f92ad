"""The memory plugin's session-extension key, apart from the object it names: the plugin
registers it without importing the store, the index or the renderer (issue 38)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from callgate import SessionKey

if TYPE_CHECKING:
    from ._session import SessionMemory

#: ``session.extension(MEMORY)``: this plugin's per-session object
MEMORY: SessionKey[SessionMemory] = SessionKey("memory")
