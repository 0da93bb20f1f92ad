"""`SubagentBook` (``session.extension(SUBAGENTS)``): this conversation's child records.

Records live in the session store (``session.storage``, namespace ``subagents``, one
value per ref), committed when a child starts and when it ends; a session directory
from before the store may hold them as ``subagents/<ref>.json``, imported once when
first asked for. A reference is honoured only by the session that holds it and
only for the same workspace, and ``continue_from`` only through the tool that started
the child, which then runs with the profile the child was started with (`profile_of`):
a strict read-only child never continues with its caller's wider profile. A record
found ``running`` that this session did not start belongs to a host that stopped
mid-run: it reads as cancelled, ``interrupted`` and retryable (and is rewritten so).
"""

from __future__ import annotations

import json
import logging
import os
import re
import secrets
import threading
from datetime import UTC, datetime
from typing import Any

import attrs
from callgate import ChildProfile, ToolError
from callgate.store import StoreError

from ._model import SubagentOutcome, SubagentRecord

log = logging.getLogger("callgate.tasks")

NAMESPACE = "subagents"
_REF = re.compile(r"sa_[0-9a-f]{1,64}")


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def subagent_error(code: str, message: str, kind: str = "tool_error") -> ToolError:
    return ToolError(kind, f"SUBAGENT_{code}: {message}", f"SUBAGENT_{code}")


