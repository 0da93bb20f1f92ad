"""Small JSON values in the session store (``session.storage``, namespace ``workflow``).

``{"version": 1, ...}``, committed on every change. A session directory from before
the store may hold the same value as a file (``todos.json``, ``presented.json``): it
is imported once, when the store has nothing for the session yet, and left as it was.
"""

from __future__ import annotations

import json
import logging
import os
from typing import Any

log = logging.getLogger("callgate.workflow")

NAMESPACE = "workflow"


class StateFile:
    """One workflow value of a session; ``legacy`` names its old file in a session dir."""

    VERSION = 1

    def __init__(self, session: Any, key: str, legacy: str) -> None:
        self._storage = session.storage
        self._key = key
        self._legacy = os.path.join(session.directory, legacy) if session.directory else None

    def load(self) -> dict[str, Any] | None:
        """The stored object, or None when there is none or it cannot be used (logged)."""
        if self._storage.has(NAMESPACE, self._key):
            data = self._storage.get(NAMESPACE, self._key)
        else:
            data = self._import()
        if not isinstance(data, dict) or data.get("version") != self.VERSION:
            if data is not None:
                log.warning("ignoring the stored %s: unknown version", self._key)
            return None
        return data

    def _import(self) -> Any:
        if self._legacy is None:
            return None
        try:
            with open(self._legacy, "rb") as fh:
                data = json.loads(fh.read())
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            log.warning("ignoring unreadable %s", self._legacy, exc_info=True)
            return None
        if isinstance(data, dict) and data.get("version") == self.VERSION:
            self._storage.put(NAMESPACE, self._key, data)
        return data

    def save(self, body: dict[str, Any]) -> None:
        """Commit ``body`` (raises `callgate.store.StoreError` if the store cannot take it)."""
        self._storage.put(NAMESPACE, self._key, {"version": self.VERSION, **body})
