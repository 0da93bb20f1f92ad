"""A worker that outlives its host for a grace period (``[executor] detach_grace_s``).

The transport a host starts (ssh, ``podman exec``, bwrap...) dies with the host, and the
spawn door's lifeline ends every process carrying the host's scope marker. So when the
host's ``initialize`` asks for a grace period, the ``callgate worker`` the transport
started does not serve the sessions itself: it starts a **daemon** (``python -m
callgate._host.worker WORKSPACE SOCKET``, `worker.serve_daemon`: a process session
of its own, without the host's marker) that holds the sessions, their observations and
their background jobs, and listens on a unix socket in a directory only this user can
enter (``$CALLGATE_HOME/workers``, 0700). The worker then relays its stdio to that socket.

When the relay goes (the host closed, or died), a daemon with no session left exits at
once (a host that closes its sessions says so first); a daemon whose sessions were not
closed waits ``grace_s`` for a host to come back. A host that resumes one of its sessions
starts the same transport again and names the daemon in ``initialize`` (``attach``: the
identity the first handshake answered and the session recorded); the new worker relays to
it, and the session's jobs are where they were. After the grace, the daemon closes its
sessions (their jobs end: the daemon's own lifeline sweeps what they started) and exits.

Nothing here is reachable from a workspace: the identity is 128 random bits that the host
keeps in its session store, a socket path is made from a checked identity only, and the
socket's directory is checked to be this user's own and private before it is used.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import secrets
import socket
import stat
import struct
import sys
import time
from collections.abc import Iterator
from typing import Any

log = logging.getLogger("callgate")

#: a daemon's identity: what ``initialize`` answers as ``daemon`` and ``attach`` names
IDENTITY = re.compile(r"[0-9a-f]{32}")
#: what a daemon runs (``python -m``): the worker's module (`worker.serve_daemon`)
DAEMON_MODULE = "callgate._host.worker"
#: seconds a new daemon has to start listening
START_TIMEOUT_S = 60.0


class DaemonUnavailable(Exception):
    """The daemon could not be started or reached."""


def socket_dir() -> str:
    """``$CALLGATE_HOME/workers``: created private; refused unless it is this user's own
    directory (not a link) that nobody else may enter."""
    from .._config.state import state_dir

    path = os.path.join(state_dir(), "workers")
    os.makedirs(path, mode=0o700, exist_ok=True)
    found = os.lstat(path)
    if not stat.S_ISDIR(found.st_mode) or found.st_uid != os.getuid() or found.st_mode & 0o077:
        raise DaemonUnavailable(f"{path} is not a private directory of this user")
    return path


def socket_path(ident: str) -> str:
    if not isinstance(ident, str) or not IDENTITY.fullmatch(ident):
        raise DaemonUnavailable("a worker daemon's identity is 32 hexadecimal digits")
    return os.path.join(socket_dir(), f"{ident}.sock")


@contextlib.contextmanager
def address(path: str) -> Iterator[str]:
    """``path`` as a unix socket address (to bind or connect inside the block): itself when
    short enough, else through its directory's descriptor (``/proc/self/fd/N/NAME``, Linux):
    ``$CALLGATE_HOME`` may be deeper than the ~100 bytes an address holds."""
    if len(os.fsencode(path)) < 100:
        yield path
        return
    fd = os.open(os.path.dirname(path), os.O_RDONLY | os.O_DIRECTORY)
    try:
        if not os.path.isdir(f"/proc/self/fd/{fd}"):
            raise DaemonUnavailable(f"the worker socket path {path} is too long for a socket")
        yield f"/proc/self/fd/{fd}/{os.path.basename(path)}"
    finally:
        os.close(fd)


def start(workspace: str) -> tuple[str, str]:
    """Start a daemon for ``workspace``; its identity and socket once it listens."""
    import subprocess

    from .. import process
    from .._pipeline.lifeline import MARKER

    ident = secrets.token_hex(16)
    path = socket_path(ident)
    # through the spawn door, outside any session (the worker itself starts it); the
    # worker's environment as it is, without the host's scope marker: the host's lifeline
    # must not end it (its own lifeline ends what its sessions start)
    env = process.Environment(
        inherit="minimal", keep=tuple(k for k in os.environ if k != MARKER), secrets=True
    )
    prepared = process.prepare(
        None,
        # the core's own entry (`worker.serve_daemon`), not a command line it may lack; -P
        # and a private cwd: the workspace is never on its sys.path (a planted callgate/)
        [sys.executable, "-P", "-m", DAEMON_MODULE, os.path.realpath(workspace), path],
        sandbox="off",
        cwd=socket_dir(),
        env=env,
        purpose="the worker daemon",
    )
    log_path = os.path.join(socket_dir(), f"{ident}.log")
    with open(log_path, "ab") as errors:
        # its own session: not the transport's process group
        proc = prepared.popen(
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=errors,
            start_new_session=True,
            close_fds=True,
        )
    deadline = time.monotonic() + START_TIMEOUT_S
    while not os.path.exists(path):
        if proc.poll() is not None:
            raise DaemonUnavailable(f"the worker daemon exited ({proc.returncode}): see {log_path}")
        if time.monotonic() > deadline:
            proc.kill()
            raise DaemonUnavailable("the worker daemon did not start listening")
        time.sleep(0.01)
    return ident, path


class SocketOutput:
    """The protocol's output to the connected host, from any thread; a message written
    while no host is connected (a job's notice after the host died) is dropped."""

    def __init__(self) -> None:
        import threading

        self._lock = threading.Lock()
        self.sock: socket.socket | None = None

    def write(self, data: bytes) -> None:
        with self._lock:
            if self.sock is None:
                return
            try:
                self.sock.sendall(data)
            except OSError:
                self.sock = None


def peer_uid(sock: socket.socket) -> int | None:
    """The connecting process's user (Linux's ``SO_PEERCRED``), where the system says."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return None
    _pid, uid, _gid = struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, option, 12))
    return uid


def check_identity(value: Any) -> str | None:
    """``value`` if it is a daemon identity, else ``None``."""
    return value if isinstance(value, str) and IDENTITY.fullmatch(value) else None


__all__ = [
    "DAEMON_MODULE",
    "IDENTITY",
    "DaemonUnavailable",
    "SocketOutput",
    "address",
    "check_identity",
    "peer_uid",
    "socket_dir",
    "socket_path",
    "start",
]
