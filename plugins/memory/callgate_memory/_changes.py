"""Which entries of a store directory changed since the index last looked.

Statting 10,000 fact files costs tens of milliseconds, more than a whole search may
take, so the index asks the kernel instead (the library's directory watcher,
`callgate_toolkit.watch`: Linux inotify), one watch per store directory, read without
blocking on every call. The kernel queues an event before the writer's ``write``
returns, so an edit made by hand just before a call is seen by that call. Anything
uncertain (no inotify, a watch that could not be added or was lost, a queue overflow)
answers "unknown", and the index then stats every file, which is always correct.
"""

from __future__ import annotations

import os
import threading
import weakref

from callgate_toolkit.watch import WATCHER, DirectoryWatcher, Watch

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
    """Watches on store directories, fanned out to subscriptions (``watcher``: the
    process's, or one made with ``enabled=False`` to stat every time)."""

    def __init__(self, watcher: DirectoryWatcher = WATCHER) -> None:
        self._lock = threading.Lock()
        self._watcher = watcher
        self._watches: dict[str, Watch] = {}
        self._subscribers: dict[str, weakref.WeakSet[Subscription]] = {}

    def subscribe(self, directory: str) -> Subscription:
        sub = Subscription(self, directory)
        with self._lock:
            self._subscribers.setdefault(directory, weakref.WeakSet()).add(sub)
        return sub

    def take(self, sub: Subscription) -> set[str] | None:
        with self._lock:
            watch = self._watches.get(sub.directory)
            if watch is None:
                self._watch(sub.directory)
            else:
                self._drain(sub.directory, watch)
            if sub.directory not in self._watches or sub.pending is None:
                # not watched, or watched only from now on: this caller scans everything
                sub.pending = set() if sub.directory in self._watches else None
                return UNKNOWN
            pending, sub.pending = sub.pending, set()
            return pending

    def _watch(self, directory: str) -> None:
        if not os.path.isdir(directory):
            return
        watch = self._watcher.watch(directory)  # the directory itself, not a symlink to it
        if watch is None:
            return
        self._watches[directory] = watch
        for sub in self._subscribers.get(directory, ()):
            sub.pending = None  # each subscriber scans once, then trusts the watch

    def _drain(self, directory: str, watch: Watch) -> None:
        names = watch.changes()
        if names is None:
            self._forget(directory)
            return
        for sub in self._subscribers.get(directory, ()):
            if sub.pending is not None:
                sub.pending.update(names)

    def _forget(self, directory: str) -> None:
        """Stop trusting ``directory``'s watch: the next call re-watches and rescans it."""
        watch = self._watches.pop(directory, None)
        for sub in self._subscribers.get(directory, ()):
            sub.pending = None
        if watch is not None:
            watch.close()


#: One feed per process, on the process's one watcher.
FEED = ChangeFeed()
