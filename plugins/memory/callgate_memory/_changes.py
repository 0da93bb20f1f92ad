"""Which entries of a store directory changed since the index last looked (Linux inotify).

Statting 10,000 fact files costs tens of milliseconds, more than a whole search may
take, so on Linux the index asks the kernel instead: one inotify instance per
process (inotify-simple), one watch per store directory, drained without blocking on
every call. The kernel queues an event before the writer's ``write`` returns, so an
edit made by hand just before a call is seen by that call. Anything uncertain (no
inotify, a watch that could not be added or was lost, a queue overflow) answers
"unknown", and the index then stats every file, which is always correct.
"""

from __future__ import annotations

import logging
import os
import threading
import weakref
from typing import Any

log = logging.getLogger("callgate.memory")

#: ``Subscription.changes()`` answer meaning "re-stat everything".
UNKNOWN = None


class Subscription:
    """One reader's view of one directory: the names changed since it last asked."""

    def __init__(self, feed: ChangeFeed, directory: str) -> None:
        self.feed = feed
        self.directory = directory
        #: ``None`` until the watch is trusted (then: rescan), else the changed names.
        self.pending: set[str] | None = None

    def changes(self) -> set[str] | None:
        """Names changed since the last call, or `UNKNOWN` (the caller stats every file).

        The first call starts the watch and answers `UNKNOWN`; so does every call while the
        directory cannot be watched.
        """
        return self.feed.take(self)


class ChangeFeed:
    """The process's inotify watches on store directories, fanned out to subscriptions."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._inotify: Any = None
        self._broken = False
        self._dirs: dict[int, str] = {}
        self._wds: dict[str, int] = {}
        self._subscribers: dict[str, weakref.WeakSet[Subscription]] = {}

    def subscribe(self, directory: str) -> Subscription:
        sub = Subscription(self, directory)
        with self._lock:
            self._subscribers.setdefault(directory, weakref.WeakSet()).add(sub)
        return sub

    def take(self, sub: Subscription) -> set[str] | None:
        with self._lock:
            if self._wds.get(sub.directory) is None:
                self._watch(sub.directory)
            else:
                self._drain()
            if sub.directory not in self._wds or sub.pending is None:
                # not watched, or watched only from now on: this caller scans everything
                sub.pending = set() if sub.directory in self._wds else None
                return UNKNOWN
            pending, sub.pending = sub.pending, set()
            return pending

    def _watch(self, directory: str) -> None:
        flags = self._flags()
        if flags is None or not os.path.isdir(directory):
            return
        try:
            wd = self._inotify.add_watch(directory, flags)
        except OSError as exc:  # the watch limit, or the directory went away
            log.debug("memory: cannot watch %s (%s); scanning it on every call", directory, exc)
            return
        self._drain()
        self._dirs[wd] = directory
        self._wds[directory] = wd
        for sub in self._subscribers.get(directory, ()):
            sub.pending = None  # each subscriber scans once, then trusts the watch

    def _flags(self) -> int | None:
        if self._broken:
            return None
        try:
            import inotify_simple
        except ImportError:  # not Linux
            self._broken = True
            return None
        if self._inotify is None:
            try:
                self._inotify = inotify_simple.INotify(nonblocking=True)
            except OSError as exc:
                log.debug("memory: inotify unavailable (%s); scanning on every call", exc)
                self._broken = True
                return None
        f = inotify_simple.flags
        return int(f.CREATE | f.DELETE | f.MODIFY | f.CLOSE_WRITE | f.MOVED_FROM | f.MOVED_TO
                   | f.ATTRIB | f.DELETE_SELF | f.MOVE_SELF | f.ONLYDIR | f.DONT_FOLLOW)

    def _drain(self) -> None:
        import inotify_simple

        f = inotify_simple.flags
        try:
            events = self._inotify.read(timeout=0)
        except BlockingIOError:
            return
        for event in events:
            if event.mask & f.Q_OVERFLOW:
                for directory in list(self._wds):
                    self._forget(directory)
                continue
            directory = self._dirs.get(event.wd)
            if directory is None:
                continue
            if event.mask & (f.IGNORED | f.DELETE_SELF | f.MOVE_SELF | f.UNMOUNT):
                self._forget(directory)
                continue
            if event.name:
                for sub in self._subscribers.get(directory, ()):
                    if sub.pending is not None:
                        sub.pending.add(event.name)

    def _forget(self, directory: str) -> None:
        """Stop trusting ``directory``'s watch: the next call re-watches and rescans it."""
        wd = self._wds.pop(directory, None)
        for sub in self._subscribers.get(directory, ()):
            sub.pending = None
        if wd is None:
            return
        self._dirs.pop(wd, None)
        try:
            self._inotify.rm_watch(wd)
        except OSError:
            pass


#: One feed per process: inotify instances are a scarce per-user resource.
FEED = ChangeFeed()
