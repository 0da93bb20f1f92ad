"""Whether a skills root changed since it was scanned, asked of the kernel (Linux inotify).

Checking 1,000 skill folders by ``stat`` costs 1,000 system calls per discovery. On
Linux one inotify instance per process (inotify-simple) watches each scanned root and
its skill folders; every event on one of them bumps the root's *generation*. A scan
remembers the generation it was armed at, and stays valid while the generation is the
same and the root is still fully watched. Anything the feed cannot vouch for (no
inotify, a watch that could not be added or was removed, a queue overflow) makes
`generation` answer ``None``, and the caller falls back to its stat signature.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterable
from typing import Any

log = logging.getLogger("callgate.skills")


class RootWatch:
    """The process's watches on skills roots and their folders."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._inotify: Any = None
        self._broken = False
        self._root_of: dict[int, str] = {}
        self._wds: dict[str, set[int]] = {}
        self._gen: dict[str, int] = {}
        self._trusted: set[str] = set()

    def generation(self, root: str) -> int | None:
        """The root's generation now, or ``None`` when its watch cannot vouch for it."""
        with self._lock:
            if self._inotify is None:
                return None
            self._drain()
            return self._gen.get(root, 0) if root in self._trusted else None

    def arm(self, root: str, folders: Iterable[str], *, complete: bool) -> int | None:
        """Watch ``root`` and ``folders``; with ``complete``, trust the root from now on.
        Returns the generation to remember, or ``None`` (not watchable)."""
        with self._lock:
            flags = self._flags()
            if flags is None:
                return None
            self._drain()
            for directory in (root, *folders):
                try:
                    wd = self._inotify.add_watch(directory, flags)
                except OSError as exc:  # the watch limit, or it went away meanwhile
                    log.debug("skills: cannot watch %s (%s); checking by stat", directory, exc)
                    self._trusted.discard(root)
                    return None
                self._root_of[wd] = root
                self._wds.setdefault(root, set()).add(wd)
            if complete:
                self._trusted.add(root)
            return self._gen.get(root, 0)

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
                log.debug("skills: inotify unavailable (%s); checking by stat", exc)
                self._broken = True
                return None
        f = inotify_simple.flags
        return int(
            f.CREATE
            | f.DELETE
            | f.MODIFY
            | f.CLOSE_WRITE
            | f.MOVED_FROM
            | f.MOVED_TO
            | f.ATTRIB
            | f.DELETE_SELF
            | f.MOVE_SELF
            | f.ONLYDIR
        )

    def _drain(self) -> None:
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
                if event.mask & f.Q_OVERFLOW:
                    for root in list(self._gen):
                        self._gen[root] += 1
                    self._trusted.clear()
                    continue
                root = self._root_of.get(event.wd)
                if root is None:
                    continue
                self._gen[root] = self._gen.get(root, 0) + 1
                if event.mask & (f.IGNORED | f.DELETE_SELF | f.MOVE_SELF | f.UNMOUNT):
                    self._trusted.discard(root)
                    self._root_of.pop(event.wd, None)
                    self._wds.get(root, set()).discard(event.wd)


#: One per process: inotify instances are a scarce per-user resource.
WATCH = RootWatch()


def is_link(path: str) -> bool:
    return os.path.islink(path)
