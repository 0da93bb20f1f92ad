"""Notices: short news from plugins (a finished job, a file changed outside) that the
model reads once, appended to the first result of its next batch (host.md §7)."""

from __future__ import annotations

import threading
from collections.abc import Callable

NoticeSource = str
NoticeText = str | Callable[[], str | None]


class NoticeQueue:
    """At most one pending notice per source; a newer one replaces it.

    A notice may be a callable evaluated when the notice is delivered, so a
    plugin can say what is still news at that moment (or ``None``: nothing).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending: dict[NoticeSource, NoticeText] = {}

    def put(self, source: NoticeSource, text: NoticeText) -> None:
        with self._lock:
            self._pending[source] = text

    def discard(self, source: NoticeSource) -> None:
        with self._lock:
            self._pending.pop(source, None)

    def drain(self) -> list[str]:
        """The pending notices' texts, ordered by source; the queue is left empty."""
        if not self._pending:  # the usual case, without the lock (a racing put waits a batch)
            return []
        with self._lock:
            pending, self._pending = self._pending, {}
        out = []
        for source in sorted(pending):
            value = pending[source]
            text = value() if callable(value) else value
            if text:
                out.append(text)
        return out

    def drain_items(self) -> list[tuple[NoticeSource, str]]:
        """`drain`, keeping each text's source (a remote worker hands its notices to the
        host's queue under the same sources)."""
        if not self._pending:
            return []
        with self._lock:
            pending, self._pending = self._pending, {}
        out = []
        for source in sorted(pending):
            value = pending[source]
            text = value() if callable(value) else value
            if text:
                out.append((source, text))
        return out

    def __bool__(self) -> bool:
        with self._lock:
            return bool(self._pending)
