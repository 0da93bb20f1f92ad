"""One command in its own process group: start it (through the core's door, already
prepared by `callgate.process.prepare`), feed its output to a sink, and end the whole group
on exit, timeout or a stop request (shell.md §1.2-§1.3, §2).

Foreground commands and background jobs share this code; only who waits differs
(the tool's worker thread, or a job's supervisor thread). Which implementation
runs is fixed by the machine the host runs on, never by a tool at call time.
"""

from __future__ import annotations

import contextlib
import logging
import os
import selectors
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable

import attrs
from callgate import process

log = logging.getLogger("callgate.shell")

GRACE_S = 2.0  # SIGTERM to the group, then SIGKILL this much later if any member is left
DRAIN_S = 5.0  # after the shell exits, read its output pipe this long at most
# One pipe's worth (the kernel default). Enlarging the pipe with F_SETPIPE_SZ measured only
# ~5 % faster and counts against the user's pipe-buffer quota shared by all their processes.
READ_CHUNK = 64 * 1024
_DEADLINE = "deadline"

Sink = Callable[[bytes], None]
StopCheck = Callable[[], str | None]


@attrs.define
class RunOutcome:
    """How a command ended.

    ``ended_by`` is ``"exit"`` when the shell ended on its own, else the reason
    we ended it (``"timeout"``, ``"cancelled"``, ``"job_kill"``, ...).
    ``signal`` is set only for a signal that was not ours.
    """

    ended_by: str
    exit_code: int | None
    signal: int | None
    pipe_held: bool
    duration_ms: int


def start_group(prepared: process.Prepared, sink: Sink, *,
                reap_leftovers: bool = True) -> ProcessGroup:
    """Start ``prepared`` in a new process group with stdin on the null device; raises
    `OSError`."""
    group = _IMPLEMENTATION(prepared, sink, reap_leftovers=reap_leftovers)
    group.start()
    return group


class ProcessGroup:
    """The shared interface of the POSIX and Windows implementations."""

    def __init__(self, prepared: process.Prepared, sink: Sink, *, reap_leftovers: bool) -> None:
        self.prepared = prepared
        self.sink = sink
        self.reap_leftovers = reap_leftovers
        self.proc: subprocess.Popen[bytes] | None = None
        self.started = 0.0

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def start(self) -> None:
        raise NotImplementedError

    def wake(self) -> None:
        """Make a waiting ``run`` look at its stop check now."""

    def run(self, *, deadline: float | None = None, deadline_reason: str = "timeout",
            stop: StopCheck | None = None, poll: float | None = None) -> RunOutcome:
        """Pump output until the command has ended and the group is gone; see `RunOutcome`.

        ``deadline`` is a ``time.monotonic()`` value; ``stop`` is asked every
        ``poll`` seconds (and after every `wake`) and returns a reason to end
        the group, or ``None``.
        """
        raise NotImplementedError

    def _outcome(self, ended_by: str, pipe_held: bool) -> RunOutcome:
        assert self.proc is not None
        rc = self.proc.returncode
        duration = int((time.monotonic() - self.started) * 1000)
        if ended_by != "exit":
            return RunOutcome(ended_by, rc if rc is not None and rc >= 0 else None, None,
                              pipe_held, duration)
        if rc is not None and rc < 0:
            return RunOutcome("exit", None, -rc, pipe_held, duration)
        return RunOutcome("exit", rc, None, pipe_held, duration)


