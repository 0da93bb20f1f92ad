"""What one session writes to the session store, and the state its plugins keep there.

`Journal` turns what the pipeline learns (a batch, a call starting, its shaped
result, the notices shown, a message the integrator records) into store ops,
within ``[sessions] record``:

- ``all``: calls, messages, notices, jobs, plugin state and the observation ledger;
- ``calls``: the same without messages;
- ``off``: nothing reaches the store; plugin state and the ledger live in memory and
  end with the process.

`SessionStorage` (``session.storage``) is the plugins' part of it: small JSON values
by namespace and key (goals, todos, presented files, subagent records), and
background jobs with their logs. Values are read from memory (loaded once on
resume); a `put` is committed before it returns, so a plugin may make a change
current only once it is stored.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from . import records as m

log = logging.getLogger("callgate.store")


def _not_recorded(entry: tuple[Any, ...]) -> None:
    """A journal that records no calls takes none (the pipeline does not offer them)."""


class Journal:
    """One session's recording (a session with ``record = "off"`` gets one that writes
    nothing: ``durable`` is false)."""

    def __init__(
        self,
        session_id: str,
        mode: str,
        recorder: Any | None = None,
        run: m.RunStarted | None = None,
    ) -> None:
        self.session_id = session_id
        self.mode = mode
        self.recorder = recorder
        self.run = run
        self.durable = recorder is not None and mode != "off"
        #: the pipeline records calls (a plain attribute: read on every batch)
        self.calls = self.durable
        self.messages = self.durable and mode == "all"
        # What the pipeline hands over for a call, as it is: ``(build, *references)``,
        # which the writer thread turns into ops (`BatchStarted`, `CallStarted`,
        # `CallEnded`, `NoticeRecorded`, `FactRecorded`) in their place in the queue
        # (`Recorder.defer`, which also wakes the writer: a running call's start is
        # committed within a few milliseconds, its end too): the event loop builds,
        # formats, encodes and hashes nothing for the record. Attributes, not methods: one
        # call on the loop, not two.
        defer: Callable[[tuple[Any, ...]], None] = (
            recorder.defer if self.calls else _not_recorded  # type: ignore[union-attr]
        )
        #: a batch and its calls, before any of them runs
        self.call_started = defer
        #: a call's shaped result and the notices shown with it
        self.call_ended = defer
        #: an executed writer's or destructive call's execution fact (with its calls)
        self.fact = defer
        #: the session's result store (set with it): the writer thread links a call's
        #: stored result to its record (`link`) and, after committing the session's call
        #: ends, runs its `settle` (`Recorder.after_commit`)
        self.results: Any | None = None

    @property
    def store(self) -> Any | None:
        return self.recorder.store if self.recorder is not None else None

    def submit(self, op: Any) -> None:
        if self.durable:
            assert self.recorder is not None
            self.recorder.submit(op)

    def flush(self) -> None:
        """Wait until everything this process queued is committed (raises `StoreError`)."""
        if self.recorder is not None:
            self.recorder.flush()

    # --- calls (the pipeline: `call_started`, `call_ended`, `fact` above) -----------------

    # --- the integrator ---------------------------------------------------------------------

    def message(self, role: str, text: str) -> None:
        if self.messages:
            self.submit(m.MessageRecorded(self.session_id, role, text, time.time()))
            self.recorder.kick()  # type: ignore[union-attr]


class SessionStorage:
    """``session.storage``: what a session's plugins keep in the store.

    State values are JSON-compatible (``None`` deletes). Reads come from memory;
    `put` and `delete` are committed before they return (`callgate.store.StoreError`
    if the store cannot take them; the value in memory is then unchanged). With
    ``[sessions] record = "off"`` the values live in memory only (``durable`` is
    false) and end with the process.
    """

    def __init__(
        self,
        journal: Journal,
        state: dict[tuple[str, str], Any] | None = None,
        jobs: Sequence[m.JobRecord] = (),
    ) -> None:
        self._journal = journal
        self._lock = threading.Lock()
        self._state: dict[tuple[str, str], Any] = dict(state or {})
        self._jobs = {job.job_id: job for job in jobs}

    @property
    def durable(self) -> bool:
        """Whether values survive the process (the session records into a store)."""
        return self._journal.durable

    # --- state --------------------------------------------------------------------------

    def get(self, namespace: str, key: str, default: Any = None) -> Any:
        with self._lock:
            return self._state.get((namespace, key), default)

    def has(self, namespace: str, key: str) -> bool:
        with self._lock:
            return (namespace, key) in self._state

    def items(self, namespace: str) -> dict[str, Any]:
        """Every key of ``namespace`` and its value."""
        with self._lock:
            return {k: v for (ns, k), v in self._state.items() if ns == namespace}

    def put(self, namespace: str, key: str, value: Any) -> None:
        """Store ``value`` (``None`` deletes), committed before this returns."""
        if self._journal.durable:
            op = m.StatePut(self._journal.session_id, namespace, key, value)
            self._journal.submit(op)
            self._journal.flush()
            if op.error is not None:
                store = self._journal.store
                where = store.location if store is not None else "the session store"
                raise m.StoreError(
                    f"session store {where} did not take {namespace}/{key}: {op.error}", where
                ) from op.error
        with self._lock:
            if value is None:
                self._state.pop((namespace, key), None)
            else:
                self._state[(namespace, key)] = value

    def delete(self, namespace: str, key: str) -> None:
        self.put(namespace, key, None)

    # --- background jobs ----------------------------------------------------------------

    def jobs(self) -> list[m.JobRecord]:
        """The jobs recorded for this session by earlier processes (as restored)."""
        with self._lock:
            return list(self._jobs.values())

    def job_log(self, job_id: str) -> bytes | None:
        """The stored log of a recorded job (``None`` if it has none)."""
        store = self._journal.store
        if not self._journal.durable or store is None:
            return None
        return store.job_log(self._journal.session_id, job_id)

    def put_job(
        self, job: m.JobRecord, log_data: bytes | None = None, *, wait: bool = False
    ) -> None:
        """Record a job's state (and, with ``log_data``, its whole log)."""
        if not self._journal.durable:
            return
        assert self._journal.run is not None
        self._journal.submit(m.JobPut(self._journal.session_id, job, self._journal.run, log_data))
        if wait:
            self._journal.flush()
        else:
            self._journal.recorder.kick()  # type: ignore[union-attr]

    def job_read(self, job_id: str, cursor: int) -> None:
        """The model has read a recorded job's log up to ``cursor``."""
        with self._lock:
            job = self._jobs.get(job_id)
            if job is not None:
                import attrs

                self._jobs[job_id] = attrs.evolve(job, cursor=max(job.cursor, cursor))
        if self._journal.durable:
            self._journal.submit(m.JobCursor(self._journal.session_id, job_id, cursor))
            self._journal.recorder.kick()  # type: ignore[union-attr]
