"""Kernel read leases: is another program writing the file a mutation is about to replace?

A mutation publishes by renaming a finished temp over the file. A program that already
has the old file open for writing (a logger, a shell's ``>>`` between its ``open`` and its
``write``, an mmap writer's mapping) goes on writing into the replaced file, and what it
writes is lost. Comparing bytes just before the rename cannot see a write that lands after
the comparison.

Linux's read lease (``fcntl(F_SETLEASE, F_RDLCK)``) closes that gap. It is granted only
while nobody has the file open for writing (a writable shared mapping counts), and while
it is held, an ``open`` for writing by anyone else waits until it is let go (the lease is
"broken", which `ReadLease.broken` sees). So under the lease the bytes compared are the
last bytes anyone wrote, and a writer arriving during the publish is seen and waits; the
publish then puts the old file back (`_fs.atomic.replace_in`) and answers stale, and the
writer's line lands in the file it opened.

A lease break signals its holder (``SIGIO`` by default, whose default action ends the
process): the lease is taken with ``F_SETSIG`` set to ``SIGURG`` (ignored by default) and
then its owner is cleared, so no signal is sent at all. Where leases are not available
(not Linux, a file owned by another user without ``CAP_LEASE``, a filesystem or
``fs.leases-enable=0`` without them) `ReadLease.take` answers ``None``; the publish then
relies on its checks before the rename and, where the two names can be exchanged, on a
look at the replaced file's size and times after it.
"""

from __future__ import annotations

import errno
import signal
from typing import Any

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]

#: the fcntl module's calls, where there are leases (`AVAILABLE`: else never called)
_fcntl: Any = fcntl

_SETLEASE = getattr(fcntl, "F_SETLEASE", None)
_GETLEASE = getattr(fcntl, "F_GETLEASE", None)
_SETSIG = getattr(fcntl, "F_SETSIG", None)
_SETOWN = getattr(fcntl, "F_SETOWN", None)
_RDLCK = getattr(fcntl, "F_RDLCK", 0)
_UNLCK = getattr(fcntl, "F_UNLCK", 2)
#: A signal whose default action is to ignore it, in case a break comes before the owner
#: is cleared.
_QUIET_SIGNAL = getattr(signal, "SIGURG", 0)
#: Why a lease cannot be had here (rather than "someone is writing").
_UNAVAILABLE = (
    errno.EACCES,
    errno.EPERM,
    errno.EINVAL,
    errno.ENOSYS,
    errno.ENOLCK,
    errno.EOPNOTSUPP,
    errno.ENOTSUP,
    errno.EBADF,
)

AVAILABLE = fcntl is not None and _SETLEASE is not None and _GETLEASE is not None


class WriterOpen(OSError):
    """The file is open for writing by someone (another program, another thread, a
    writable mapping): replacing it now would lose what they write next."""

    def __init__(self) -> None:
        super().__init__(errno.EAGAIN, "the file is open for writing elsewhere")


class ReadLease:
    """A read lease held on an open, read-only descriptor; `release` lets it go."""

    __slots__ = ("fd",)

    def __init__(self, fd: int) -> None:
        self.fd = fd

    @classmethod
    def take(cls, fd: int) -> ReadLease | None:
        """Lease the file behind ``fd`` (opened read-only). Raises `WriterOpen` while it is
        open for writing anywhere; ``None`` where this host or file has no leases."""
        if not AVAILABLE:
            return None
        try:
            if _SETSIG is not None and _QUIET_SIGNAL:
                _fcntl.fcntl(fd, _SETSIG, _QUIET_SIGNAL)
            _fcntl.fcntl(fd, _SETLEASE, _RDLCK)
        except OSError as exc:
            if exc.errno in (errno.EAGAIN, errno.EBUSY):
                raise WriterOpen() from None
            if exc.errno in _UNAVAILABLE:
                return None
            raise
        if _SETOWN is not None:
            try:
                _fcntl.fcntl(fd, _SETOWN, 0)  # nobody to signal: a break is polled instead
            except OSError:
                pass
        return cls(fd)

    def broken(self) -> bool:
        """Whether someone has since asked to open the file for writing (and waits)."""
        try:
            return _fcntl.fcntl(self.fd, _GETLEASE) != _RDLCK
        except OSError:
            return True

    def release(self) -> None:
        """Let the lease go: a writer waiting to open the file goes ahead."""
        try:
            _fcntl.fcntl(self.fd, _SETLEASE, _UNLCK)
        except OSError:
            pass