class PosixProcessGroup(ProcessGroup):
    """A new session (``setsid``) per command; the group is ended with SIGTERM, then SIGKILL.

    The shell's exit is seen through a pidfd where the kernel has one, else by
    polling ``waitid(WNOWAIT)``. Either way the shell is left a zombie until the
    leftovers of its group were signalled, so its group id cannot be reused
    while we still send signals to it.
    """

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._sel: selectors.BaseSelector | None = None
        self._fd = -1
        self._pidfd: int | None = None
        self._wake_r = self._wake_w = -1
        self._wake_lock = threading.Lock()
        self._eof = False
        self._exited = False

    def start(self) -> None:
        self.proc = self.prepared.popen(stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, start_new_session=True,
                                        close_fds=True)
        self.started = time.monotonic()
        assert self.proc.stdout is not None
        self._fd = self.proc.stdout.fileno()
        os.set_blocking(self._fd, False)
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)
        self._sel = selectors.DefaultSelector()
        self._sel.register(self._fd, selectors.EVENT_READ, "out")
        self._sel.register(self._wake_r, selectors.EVENT_READ, "wake")
        pidfd_open = getattr(os, "pidfd_open", None)
        if pidfd_open is not None:
            try:
                self._pidfd = pidfd_open(self.proc.pid)
                self._sel.register(self._pidfd, selectors.EVENT_READ, "exit")
            except OSError:
                self._pidfd = None

    def wake(self) -> None:
        with self._wake_lock:
            if self._wake_w >= 0:
                with contextlib.suppress(OSError):
                    os.write(self._wake_w, b"\0")

    def run(self, *, deadline: float | None = None, deadline_reason: str = "timeout",
            stop: StopCheck | None = None, poll: float | None = None) -> RunOutcome:
        try:
            reason = self._pump(self._leader_exited, deadline, stop, poll)
            if reason is None:  # the shell ended on its own
                ended_by = "exit"
                exited_at = time.monotonic()
                if self.reap_leftovers:
                    self._end_group()
                else:
                    self._reap_leader()
            else:
                ended_by = deadline_reason if reason == _DEADLINE else reason
                self._end_group()
                exited_at = time.monotonic()
            drained = self._pump(lambda: self._eof, exited_at + DRAIN_S) is None
            return self._outcome(ended_by, pipe_held=not drained)
        finally:
            self._close()

    # --- the loop ------------------------------------------------------------------

    def _pump(self, done: Callable[[], bool], deadline: float | None,
              stop: StopCheck | None = None, poll: float | None = None) -> str | None:
        """Read output and watch the shell until ``done()``; else ``_DEADLINE`` or a stop reason."""
        assert self._sel is not None
        while True:
            if done():
                return None
            now = time.monotonic()
            if deadline is not None and now >= deadline:
                return _DEADLINE
            if stop is not None:
                reason = stop()
                if reason:
                    return reason
            timeout = None if deadline is None else deadline - now
            if poll is not None:
                timeout = poll if timeout is None else min(timeout, poll)
            if self._pidfd is None and not self._exited:
                timeout = 0.05 if timeout is None else min(timeout, 0.05)
            for key, _mask in self._sel.select(timeout):
                if key.data == "out":
                    self._read()
                elif key.data == "wake":
                    with contextlib.suppress(OSError):
                        while os.read(self._wake_r, 4096):
                            pass
                else:
                    self._exited = True
                    self._sel.unregister(key.fd)

    def _read(self) -> None:
        for _ in range(16):  # a few reads per wake-up keep throughput up for chatty commands
            try:
                data = os.read(self._fd, READ_CHUNK)
            except BlockingIOError:
                return
            except OSError:
                data = b""
            if not data:
                self._eof = True
                assert self._sel is not None
                self._sel.unregister(self._fd)
                return
            try:
                self.sink(data)
            except Exception:  # a broken sink must not leave the process group running
                log.exception("an output sink failed")

    # --- the shell and its group --------------------------------------------------------

    def _leader_exited(self) -> bool:
        """Whether the shell has exited (it may still be an unreaped zombie)."""
        assert self.proc is not None
        if self._exited or self.proc.returncode is not None:
            return True
        if self._pidfd is None:
            try:
                info = os.waitid(os.P_PID, self.proc.pid,
                                 os.WEXITED | os.WNOHANG | os.WNOWAIT)
            except ChildProcessError:
                info = True  # reaped elsewhere: it has exited all the same
            if info is not None:
                self._exited = True
        return self._exited

    def _reap_leader(self) -> None:
        assert self.proc is not None
        if self.proc.returncode is None:
            self.proc.wait()

    def _group_gone(self) -> bool:
        assert self.proc is not None
        if self.proc.returncode is None:
            if not self._leader_exited():
                return False
            self.proc.wait()
        try:
            os.killpg(self.proc.pid, 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            return False
        # Killed members linger as zombies until their new parent (init, or a slow
        # container init) reaps them; a zombie holds no pipe and runs nothing.
        return _only_zombies(self.proc.pid)

    def _signal_group(self, sig: int) -> None:
        assert self.proc is not None
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, sig)

    def _end_group(self) -> None:
        """SIGTERM to the whole group (and SIGCONT, so stopped members can act on it),
        SIGKILL after `GRACE_S` if any member is left; output keeps flowing meanwhile."""
        self._signal_group(signal.SIGTERM)
        self._signal_group(signal.SIGCONT)
        if self._pump(self._group_gone, time.monotonic() + GRACE_S, poll=0.02) is None:
            return
        self._signal_group(signal.SIGKILL)
        self._pump(self._group_gone, time.monotonic() + GRACE_S, poll=0.02)
        self._reap_leader()

    def _close(self) -> None:
        if self._sel is not None:
            self._sel.close()
            self._sel = None
        if self._pidfd is not None:
            with contextlib.suppress(OSError):
                os.close(self._pidfd)
            self._pidfd = None
        with self._wake_lock:
            for fd in (self._wake_r, self._wake_w):
                if fd >= 0:
                    with contextlib.suppress(OSError):
                        os.close(fd)
            self._wake_r = self._wake_w = -1
        if self.proc is not None and self.proc.stdout is not None:
            with contextlib.suppress(OSError):
                self.proc.stdout.close()


