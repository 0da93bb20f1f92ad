"""Whether another process took a session over, without a store read per request (issue 38).

Every ``serve --http`` process on one session store may reopen any session recorded there
(after a restart, or behind a load balancer); the process that reopens it writes itself
as the session's holder, and the process that held it before must notice on the next
request it gets for that session (its copy is stale: it reloads it). Reading the holder
from the store on every request cost a thread hop and a query per call, most of the
server's own time with a local store.

`TakeoverCounter` is a number shared by every process on one local store file: a
process that takes a session over writes itself as the holder first, then adds one. A
process serving a request reads the number (a memory read of a shared mapping, no
system call) and reads the holder from the store only when the number moved since it
last found that session still its own: with no takeover anywhere, no store read at all.
The order (holder committed, then the count) keeps the answer what the store read
gave: a process that sees the new count finds the new holder.

Only for a store that is a local file (SQLite): processes on other machines (a
PostgreSQL store) share no file, so there each request still reads the holder.
"""

from __future__ import annotations

import contextlib
import logging
import mmap
import os
import stat
import threading
from typing import Any

log = logging.getLogger("callgate.mcp_serve.http")

#: beside the store file: ``<store>.mcp-http-takeovers``
SUFFIX = ".mcp-http-takeovers"
_SIZE = 8


class TakeoverCounter:
    """The takeover count of one store file, mapped into this process."""

    def __init__(self, path: str) -> None:
        self.path = path
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            found = os.fstat(fd)
            if (
                not stat.S_ISREG(found.st_mode)
                or found.st_uid != os.geteuid()
                or found.st_mode & 0o022
            ):  # planted by someone else (a store in a shared folder): it could freeze the count
                raise ValueError(f"{path} is not this user's own regular file")
            with _locked(fd):
                if os.fstat(fd).st_size < _SIZE:
                    os.ftruncate(fd, _SIZE)
            self._map = mmap.mmap(fd, _SIZE, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd

    def read(self) -> int | None:
        """The count now (no system call: the page is shared with every other process);
        ``None`` once closed (the server stopping under a request: read the holder)."""
        try:
            return int.from_bytes(self._map[:_SIZE], "little")
        except ValueError:
            return None

    def bump(self) -> None:
        """Count one takeover (after the new holder is committed to the store)."""
        if self._map.closed:
            return  # the server is stopping: no one here reads it again
        with _locked(self._fd):
            count = self.read() or 0
            self._map[:_SIZE] = ((count + 1) % (1 << 64)).to_bytes(_SIZE, "little")

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._map.close()
        with contextlib.suppress(OSError):
            os.close(self._fd)


@contextlib.contextmanager
def _locked(fd: int) -> Any:
    import fcntl  # POSIX only: elsewhere `_counter_of` gives no counter

    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)


class Takeovers:
    """The counter of one server's store, opened the first time a session is held (in a
    worker thread: it touches the filesystem), or ``None`` when the store is no local
    file or the counter cannot be opened (then every request reads the holder)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tried = False
        self.counter: TakeoverCounter | None = None

    def open_for(self, store: Any) -> TakeoverCounter | None:
        with self._lock:
            if not self._tried:
                self._tried = True
                self.counter = _counter_of(store)
            return self.counter

    def close(self) -> None:
        with self._lock:
            if self.counter is not None:
                self.counter.close()
                self.counter = None


def _counter_of(store: Any) -> TakeoverCounter | None:
    location = getattr(store, "location", None)
    if not isinstance(location, str) or not os.path.isabs(location) or \
            not os.path.isfile(location):
        return None
    if not hasattr(os, "O_NOFOLLOW"):  # not POSIX (no flock either): read per request
        return None
    try:
        return TakeoverCounter(location + SUFFIX)
    except (OSError, ValueError) as exc:
        log.warning("cannot share takeovers beside the session store (%s): every request "
                    "reads its session's holder", exc)
        return None


__all__ = ["SUFFIX", "TakeoverCounter", "Takeovers"]
