"""Files that changed on disk, for plugins that keep something derived from them (a language
server's view of the project, a cache): ``session.file_changes``, public as `callgate.files`.

Two sources publish into a session's feed:

- **the core**, right after a tool that declares ``mutates_paths`` succeeded: the paths its
  gate held (``origin="tool"``), before the call's result is shaped;
- **the session's watcher** of the workspace (callgate-files, ``[files] watch``, on by
  default): whatever shell commands, background jobs, other programs and the tools themselves
  changed below the read roots, some 50-200 ms after it happened (``origin="watch"``). While
  it runs, `FileChanges.watched` is set, so a consumer knows outside changes reach it (without
  it, only the tools' own changes do).

A path may come twice (from a tool, then from the watcher): consumers compare what they have
(a size and mtime, a digest) rather than count events. A listener is called on the
publisher's thread (a tool's worker thread, the watcher's thread) with one batch at a time:
it must return quickly and hand real work to its own thread or loop. A listener that raises
is logged and kept subscribed.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Literal

import attrs

if TYPE_CHECKING:
    from .gate import GatedPath

log = logging.getLogger("callgate")

ChangeKind = Literal["created", "changed", "deleted"]
ChangeOrigin = Literal["tool", "watch"]
#: ``listener(batch)``: one batch of changes, on the publisher's thread.
ChangeListener = Callable[[Sequence["FileChange"]], None]


@attrs.frozen
class FileChange:
    """One file that changed: its absolute ``path``, what happened (``created``, ``changed``,
    ``deleted``; a watcher may report an atomic replace as ``created``), and who saw it."""

    path: str
    kind: ChangeKind
    origin: ChangeOrigin


class FileChanges:
    """One session's feed of changed files (``session.file_changes``)."""

    def __init__(self) -> None:
        self._listeners: list[ChangeListener] = []
        self._lock = threading.Lock()
        #: set while a watcher publishes what changes outside the session's tools
        self.watched = threading.Event()

    def subscribe(self, listener: ChangeListener) -> Callable[[], None]:
        """Call ``listener`` with every batch published from now on; returns the function
        that unsubscribes it."""
        with self._lock:
            self._listeners.append(listener)

        def unsubscribe() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return unsubscribe

    @property
    def listened(self) -> bool:
        """Whether anyone listens (what a change was need not be worked out otherwise)."""
        return bool(self._listeners)

    def publish(self, changes: Iterable[FileChange]) -> None:
        """Hand ``changes`` (one batch) to every listener; nothing when it is empty."""
        batch = tuple(changes)
        if not batch:
            return
        with self._lock:
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener(batch)
            except Exception:  # one broken consumer must not cost the others (or the tool)
                log.exception("a file-change listener failed")


def after_tool(gated: Iterable[GatedPath]) -> list[FileChange]:
    """The changes a successful mutation made to the paths its gate held (`GatedPath`s):
    created when the gate found nothing there, deleted when nothing is there now."""
    out = []
    for item in gated:
        path = item.path
        kind: ChangeKind
        if not os.path.lexists(path):
            kind = "deleted"
        elif item.stat is None:
            kind = "created"
        else:
            kind = "changed"
        out.append(FileChange(path, kind, "tool"))
    return out


__all__ = [
    "ChangeKind",
    "ChangeListener",
    "ChangeOrigin",
    "FileChange",
    "FileChanges",
    "after_tool",
]
