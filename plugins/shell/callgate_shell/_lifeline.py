"""Shell process groups die with the process that started them, even on SIGKILL (POSIX).

Every command runs in a process group of its own (``setsid``), which the session ends when
the call or the session ends. When the host process is killed outright (``kill -9`` of
``callgate serve``) nothing of it runs any more, and the groups were reparented to init and
kept running. The lifeline is a tiny helper process, started once per host process, that
holds the read end of a pipe: the host writes ``+PGID`` when a group starts and ``-PGID``
when it is gone; when the host dies, by any means, the kernel closes the write end, the
helper reads end of file and SIGKILLs every group still listed, then exits.

Why this and not the alternatives: ``PR_SET_PDEATHSIG`` fires when the *thread* that forked
the child exits (tools spawn from worker threads that come and go) and is not inherited by
the shell's own children; ``PR_SET_CHILD_SUBREAPER`` only keeps orphans in the host, which
is the process that died; a cgroup needs a delegated hierarchy most users do not have. The
lifeline needs no privilege and works on every POSIX system. The helper lives in a session
of its own, so a signal to the host's process group does not take it down first, and its
pipe end is close-on-exec, so no command inherits it (which would keep the pipe open).
"""

from __future__ import annotations

import contextlib
import logging
import os
import subprocess
import sys
import threading

log = logging.getLogger("callgate.shell")

#: The helper: collect the listed groups until end of input, then kill what is left.
HELPER = """
import os, signal, sys
groups = set()
for line in sys.stdin.buffer:
    try:
        op, pgid = line[:1], int(line[1:])
    except ValueError:
        continue
    if op == b"+":
        groups.add(pgid)
    elif op == b"-":
        groups.discard(pgid)
for pgid in groups:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except OSError:
        pass
"""


class Lifeline:
    """The helper of this process (`lifeline`); thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._groups: set[int] = set()

    def _helper(self) -> subprocess.Popen[bytes] | None:
        proc = self._proc
        if proc is not None and proc.poll() is None:
            return proc
        try:
            proc = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", HELPER],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
                close_fds=True,
            )
        except OSError as exc:
            log.warning("could not start the shell lifeline helper: %s", exc)
            return None
        self._proc = proc
        assert proc.stdin is not None
        for pgid in self._groups:  # a restarted helper learns the groups still running
            self._write(proc, f"+{pgid}\n")
        return proc

    @staticmethod
    def _write(proc: subprocess.Popen[bytes], line: str) -> bool:
        assert proc.stdin is not None
        try:
            proc.stdin.write(line.encode("ascii"))
            proc.stdin.flush()
            return True
        except OSError:
            return False

    def hold(self, pgid: int) -> None:
        """List ``pgid``: it is killed if this process dies before `release`."""
        with self._lock:
            self._groups.add(pgid)
            proc = self._helper()
            if proc is not None and not self._write(proc, f"+{pgid}\n"):
                self._proc = None
                self._helper()

    def release(self, pgid: int) -> None:
        """Unlist ``pgid`` (the group is gone, or is left to live on on purpose)."""
        with self._lock:
            self._groups.discard(pgid)
            proc = self._proc
            if proc is not None and proc.poll() is None:
                self._write(proc, f"-{pgid}\n")

    @property
    def pid(self) -> int | None:
        proc = self._proc
        return proc.pid if proc is not None and proc.poll() is None else None

    def _forget(self) -> None:  # in a forked child: the parent's helper is not ours
        self._lock = threading.Lock()
        self._groups = set()
        if self._proc is not None and self._proc.stdin is not None:
            with contextlib.suppress(OSError):
                os.close(self._proc.stdin.fileno())
        self._proc = None


lifeline = Lifeline()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=lifeline._forget)

__all__ = ["Lifeline", "lifeline"]