class WindowsProcessGroup(ProcessGroup):
    """A new process group per command; the tree is ended with ``taskkill /T /F``
    (Windows has no graceful phase). Output is read by a helper thread because
    Windows cannot wait on pipes with ``select``."""

    _POLL = 0.05

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._reader: threading.Thread | None = None
        self._woken = threading.Event()

    def start(self) -> None:
        flags = getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0) | \
            getattr(subprocess, "CREATE_NO_WINDOW", 0)
        self.proc = self.prepared.popen(stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, creationflags=flags)
        self.started = time.monotonic()
        self._reader = threading.Thread(target=self._read_all, daemon=True,
                                        name=f"callgate-shell-reader-{self.proc.pid}")
        self._reader.start()

    def _read_all(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while True:
            try:
                data = os.read(fd, READ_CHUNK)
            except OSError:
                return
            if not data:
                return
            try:
                self.sink(data)
            except Exception:
                log.exception("an output sink failed")

    def wake(self) -> None:
        self._woken.set()

    def _kill_tree(self) -> None:
        assert self.proc is not None
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            process.prepare(None, ["taskkill", "/T", "/F", "/PID", str(self.proc.pid)],
                            sandbox="off", purpose="taskkill").run(timeout=10)

    def run(self, *, deadline: float | None = None, deadline_reason: str = "timeout",
            stop: StopCheck | None = None, poll: float | None = None) -> RunOutcome:
        assert self.proc is not None and self._reader is not None
        ended_by = "exit"
        while self.proc.poll() is None:
            now = time.monotonic()
            reason = stop() if stop is not None else None
            if deadline is not None and now >= deadline:
                reason = deadline_reason
            if reason:
                ended_by = reason
                self._kill_tree()
                self.proc.wait()
                break
            wait = self._POLL if deadline is None else max(0.0, min(self._POLL, deadline - now))
            self._woken.wait(wait)
            self._woken.clear()
        exited_at = time.monotonic()
        if ended_by == "exit" and self.reap_leftovers:
            self._kill_tree()
        self._reader.join(max(0.0, exited_at + DRAIN_S - time.monotonic()))
        held = self._reader.is_alive()
        if not held and self.proc.stdout is not None:
            with contextlib.suppress(OSError):
                self.proc.stdout.close()
        return self._outcome(ended_by, pipe_held=held)


def _only_zombies(pgid: int) -> bool:
    """True when every member of process group ``pgid`` is a zombie (Linux ``/proc``);
    False when one is alive or ``/proc`` cannot tell."""
    try:
        names = os.listdir("/proc")
    except OSError:
        return False
    found = False
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2:].split()
        if len(fields) < 3 or int(fields[2]) != pgid:
            continue
        if fields[0] not in (b"Z", b"X"):
            return False
        found = True
    return found


_IMPLEMENTATION: type[ProcessGroup] = (WindowsProcessGroup if sys.platform == "win32"
                                       else PosixProcessGroup)
