"""What every session-store backend does the same way, whatever its database: public in
`callgate.store` so the SQLite backend here and a backend in another package (the
PostgreSQL one) share one copy.

- `entry_from_row`: a timeline row (`ENTRY_COLUMNS`, in that order) as its record.
- `result_facts`: a finished call's result reference, SHA-256 and size.
- `owned_by`: the SQL condition keeping one principal's sessions.
- `json_or_text`, `preview_of`: stored JSON back as a value, a session's one-line preview.
- `proc_start`, `process_alive`: whether the process that recorded a run is still alive
  (to settle the runs of processes that died).
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

from . import records as m
from .principal import is_local

#: How many characters a session's preview (its first message, else its first call) keeps.
PREVIEW_CHARS = 200

#: The columns of a timeline row, in the order `entry_from_row` reads them (a backend's
#: ``entries`` query selects these).
ENTRY_COLUMNS = (
    "kind",
    "session",
    "seq",
    "role",
    "at",
    "batch",
    "position",
    "origin",
    "call_id",
    "name",
    "tool",
    "arguments",
    "ended",
    "outcome",
    "is_error",
    "signature",
    "permission",
    "decided_by",
    "text",
    "shown",
    "result_ref",
    "result_bytes",
    "result_sha256",
)


def entry_from_row(row: tuple[Any, ...]) -> m.Entry:
    """A timeline row (`ENTRY_COLUMNS`) as a `MessageRecord`, `NoticeRecord` or `CallRecord`."""
    kind = row[0]
    if kind == "message":
        return m.MessageRecord(row[1], row[2], row[3] or "", row[18] or "", row[4])
    if kind == "notice":
        return m.NoticeRecord(row[1], row[2], row[18] or "", row[4])
    (
        _,
        session,
        seq,
        _role,
        at,
        batch,
        position,
        origin,
        call_id,
        name,
        tool,
        arguments,
        ended,
        outcome,
        is_error,
        signature,
        permission,
        decided_by,
        text,
        shown,
        ref,
        size,
        sha,
    ) = row
    return m.CallRecord(
        session,
        seq,
        call_id or "",
        name or "",
        tool,
        json_or_text(arguments),
        batch or 0,
        position or 0,
        origin,
        at,
        ended,
        None if ended is None else round((ended - at) * 1000, 3),
        outcome or m.RUNNING,
        bool(is_error),
        signature,
        permission,
        decided_by,
        text,
        shown,
        ref,
        size,
        sha,
    )


def result_facts(call_id: str, end: m.CallEnded) -> tuple[str, str, int]:
    """``(result_ref, sha256, bytes)`` of a finished call's result text."""
    data = end.text.encode("utf-8", "surrogatepass")
    return m.result_ref(call_id, end.result_seq, data), hashlib.sha256(data).hexdigest(), len(data)


def owned_by(
    principal: str | None, column: str = "principal", placeholder: str = "?"
) -> tuple[str, tuple[str, ...]]:
    """``(" AND <condition>", params)`` keeping the sessions of ``principal`` (those recorded
    before principals, NULL, count as the local users'); ``("", ())`` for ``None``.
    ``placeholder`` is the driver's parameter marker (``?``, ``%s``)."""
    if principal is None:
        return "", ()
    if is_local(principal):
        return f" AND ({column} = {placeholder} OR {column} IS NULL)", (principal,)
    return f" AND {column} = {placeholder}", (principal,)


def json_or_text(text: str | None) -> Any:
    """A stored JSON text as its value (text that is not JSON as itself; NULL as None)."""
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text


def preview_of(text: str) -> str:
    """``text`` on one line, cut to `PREVIEW_CHARS` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= PREVIEW_CHARS else flat[: PREVIEW_CHARS - 1] + "…"


def proc_start(pid: int) -> str | None:
    """When process ``pid`` started (Linux: ``/proc/<pid>/stat`` field 22), to tell a reused
    pid from the process that recorded it; ``None`` where it cannot be known."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            raw = fh.read()
    except OSError:
        return None
    fields = raw[raw.rfind(b")") + 2 :].split()
    return fields[19].decode() if len(fields) > 19 else None


def process_alive(pid: int, started: str | None) -> bool:
    """Whether process ``pid`` (started at ``started``, from `proc_start`) still runs."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    if started is not None:
        now = proc_start(pid)
        if now is not None and now != started:
            return False  # the pid was reused
    return True


__all__ = [
    "ENTRY_COLUMNS",
    "PREVIEW_CHARS",
    "entry_from_row",
    "json_or_text",
    "owned_by",
    "preview_of",
    "proc_start",
    "process_alive",
    "result_facts",
]
