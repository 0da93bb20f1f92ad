"""Directory watches asked of the kernel (Linux inotify, through inotify-simple).

A plugin that keeps something derived from a directory (an index of its files, a scan of
its folders) asks what changed instead of statting every entry on every call: statting
10,000 files costs tens of milliseconds, more than a whole search may take. The kernel
queues an event before the writer's ``write`` returns, so a change made just before a
call is seen by that call.

`WATCHER` is the process's one inotify instance (instances are a scarce per-user
resource), shared by every plugin. ``WATCHER.watch(directory)`` gives a `Watch`, or
``None`` when the directory cannot be watched; `Watch.changes` reads the kernel without
blocking and answers the names changed in the directory since the last call. Anything
the watch cannot vouch for answers ``None`` from then on (`Watch.lost`): the directory
was removed, moved or unmounted, or the kernel's queue overflowed. The caller then falls
back to statting, which is always correct, and may watch again.

Each watch keeps its own queue, filled by whoever reads the kernel first, and no lock is
held while a caller looks at its own state, so plugins sharing the instance never wait
on each other's locks.
"""

from __future__ import annotations

import logging
import os
import threading
from collections import deque
from typing import Any

log = logging.getLogger("callgate.toolkit")


class Watch:
    """One watch on one directory: the names changed in it since `changes` was last asked."""

    def __init__(self, watcher: DirectoryWatcher, directory: str, wd: int) -> None:
        self.watcher = watcher
        self.directory = directory
        self.wd = wd
        self._names: deque[str] = deque()
        #: the watch can no longer vouch for the directory (it is closed)
        self.lost = False

    def changes(self) -> list[str] | None:
        """The entries changed since the last call, in the order the kernel saw them (a name
        may repeat), or ``None`` once the watch is `lost`."""
        return self.watcher._take(self)

    def close(self) -> None:
        """Stop watching (the kernel watch ends when no other `Watch` shares it)."""
        self.watcher._close(self)


class DirectoryWatcher:
    """The process's inotify watches on directories, each handed to its `Watch`es.
    ``enabled=False`` makes a watcher that watches nothing (callers stat: tests, benchmarks)."""

    def __init__(self, *, enabled: bool = True) -> None:
        self._lock = threading.Lock()
        self._inotify: Any = None
        self._broken = not enabled
        self._watches: dict[int, list[Watch]] = {}

    @property
    def started(self) -> bool:
        """Whether a watch was ever made (inotify is in use in this process)."""
        return self._inotify is not None

    def watch(self, directory: str, *, follow_symlinks: bool = False) -> Watch | None:
        """Watch ``directory`` (not a symlink to one, unless ``follow_symlinks``); ``None``
        when it cannot be watched: no inotify here, the per-user watch limit, or the
        directory is gone. Events before this call are not reported to the new watch."""
        with self._lock:
            flags = self._flags(follow_symlinks)
            if flags is None:
                return None
            self._read()  # earlier events belong to earlier watches only
            try:
                wd = self._inotify.add_watch(directory, flags)
            except OSError as exc:  # the watch limit, or the directory went away
                log.debug("cannot watch %s (%s)", directory, exc)
                return None
            found = Watch(self, directory, wd)
            self._watches.setdefault(wd, []).append(found)
            return found

    def _take(self, watch: Watch) -> list[str] | None:
        with self._lock:
            if not watch.lost:
                self._read()
            if watch.lost:
                return None
            names = list(watch._names)
            watch._names.clear()
            return names

    def _close(self, watch: Watch) -> None:
        with self._lock:
            self._detach(watch, remove=True)

    def _detach(self, watch: Watch, *, remove: bool) -> None:
        watch.lost = True
        sharing = self._watches.get(watch.wd, [])
        if watch in sharing:
            sharing.remove(watch)
        if sharing:
            return
        self._watches.pop(watch.wd, None)
        if remove:
            try:
                self._inotify.rm_watch(watch.wd)
            except OSError:  # already gone
                pass

    def _flags(self, follow_symlinks: bool) -> int | None:
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
                log.debug("inotify unavailable (%s); callers stat instead", exc)
                self._broken = True
                return None
        f = inotify_simple.flags
        flags = (f.CREATE | f.DELETE | f.MODIFY | f.CLOSE_WRITE | f.MOVED_FROM | f.MOVED_TO
                 | f.ATTRIB | f.DELETE_SELF | f.MOVE_SELF | f.ONLYDIR)
        return int(flags if follow_symlinks else flags | f.DONT_FOLLOW)

    def _read(self) -> None:
        """Move every queued kernel event to the queues of the watches it concerns."""
        import inotify_simple

        f = inotify_simple.flags
        while True:
            try:
                events = self._inotify.read(timeout=0)
            except BlockingIOError:
                return
            if not events:
                return
            for event in events:
                if event.mask & f.Q_OVERFLOW:  # events were dropped: nothing is vouched for
                    for watches in list(self._watches.values()):
                        for watch in list(watches):
                            self._detach(watch, remove=True)
                    continue
                watches = self._watches.get(event.wd, ())
                if event.mask & (f.IGNORED | f.DELETE_SELF | f.MOVE_SELF | f.UNMOUNT):
                    for watch in list(watches):
                        self._detach(watch, remove=not event.mask & f.IGNORED)
                    continue
                if event.name:
                    for watch in watches:
                        watch._names.append(event.name)


#: One per process: inotify instances are a scarce per-user resource.
WATCHER = DirectoryWatcher()


def is_watchable(path: str) -> bool:
    """A real directory (not a symlink to one): what `DirectoryWatcher.watch` accepts by
    default."""
    return os.path.isdir(path) and not os.path.islink(path)


__all__ = ["WATCHER", "DirectoryWatcher", "Watch", "is_watchable"]
