"""Writer leases: two structured mutations of one path never overlap (files.md §4).

The locks are process-wide (every session of every Host), one per canonical
path; several paths are always taken in sorted order so leases cannot
deadlock. Other processes are caught by the write-time double check, not here.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

_registry_lock = threading.Lock()
_locks: dict[str, tuple[threading.Lock, int]] = {}


def _take(path: str) -> threading.Lock:
    with _registry_lock:
        lock, users = _locks.get(path, (None, 0))
        if lock is None:
            lock = threading.Lock()
        _locks[path] = (lock, users + 1)
        return lock


def _give(path: str) -> None:
    with _registry_lock:
        lock, users = _locks[path]
        if users <= 1:
            del _locks[path]
        else:
            _locks[path] = (lock, users - 1)


class WriterLease:
    """Holds the writer locks of a set of canonical paths until released.

    ``acquire`` blocks; call it from a worker thread when on an event loop.
    """

    def __init__(self, paths: Iterable[str]) -> None:
        self.paths = sorted(set(paths))
        self._held: list[tuple[str, threading.Lock]] = []

    def try_acquire(self) -> bool:
        """Take every lock without waiting, or none."""
        for path in self.paths:
            lock = _take(path)
            if not lock.acquire(blocking=False):
                _give(path)
                self.release()
                return False
            self._held.append((path, lock))
        return True

    def acquire(self) -> None:
        for path in self.paths:
            lock = _take(path)
            lock.acquire()
            self._held.append((path, lock))

    def release(self) -> None:
        while self._held:
            path, lock = self._held.pop()
            lock.release()
            _give(path)

    def __enter__(self) -> WriterLease:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def held_paths() -> list[str]:
    """Paths with a lease taken or wanted right now (for tests of "no lock stays held")."""
    with _registry_lock:
        return sorted(_locks)