class SubagentBook:
    """The child records of one session."""

    def __init__(self, session: Any) -> None:
        self._workspace = session.workspace.root
        self._storage = session.storage
        self._dir = os.path.join(session.directory, "subagents") if session.directory else None
        self._lock = threading.Lock()
        self._records: dict[str, SubagentRecord] = {}

    # --- lifecycle of a record ------------------------------------------------------

    def start(self, description: str, *, tool: str | None = None,
              profile: ChildProfile | None = None) -> SubagentRecord:
        """A new record (fresh ref, ``running``), written before the child runs; ``tool``
        started it and ``profile`` is the child's own (what a continuation runs with)."""
        record = SubagentRecord(ref="sa_" + secrets.token_hex(8), description=description,
                                status="running", retryable=False, error_code=None, answer=None,
                                state=None, attempts=1, workspace=self._workspace,
                                created_at=utc_now(), finished_at=None, tool=tool,
                                profile=profile_json(profile) if profile is not None else None)
        self._store(record)
        return record

    def restart(self, record: SubagentRecord, description: str) -> SubagentRecord:
        """The same ref run again (``continue_from``): one more attempt, ``running`` again;
        its tool and profile stay."""
        again = attrs.evolve(record, description=description, status="running",
                             retryable=False, error_code=None,
                             attempts=record.attempts + 1, finished_at=None)
        self._store(again)
        return again

    def finish(self, record: SubagentRecord, outcome: SubagentOutcome) -> SubagentRecord:
        done = attrs.evolve(record, status=outcome.status, retryable=outcome.is_retryable,
                            error_code=outcome.error_code, answer=outcome.answer,
                            state=outcome.state, finished_at=utc_now())
        self._store(done)
        return done

    # --- lookups ----------------------------------------------------------------------------

    def find(self, ref: str) -> SubagentRecord:
        """This conversation's record ``ref``, or a ``not_found`` error."""
        with self._lock:
            record = self._records.get(ref)
        if record is None:
            record = self._load(ref)
        if record is None or record.workspace != self._workspace:
            raise subagent_error("NOT_FOUND", f"{ref} does not belong to this conversation; "
                                 "use a reference printed by task or parallel_tasks here",
                                 "not_found")
        return record

    def readable(self, ref: str) -> SubagentRecord:
        """A finished record with an answer to page through."""
        record = self.find(ref)
        if record.status == "running":
            raise subagent_error("RUNNING", f"{ref} is still running")
        if not record.answer:
            raise subagent_error("NO_ANSWER",
                                 f"{ref} has no answer to read (status={record.status})")
        return record

    def continuable(self, ref: str, *, tool: str) -> SubagentRecord:
        """A finished, retryable record that ``continue_from`` of ``tool`` may run again:
        only the tool that started the child continues it (with `profile_of` the record)."""
        record = self.find(ref)
        if record.tool != tool or self.profile_of(record) is None:
            made = f"by {record.tool}" if record.tool else "before continuations were bound " \
                "to the tool that started them"
            again = f"continue it with {record.tool}" if record.tool else "start a new one"
            raise subagent_error("WRONG_TOOL", f"{ref} was started {made}, and a child is "
                                 f"continued only by the tool that started it, with its own "
                                 f"profile; {again}", "invalid_arguments")
        if record.status == "running":
            raise subagent_error("RUNNING", f"{ref} is still running")
        if record.status == "completed":
            raise subagent_error("ALREADY_COMPLETED", f"{ref} already completed; start a new "
                                 "task")
        if not record.retryable:
            raise subagent_error("NOT_RETRYABLE", f"{ref} is not retryable (status="
                                 f"{record.status} error_code={record.error_code})")
        return record

    @staticmethod
    def profile_of(record: SubagentRecord) -> ChildProfile | None:
        """The profile the child was started with (``None``: not recorded or unreadable)."""
        data = record.profile
        if not isinstance(data, dict):
            return None
        try:
            return ChildProfile(**{k: data[k] for k in PROFILE_FIELDS if k in data})
        except (TypeError, ValueError):
            return None

    # --- storage ----------------------------------------------------------------------------

    def _path(self, ref: str) -> str | None:
        return os.path.join(self._dir, f"{ref}.json") if self._dir else None

    def _store(self, record: SubagentRecord) -> None:
        """Commit the record (raises `callgate.store.StoreError` if the store cannot)."""
        self._storage.put(NAMESPACE, record.ref, _encoded(record))
        with self._lock:
            self._records[record.ref] = record

    def _load(self, ref: str) -> SubagentRecord | None:
        data = self._storage.get(NAMESPACE, ref)
        if data is None:
            data = self._import(ref)
        if data is None:
            return None
        try:
            record = SubagentRecord.from_json(data)
        except (ValueError, TypeError):
            log.warning("ignoring unreadable subagent record %s", ref, exc_info=True)
            return None
        if record.ref != ref:
            return None
        if record.status == "running":
            # Not started by this session: its host stopped while the child ran.
            record = attrs.evolve(record, status="cancelled", error_code="interrupted",
                                  retryable=True,
                                  finished_at=record.finished_at or utc_now())
            try:
                self._store(record)
            except (OSError, StoreError):
                log.warning("could not rewrite the interrupted record %s", ref, exc_info=True)
        with self._lock:
            self._records.setdefault(ref, record)
            return self._records[ref]

    def _import(self, ref: str) -> Any:
        """``subagents/<ref>.json`` of an old session directory, copied into the store."""
        path = self._path(ref)
        if path is None or not _REF.fullmatch(ref):
            return None
        try:
            with open(path, "rb") as fh:
                data = json.loads(fh.read())
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            log.warning("ignoring unreadable subagent record %s", path, exc_info=True)
            return None
        try:
            self._storage.put(NAMESPACE, ref, data)
        except (OSError, StoreError, TypeError, ValueError):
            log.warning("could not import the subagent record %s", path, exc_info=True)
        return data


PROFILE_FIELDS = ("name", "tools", "denied", "read_only", "mcp", "max_depth")


def profile_json(profile: ChildProfile) -> dict[str, Any]:
    """``profile`` as JSON (what `SubagentBook.profile_of` reads back)."""
    return {"name": profile.name,
            "tools": list(profile.tools) if profile.tools is not None else None,
            "denied": list(profile.denied), "read_only": profile.read_only,
            "mcp": profile.mcp, "max_depth": profile.max_depth}


def _encoded(record: SubagentRecord) -> dict[str, Any]:
    body = record.to_json()
    try:
        json.dumps(body)
    except (TypeError, ValueError):
        # A state the runner cannot serialize survives in memory only.
        body = {**body, "state": None}
    return body
