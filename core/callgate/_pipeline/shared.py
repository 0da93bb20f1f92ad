"""`SharedResources`: what a family of sessions shares (``session.shared``).

A session opened by the integrator starts a family; its children (and a planner /
executor pair, `SessionPair`) join it. A plugin keeps a connection that every
member should use once (an MCP server process) with ``session.shared.get(key,
factory, close)``: the first member to ask creates it, the others get the same object,
and ``close`` runs when the last member of the family closes, whichever it is.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any, TypeVar

log = logging.getLogger("callgate")

T = TypeVar("T")


class SharedResources:
    """Objects a family of sessions shares, closed when its last member closes."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._members = 0
        self._closed = False
        self._items: dict[str, tuple[Any, Callable[[Any], None] | None]] = {}

    def join(self) -> None:
        with self._lock:
            if self._closed:
                raise RuntimeError("every session of this family has closed")
            self._members += 1

    def leave(self) -> None:
        """One member closed; the last one closes every shared object (newest first)."""
        with self._lock:
            self._members -= 1
            if self._members > 0 or self._closed:
                return
            self._closed = True
            items, self._items = list(self._items.values()), {}
        for value, close in reversed(items):
            if close is None:
                continue
            try:
                close(value)
            except Exception:
                log.exception("closing a shared session resource failed")
        from . import lifeline as _lifeline

        _lifeline.end_scope(self)  # what the family's programs left running

    @property
    def members(self) -> int:
        """How many sessions of the family are open."""
        with self._lock:
            return self._members

    def get(
        self, key: str, factory: Callable[[], T], close: Callable[[T], None] | None = None
    ) -> T:
        """The family's object ``key`` (a plugin prefixes it with its name), made by
        ``factory`` on first use; ``close(value)`` runs when the family's last session
        closes. Raises `RuntimeError` once the family has closed."""
        with self._lock:
            if self._closed:
                raise RuntimeError("every session of this family has closed")
            found = self._items.get(key)
            if found is None:
                found = self._items[key] = (factory(), close)  # type: ignore[assignment]
            return found[0]  # type: ignore[no-any-return]

    def peek(self, key: str) -> Any:
        """The object ``key`` if some member made it, else ``None`` (creates nothing)."""
        with self._lock:
            found = self._items.get(key)
            return found[0] if found is not None else None
