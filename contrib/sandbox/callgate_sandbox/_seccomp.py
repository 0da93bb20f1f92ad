"""The seccomp filter that keeps Unix sockets out of reach when the network is off.

A network namespace of its own cuts a command off from every IP address and
from abstract Unix sockets, but not from a Unix socket that is a file: one in
``~/.docker``, ``/var/lib`` or the user's ``/tmp`` is reachable through the
read-only filesystem view (read-only does not stop ``connect()``). So, with
the network off, the command runs under this filter: ``socket(AF_UNIX, ...)``
fails with ``EPERM``, and so does io_uring (whose socket and connect
operations would not pass through the filter). ``socketpair()`` still works,
so pipes between a command's own processes do; nothing else is touched.

The program is compiled by libseccomp (through ``pyseccomp``) once per
process, for the native architecture and its 32-bit compatible ones (whose
``socketcall`` is refused for every family), and kept in a sealed memfd:
there is no file a command could replace. bubblewrap loads it (``--seccomp``)
right before it starts the command.
"""

from __future__ import annotations

import errno
import fcntl
import os
import socket
import threading

BLOCKED_SYSCALLS = ("io_uring_setup", "io_uring_enter", "io_uring_register")

_lock = threading.Lock()
_fd: int | None = None
_error: str | None = None


class SeccompUnavailable(Exception):
    """The filter cannot be built here; ``str(exc)`` says why."""


def _compile() -> bytes:
    try:
        import pyseccomp as seccomp
    except (ImportError, OSError, RuntimeError) as exc:
        raise SeccompUnavailable(f"libseccomp cannot be loaded ({exc}); install libseccomp2 "
                                 "(Debian/Ubuntu: apt-get install libseccomp2)") from None
    deny = seccomp.ERRNO(errno.EPERM)
    flt = seccomp.SyscallFilter(seccomp.ALLOW)
    native = seccomp.system_arch()
    if native == seccomp.Arch.X86_64:
        for compat in (seccomp.Arch.X86, seccomp.Arch.X32):
            try:
                flt.add_arch(compat)
            except OSError:
                pass
    try:
        flt.add_rule(deny, "socket", seccomp.Arg(0, seccomp.EQ, socket.AF_UNIX))
        for name in BLOCKED_SYSCALLS:
            try:
                flt.add_rule(deny, name)
            except (OSError, ValueError):
                pass  # unknown to this libseccomp: the kernel predates it too
    except OSError as exc:
        raise SeccompUnavailable(f"libseccomp refused the socket rule ({exc})") from None
    read, write = os.pipe()
    try:
        with os.fdopen(write, "wb") as out:
            flt.export_bpf(out)
        chunks = []
        while chunk := os.read(read, 1 << 16):
            chunks.append(chunk)
    finally:
        os.close(read)
    program = b"".join(chunks)
    if not program or len(program) % 8:
        raise SeccompUnavailable("libseccomp exported an empty or malformed BPF program")
    return program


def _sealed_memfd(data: bytes) -> int:
    fd = os.memfd_create("callgate-unix-socket-filter", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW |
                    fcntl.F_SEAL_WRITE | fcntl.F_SEAL_SEAL)
    except OSError:
        os.close(fd)
        raise
    return fd


def filter_path() -> str:
    """A path that opens the compiled filter (``/proc/<this pid>/fd/<n>``, read-only and
    sealed); `SeccompUnavailable` when it cannot be built."""
    global _fd, _error
    with _lock:
        if _fd is None and _error is None:
            try:
                _fd = _sealed_memfd(_compile())
            except SeccompUnavailable as exc:
                _error = str(exc)
            except (OSError, AttributeError) as exc:  # no memfd (not Linux, or very old)
                _error = f"cannot hold the seccomp filter in memory ({exc})"
        if _fd is None:
            raise SeccompUnavailable(_error or "the seccomp filter is unavailable")
        return f"/proc/{os.getpid()}/fd/{_fd}"


__all__ = ["SeccompUnavailable", "filter_path"]
