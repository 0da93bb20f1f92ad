"""Whether a skills root changed since it was scanned, asked of the kernel.

Checking 1,000 skill folders by ``stat`` costs 1,000 system calls per discovery. The
library's directory watcher (`callgate_toolkit.watch`: Linux inotify, one instance per
process) watches each scanned root and its skill folders; every event on one of them
bumps the root's *generation*. A scan remembers the generation it was armed at, and
stays valid while the generation is the same and the root is still fully watched.
Anything the watcher cannot vouch for (no inotify, a watch that could not be added or
was lost, a queue overflow) makes `generation` answer ``None``, and the caller falls
back to its stat signature.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable

from callgate_toolkit.watch import WATCHER, DirectoryWatcher, Watch


class RootWatch:
    """The watches on skills roots and their folders (``watcher``: the process's, or one
    made with ``enabled=False`` to check by stat every time)."""

    def __init__(self, watcher: DirectoryWatcher = WATCHER) -> None:
        self._lock = threading.Lock()
        self._watcher = watcher
        self._watches: dict[str, dict[str, Watch]] = {}  # root -> directory -> watch
        self._gen: dict[str, int] = {}
        self._trusted: set[str] = set()

    def generation(self, root: str) -> int | None:
        """The root's generation now, or ``None`` when its watch cannot vouch for it."""
        with self._lock:
            if not self._watcher.started:
                return None
            self._drain(root)
            return self._gen.get(root, 0) if root in self._trusted else None

    def arm(self, root: str, folders: Iterable[str], *, complete: bool) -> int | None:
        """Watch ``root`` and ``folders``; with ``complete``, trust the root from now on.
        Returns the generation to remember, or ``None`` (not watchable)."""
        with self._lock:
            self._drain(root)
            watches = self._watches.setdefault(root, {})
            for directory in (root, *folders):
                if directory in watches:
                    continue
                # a root may be a symlink to a directory (~/.claude/skills -> dotfiles)
                watch = self._watcher.watch(directory, follow_symlinks=True)
                if watch is None:  # no inotify, the watch limit, or it went away meanwhile
                    self._trusted.discard(root)
                    return None
                watches[directory] = watch
            if complete:
                self._trusted.add(root)
            return self._gen.get(root, 0)

    def _drain(self, root: str) -> None:
        watches = self._watches.get(root, {})
        for directory, watch in list(watches.items()):
            names = watch.changes()
            if names is None:  # lost: the folder went away, or events were dropped
                del watches[directory]
                self._trusted.discard(root)
            if names is None or names:
                self._gen[root] = self._gen.get(root, 0) + 1


#: One per process, on the process's one watcher.
WATCH = RootWatch()


def is_link(path: str) -> bool:
    return os.path.islink(path)
