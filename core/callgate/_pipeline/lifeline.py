"""Nothing a session started outlives it (issue 30): the scope marker, the sweep when a
session closes, and the lifeline helper that sweeps when the host process dies.

Every program started through `callgate.process` carries ``CALLGATE_PROCESS_SCOPE=<host>.
<scope>`` in its environment, and so does everything it starts in turn: a ``nohup``
server, a ``setsid`` daemon, an MCP server's grandchildren, whatever process group or
session they moved to. When the scope's owner closes (a session; a family of sessions for
the MCP servers they share), `end_scope` kills every process of this user whose
environment holds that exact entry. When the host process dies by any means (``kill -9``
included), the lifeline helper, a tiny process holding the read end of a pipe the host
writes nothing to, reads end of file and kills every process carrying this host's marker.

Why a marker and not the alternatives: a process group is left by ``setsid``;
``PR_SET_CHILD_SUBREAPER`` would make the host (an integrator's process) the parent of
every orphan, to be reaped and told apart per session; a cgroup needs a delegated
hierarchy most users do not have. The marker needs no privilege and holds for every
process that keeps its environment, which is what programs do unless they set out to
escape (``env -i``): inside the sandbox, the pid namespace ends those too. The sweep reads
``/proc`` (Linux); elsewhere only the process groups the plugins end remain.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import signal
import subprocess
import sys
import threading
import weakref

log = logging.getLogger("callgate")

MARKER = "CALLGATE_PROCESS_SCOPE"
#: Sweeps repeat while they find something (a process forking while it is killed).
ROUNDS = 10

_lock = threading.Lock()
_host = secrets.token_hex(8)
_scopes: weakref.WeakKeyDictionary[object, str] = weakref.WeakKeyDictionary()


def scope_of(owner: object) -> str:
    """The marker value of ``owner`` (a session, or a family's shared resources), made on
    first use: ``<host>.<scope>``."""
    with _lock:
        found = _scopes.get(owner)
        if found is None:
            found = _scopes[owner] = f"{_host}.{secrets.token_hex(8)}"
        return found


def end_scope(owner: object) -> int:
    """Kill every process still carrying ``owner``'s marker; returns how many were killed.
    A no-op for an owner that never started a program."""
    with _lock:
        token = _scopes.pop(owner, None)
    if token is None:
        return 0
    killed = sweep(f"{MARKER}={token}".encode(), prefix=False)
    if killed:
        log.debug("ended %d leftover process(es) of a closed session", killed)
    return killed


def sweep(entry: bytes, *, prefix: bool) -> int:
    """SIGKILL every process of this user (but this one) whose environment holds ``entry``
    (or an entry starting with it); repeated while a round finds any."""
    if not os.path.isdir("/proc"):
        return 0
    me, total = os.getpid(), 0
    helper = lifeline.pid
    for _ in range(ROUNDS):
        killed = 0
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            pid = int(name)
            if pid in (me, helper):
                continue
            if _kill_if_marked(pid, entry, prefix):
                killed += 1
        total += killed
        if not killed:
            break
    return total


def _kill_if_marked(pid: int, entry: bytes, prefix: bool) -> bool:
    pidfd = None
    pidfd_open = getattr(os, "pidfd_open", None)
    if pidfd_open is not None:  # held before reading, so the pid cannot be reused meanwhile
        try:
            pidfd = pidfd_open(pid)
        except OSError:
            return False
    try:
        try:
            with open(f"/proc/{pid}/environ", "rb") as fh:
                data = fh.read()
        except OSError:
            return False
        items = data.split(b"\0")
        if not any(item.startswith(entry) if prefix else item == entry for item in items):
            return False
        try:
            if pidfd is not None:
                signal.pidfd_send_signal(pidfd, signal.SIGKILL)
            else:
                os.kill(pid, signal.SIGKILL)
        except OSError:
            return False
        return True
    finally:
        if pidfd is not None:
            os.close(pidfd)


#: The helper: wait for end of input (the host is gone), then kill what carries its marker.
HELPER = """
import os, signal, sys
entry = ("%s=" % sys.argv[1] + sys.argv[2] + ".").encode()
sys.stdin.buffer.read()
me = os.getpid()
for _ in range(10):
    killed = 0
    try:
        names = os.listdir("/proc")
    except OSError:
        break
    for name in names:
        if not name.isdigit() or int(name) == me:
            continue
        try:
            with open("/proc/%s/environ" % name, "rb") as fh:
                items = fh.read().split(b"\\0")
        except OSError:
            continue
        if any(item.startswith(entry) for item in items):
            try:
                os.kill(int(name), signal.SIGKILL)
                killed += 1
            except OSError:
                pass
    if not killed:
        break
"""


class Lifeline:
    """The helper of this process (one per host process, started with the first program
    a session starts); thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None

    def ensure(self) -> None:
        """Start the helper unless it runs (again, if it died)."""
        if sys.platform != "linux":
            return  # the sweep reads /proc
        with self._lock:
            if self._proc is not None and self._proc.poll() is None:
                return
            try:
                self._proc = subprocess.Popen(
                    [sys.executable, "-I", "-S", "-c", HELPER, MARKER, _host],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    start_new_session=True,
                    close_fds=True,
                    env={k: v for k, v in os.environ.items() if k != MARKER},
                )
            except OSError as exc:
                log.warning("could not start the process lifeline helper: %s", exc)
                self._proc = None

    @property
    def pid(self) -> int | None:
        proc = self._proc
        return proc.pid if proc is not None and proc.poll() is None else None

    def _forget(self) -> None:  # in a forked child: the parent's helper is not ours
        global _host
        _host = secrets.token_hex(8)
        _scopes.clear()
        self._lock = threading.Lock()
        if self._proc is not None and self._proc.stdin is not None:
            with contextlib.suppress(OSError):
                os.close(self._proc.stdin.fileno())
        self._proc = None


lifeline = Lifeline()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=lifeline._forget)

__all__ = ["MARKER", "end_scope", "lifeline", "scope_of", "sweep"]
