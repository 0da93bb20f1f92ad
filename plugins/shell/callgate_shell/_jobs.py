"""Background jobs of one session (shell.md §4): ids, status, the full log plus a bounded
in-memory tail, the read cursor, max lifetime, the finished-job notice, and ending
every job when the session closes.

Each running job has one supervisor thread (the same process-group code as a
foreground command); the table is the session extension ``session.extension(JOBS)``.

Jobs are recorded in the session store (``session.storage``): when one starts, and
when it ends with its status, exit code and log (the last `STORED_LOG_BYTES`). A
resumed session lists the jobs of its earlier processes: a finished one reads like
any finished job (``job_output`` continues from where the model last read), and one
that was still running when its process died reads ``killed (host exited)``.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import shutil
import tempfile
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any

import attrs
from callgate import process

from ._capture import ByteTail, decode, dropped_marker, incomplete_utf8_suffix
from ._process import DRAIN_S, ProcessGroup, RunOutcome, start_group

log = logging.getLogger("callgate.shell")

TAIL_BYTES = 64 * 1024
#: How much of a finished job's log the session store keeps (the end of it).
STORED_LOG_BYTES = 8 * 1024 * 1024
CLOSE_TIMEOUT_S = 10.0
LABEL_MAX = 48
PIPE_NOTE = (f"[note: a process kept the output pipe open; stopped reading {DRAIN_S:g} s "
             "after the shell exited]")
NOTICE_SOURCE = "shell"

NoteFn = Callable[[str, int | None], str | None]


def job_label(description: str | None, command: str) -> str:
    """``description`` or the command, whitespace runs collapsed, at most 48 characters + …."""
    text = " ".join((description if description and description.strip() else command).split())
    return text if len(text) <= LABEL_MAX else text[:LABEL_MAX] + "…"


@attrs.define
class Read:
    """One read of a job: its header, the new text, and notes, from one consistent snapshot."""

    header: str
    text: str
    lines_before: list[str]
    final: bool
    notes: list[str]


class Job:
    """One background job. Output is written by its supervisor thread; reads move the cursor."""

    def __init__(self, job_id: str, kind: str, label: str, command: str) -> None:
        self.id = job_id
        self.kind = kind
        self.label = label
        self.command = command
        self.started = time.monotonic()
        self.started_at = time.time()
        self.ended: float | None = None
        #: called once the job has ended (the table records it in the session store)
        self.on_end: Callable[[Job], None] | None = None
        #: a job of an earlier process of the session: its stored log (read on demand)
        self.stored_log: Callable[[], bytes] | None = None
        self._stored: bytes | None = None
        self.log_dropped = 0
        self.status = "running"
        self.reason = ""
        self.exit_code: int | None = None
        self.pid: int | None = None
        self.cursor = 0
        self.total = 0
        self.final_seen = False
        self.announced = False
        self.start_call_id: str | None = None
        self.start_delivered = False  # the model has the result that started it (its id)
        self.notes: list[str] = []
        self.finished = threading.Event()
        self.log_path: str | None = None
        self.log_error: str | None = None
        self._log_fd: int | None = None
        self._tail = ByteTail(TAIL_BYTES)
        self._lock = threading.Lock()
        self._read_lock = threading.Lock()
        self._stop: str | None = None
        self._group: ProcessGroup | None = None
        self._thread: threading.Thread | None = None

    # --- status ---------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self.status == "running"

    def _header(self) -> str:
        return f"[{self.id}] {self.status}" + (f" ({self.reason})" if self.reason else "")

    def header(self) -> str:
        with self._lock:
            return self._header()

    def runtime(self) -> float:
        return (self.ended if self.ended is not None else time.monotonic()) - self.started

    @property
    def unread(self) -> int:
        with self._lock:
            return self.total - self.cursor

    @property
    def announceable(self) -> bool:
        """Ended on its own or by max lifetime, and its final status is still news."""
        return (self.finished.is_set() and not self.final_seen and not self.announced
                and (self.status in ("done", "failed")
                     or self.reason == "max lifetime exceeded"))

    def summary(self) -> dict[str, Any]:
        with self._lock:
            return {"id": self.id, "status": self.status, "reason": self.reason or None,
                    "label": self.label, "command": self.command, "exit_code": self.exit_code,
                    "pid": self.pid, "runtime_s": round(self.runtime(), 3),
                    "unread_bytes": self.total - self.cursor, "log": self.log_path}

    def snapshot(self) -> dict[str, Any]:
        """`summary` and the byte counts and state a dashboard (or a test) polls, as JSON."""
        found = self.summary()
        with self._lock:
            found.update(total=self.total, cursor=self.cursor, running=self.running,
                         finished=self.finished.is_set(), log_path=self.log_path,
                         log_error=self.log_error)
        return found

    # --- output (supervisor thread) ------------------------------------------------------

    def open_log(self, directory: str | None, error: str | None) -> None:
        if directory is None:
            self.log_error = error or "no job directory"
            return
        path = os.path.join(directory, f"{self.id}.log")
        try:
            self._log_fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND |
                                   getattr(os, "O_CLOEXEC", 0), 0o600)
            self.log_path = path
        except OSError as exc:
            self.log_error = f"creating it failed: {exc.strerror or exc}"

    def add_output(self, data: bytes) -> None:
        if self._log_fd is not None:
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(self._log_fd, view):]
            except OSError as exc:
                with self._lock:
                    self.log_error = f"writing it failed: {exc.strerror or exc}"
                self._close_log()
        with self._lock:
            self._tail.add(data)
            self.total += len(data)

    def _close_log(self) -> None:
        if self._log_fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._log_fd)
            self._log_fd = None

    # --- lifecycle ---------------------------------------------------------------------------

    def request_stop(self, reason: str) -> bool:
        """Mark the job ``killed (reason)`` and start ending its group; False if not running."""
        with self._lock:
            if self.status != "running" or self.stored_log is not None:
                return False  # not running, or run by another process of the session
            self.status, self.reason, self._stop = "killed", reason, reason
        if self._group is not None:
            self._group.wake()
        return True

    def fail_to_start(self, error: str) -> None:
        with self._lock:
            self.status, self.reason = "failed", f"could not start: {error}"
            self.ended = time.monotonic()
            self.final_seen = True  # the start call already said so
        self._close_log()
        self.finished.set()
        self._ended()

    def _ended(self) -> None:
        if self.on_end is not None:
            try:
                self.on_end(self)
            except Exception:
                log.warning("could not record background job %s", self.id, exc_info=True)

    def finish(self, outcome: RunOutcome | None, note: NoteFn | None) -> None:
        with self._lock:
            if self.status == "running":
                if outcome is None:
                    self.status, self.reason = "failed", "supervision failed"
                elif outcome.ended_by != "exit":
                    self.status, self.reason = "killed", outcome.ended_by
                elif outcome.signal is not None:
                    self.status, self.reason = "failed", f"signal {outcome.signal}"
                else:
                    code = outcome.exit_code
                    self.status = "done" if code == 0 else "failed"
                    self.reason = f"exit code {code}"
            if outcome is not None and outcome.ended_by == "exit":
                self.exit_code = outcome.exit_code
            self.ended = time.monotonic()
            tail = self._tail.data()
        self._close_log()
        if outcome is not None and outcome.pipe_held:
            self.notes.append(PIPE_NOTE)
        if note is not None:
            try:
                line = note(decode(tail), self.exit_code)
            except Exception:
                log.exception("the command wrapper's note failed for job %s", self.id)
                line = None
            if line:
                self.notes.append(f"[note: {line}]")
        self.finished.set()
        self._ended()

    # --- reading ---------------------------------------------------------------------------

    def read_new(self, max_bytes: int) -> Read:
        """Everything since the cursor (or the memory guard's head and tail), cursor moved."""
        with self._read_lock:
            with self._lock:
                final = self.finished.is_set()
                header = self._header()
                start, end = self.cursor, self.total
                log_error = self.log_error
            before: list[str] = []
            data: bytes | None = None
            text = ""
            if end > start and log_error is None and (self.log_path is not None or
                                                      self.stored_log is not None):
                try:
                    if end - start > max_bytes:
                        text = self._guarded(start, end, max_bytes)
                    else:
                        data = self._pread(start, end - start)
                except OSError as exc:
                    log_error = f"reading it failed: {exc.strerror or exc}"
            if end > start and log_error is not None:
                before.append(f"[job log unavailable: {log_error}; showing the last "
                              f"{TAIL_BYTES // 1024} KiB]")
                with self._lock:
                    tail, tail_start = self._tail.data(), self._tail.start
                data = tail[max(0, start - tail_start):][: end - max(start, tail_start)]
                start = max(start, tail_start)
            if data is not None:
                held = 0 if final else incomplete_utf8_suffix(data)
                text = decode(data[: len(data) - held])
                end = start + len(data) - held
            with self._lock:
                self.cursor = max(self.cursor, end)
                if final:
                    self.final_seen = True
            return Read(header, text, before, final, list(self.notes) if final else [])

    def _guarded(self, start: int, end: int, max_bytes: int) -> str:
        half = max_bytes // 2
        head = self._pread(start, half)
        tail = self._pread(end - (max_bytes - half), max_bytes - half)
        dropped = end - start - len(head) - len(tail)
        return f"{decode(head)}\n{dropped_marker(dropped)}\n{decode(tail)}"

    def _pread(self, offset: int, length: int) -> bytes:
        """``length`` bytes of the log at ``offset``: the file, or a restored job's stored
        log (whose first ``log_dropped`` bytes the store did not keep)."""
        if self.log_path is not None:
            return _pread(self.log_path, offset, length)
        if self._stored is None:
            assert self.stored_log is not None
            self._stored = self.stored_log()
        start = max(0, offset - self.log_dropped)
        return self._stored[start:start + length]

    def stored_tail(self) -> tuple[bytes, int]:
        """The end of the log the session store keeps, and how many bytes come before it."""
        if self.log_path is None:
            return b"", self.total
        size = os.path.getsize(self.log_path)
        keep = min(size, STORED_LOG_BYTES)
        return _pread(self.log_path, size - keep, keep), size - keep

    def record(self) -> Any:
        """The job as the session store keeps it (a `callgate.store.JobRecord`)."""
        from callgate.store import JobRecord

        with self._lock:
            ended = None if self.ended is None else self.started_at + (self.ended -
                                                                        self.started)
            return JobRecord("", self.id, self.command, self.label, self.status,
                             self.reason or None, self.exit_code, self.started_at, ended,
                             self.cursor, self.total, self.log_dropped)

    @classmethod
    def restored(cls, record: Any, storage: Any) -> Job:
        """A job of an earlier process of the session, from its record."""
        kind = record.job_id.rsplit("-", 1)[0]
        job = cls(record.job_id, kind, record.label or record.command, record.command)
        job.status, job.reason, job.exit_code = record.status, record.reason or "", \
            record.exit_code
        job.started_at = record.started
        job.started = time.monotonic() - max(0.0, time.time() - record.started)
        job.ended = job.started + ((record.ended or record.started) - record.started)
        job.total, job.cursor, job.log_dropped = record.log_bytes, record.cursor, \
            record.log_dropped
        job.final_seen = job.announced = True  # its end is no news to this process
        if record.status == "running":  # another live process of the session runs it
            job.status, job.reason = "running", "in another process of this session"
        job.stored_log = lambda: storage.job_log(record.job_id) or b""
        job.finished.set()
        return job


def _pread(path: str, offset: int, length: int) -> bytes:
    """``length`` bytes of the log at ``offset`` (fewer at its end); portable, unlike os.pread."""
    with open(path, "rb") as fh:
        fh.seek(offset)
        return fh.read(length)




class JobTable:
    """The background jobs of one session (``session.extension(JOBS)``; its ``jobs()`` lists them).

    Ids ``<tool>-N`` come from one counter per session, never reused. Closing
    the table (at session end) ends every running job and removes the log dir.
    """

    def __init__(self, session: Any) -> None:
        self._session = session
        self._lock = threading.Lock()
        self._jobs: dict[str, Job] = {}
        self._counter = 0
        self._dir: str | None = None
        self._dir_error: str | None = None
        self._closed = False
        self._storage = session.storage
        for record in self._storage.jobs():  # a resumed session's earlier jobs
            job = Job.restored(record, self._storage)
            self._jobs[job.id] = job
            number = record.job_id.rsplit("-", 1)[-1]
            if number.isdigit():
                self._counter = max(self._counter, int(number))
        _LIVE.add(self)

    def __call__(self) -> list[dict[str, Any]]:
        """A summary of every job, in id order (for dashboards)."""
        return [job.summary() for job in self.jobs()]

    def snapshot(self) -> dict[str, Any]:
        """Every job's `Job.snapshot` and the log directory, as JSON
        (``await session.snapshot(JOBS)``: from a remote session's worker too)."""
        return {"directory": self._dir, "jobs": [job.snapshot() for job in self.jobs()]}

    def jobs(self) -> list[Job]:
        with self._lock:
            return list(self._jobs.values())

    def get(self, job_id: str) -> Job | None:
        with self._lock:
            return self._jobs.get(job_id)

    def running(self) -> list[Job]:
        return [job for job in self.jobs() if job.running]

    @property
    def directory(self) -> str | None:
        return self._dir

    # --- starting ---------------------------------------------------------------------

    def reserve(self, kind: str, label: str, command: str, max_running: int,
                call_id: str | None = None) -> Job | str:
        """A new job in state ``running`` (a slot held), or the reason it cannot start."""
        with self._lock:
            if self._closed:
                return "the session is closing; no new background jobs"
            running = sum(1 for j in self._jobs.values() if j.running)
            if running >= max_running:
                return (f"too many running background jobs ({running}); stop one with "
                        "job_kill or wait for one to finish")
            self._counter += 1
            job = Job(f"{kind}-{self._counter}", kind, label, command)
            job.start_call_id = call_id
            job.on_end = self._record_end
            self._jobs[job.id] = job
            if self._dir is None and self._dir_error is None:
                try:
                    self._dir = tempfile.mkdtemp(prefix="shell-jobs-",
                                                 dir=self._session.scratch_dir())
                    os.chmod(self._dir, 0o700)
                except OSError as exc:
                    self._dir_error = f"creating the job directory failed: {exc.strerror or exc}"
        job.open_log(self._dir, self._dir_error)
        self._storage.put_job(job.record())
        return job

    def _record_end(self, job: Job) -> None:
        """A job ended: its final state and the end of its log go to the session store."""
        if not self._storage.durable:
            return
        data, dropped = job.stored_tail()
        job.log_dropped = dropped
        self._storage.put_job(job.record(), data)

    def read(self, job: Job, max_bytes: int) -> Read:
        """``job.read_new``, the cursor recorded (a resumed session continues from it)."""
        read = job.read_new(max_bytes)
        if job.finished.is_set():
            self._storage.job_read(job.id, job.cursor)
        return read

    def launch(self, job: Job, launch: process.Prepared, *, reap_leftovers: bool,
               lifetime_ms: int) -> None:
        """Start ``job``'s process group and its supervisor thread; raises `OSError`."""
        try:
            group = start_group(launch, job.add_output, reap_leftovers=reap_leftovers)
        except OSError as exc:
            job.fail_to_start(os_error_text(exc))
            raise
        job._group = group
        job.pid = group.pid
        deadline = group.started + lifetime_ms / 1000 if lifetime_ms > 0 else None
        thread = threading.Thread(target=self._supervise, args=(job, group, deadline, launch.note),
                                  name=f"callgate-shell-{job.id}", daemon=True)
        job._thread = thread
        thread.start()

    def _supervise(self, job: Job, group: ProcessGroup, deadline: float | None,
                   note: NoteFn | None) -> None:
        outcome: RunOutcome | None = None
        try:
            outcome = group.run(deadline=deadline, deadline_reason="max lifetime exceeded",
                                stop=lambda: job._stop)
        except Exception:
            log.exception("supervising background job %s failed", job.id)
        job.finish(outcome, note)
        if job.announceable:
            with contextlib.suppress(Exception):
                self._session.notices.put(NOTICE_SOURCE, self.notice)

    # --- the finished-job notice -----------------------------------------------------

    def results_delivered(self, call_ids: Any) -> None:
        """A batch's results reached the model (``callgate_results_delivered``): the jobs
        those calls started may be announced from the next batch on."""
        ids = set(call_ids)
        with self._lock:
            for job in self._jobs.values():
                if job.start_call_id in ids:
                    job.start_delivered = True

    def notice(self) -> str | None:
        """What is news when the notice is delivered: jobs that ended since the last look.

        A job whose start result is not delivered yet (it is in this same batch) waits
        for the next batch: the model has not seen its id yet (the core delivers notices
        with the first result of a batch; ``callgate_results_delivered`` comes after the
        whole batch).
        """
        news, deferred = [], False
        for job in self.jobs():
            with job._lock:
                if not job.announceable:
                    continue
                if job.start_call_id is not None and not job.start_delivered:
                    deferred = True
                    continue
                job.announced = True
                news.append(f"{job.id} ({job.label}) {job.status} ({job.reason})")
        if deferred:
            with contextlib.suppress(Exception):
                self._session.notices.put(NOTICE_SOURCE, self.notice)
        if not news:
            return None
        return ("[background jobs finished since your last call: " + "; ".join(news)
                + " — read output with job_output(job_id=...)]")

    # --- closing ---------------------------------------------------------------------

    def close(self, timeout: float = CLOSE_TIMEOUT_S) -> None:
        """End every running job (≤ ``timeout`` in all) and remove the job directory."""
        with self._lock:
            self._closed = True
            jobs = list(self._jobs.values())
        for job in jobs:
            job.request_stop("session closed")
        deadline = time.monotonic() + timeout
        for job in jobs:
            if job._thread is not None:
                job._thread.join(max(0.0, deadline - time.monotonic()))
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
        _LIVE.discard(self)

    def kill_now(self) -> None:
        """Last resort at interpreter exit: SIGKILL every running group, no waiting."""
        for job in self.jobs():
            if not job.finished.is_set() and job.pid is not None:
                with contextlib.suppress(OSError, AttributeError):
                    os.killpg(job.pid, 9)


def os_error_text(exc: OSError) -> str:
    if exc.strerror and exc.filename:
        return f"{exc.strerror}: {exc.filename!r}"
    return exc.strerror or str(exc)


_LIVE: weakref.WeakSet[JobTable] = weakref.WeakSet()


@atexit.register
def _kill_leftover_jobs() -> None:
    # A host that never closed its sessions must not leave their jobs running.
    for table in list(_LIVE):
        table.kill_now()
