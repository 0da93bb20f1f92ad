"""A session's background-job table as tests read it, wherever the session's tools run
(issue 37): the table object itself for a local session; for a session on a worker
(``pytest --executor=bwrap-worker``), a view that reads the worker's table through
`callgate.Session.snapshot` on every read, as reading the live object would."""

from __future__ import annotations

import time
from typing import Any


def jobs_of(s: Any) -> Any:
    """The session's job table, wherever its tools run: the table object itself for a
    local session, else a `RemoteJobs` view that reads the worker's table through
    `Session.snapshot` (``pytest --executor=bwrap-worker``: the jobs live there)."""
    from callgate._executor.remote import RemoteExecutor
    from callgate_shell import JOBS

    if isinstance(s.session.executor, RemoteExecutor):
        return RemoteJobs(s)
    return s.session.extension(JOBS)


class RemoteJobs:
    """A job table read through snapshots: every read is fresh, as the object's is."""

    def __init__(self, s: Any) -> None:
        self._s = s

    def snapshot(self) -> dict[str, Any]:
        from callgate_shell import JOBS

        return self._s.sync.snapshot(JOBS)  # type: ignore[no-any-return]

    def __call__(self) -> list[dict[str, Any]]:
        return list(self.snapshot()["jobs"])

    def get(self, job_id: str) -> RemoteJob | None:
        found = any(job["id"] == job_id for job in self.snapshot()["jobs"])
        return RemoteJob(self, job_id) if found else None

    @property
    def directory(self) -> str | None:
        return self.snapshot()["directory"]  # type: ignore[no-any-return]


class RemoteJob:
    """One job of a `RemoteJobs`: each attribute read asks the worker again."""

    def __init__(self, table: RemoteJobs, job_id: str) -> None:
        self._table = table
        self.id = job_id

    def _fields(self) -> dict[str, Any]:
        return next(j for j in self._table.snapshot()["jobs"] if j["id"] == self.id)

    def __getattr__(self, name: str) -> Any:
        if name == "finished":
            return _Finished(self)
        fields = self._fields()
        if name not in fields:
            raise AttributeError(name)
        return fields[name]


class _Finished:
    def __init__(self, job: RemoteJob) -> None:
        self._job = job

    def is_set(self) -> bool:
        return bool(self._job._fields()["finished"])

    def wait(self, timeout: float | None = None) -> bool:
        deadline = time.monotonic() + (30.0 if timeout is None else timeout)
        while not self.is_set():
            if time.monotonic() > deadline:
                return False
            time.sleep(0.05)
        return True
