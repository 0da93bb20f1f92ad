"""What every session-store backend needs the same way (`callgate.store`'s backend kit):
the SQLite backend uses it, and so does any other (callgate-store-postgres).

- `proc_start`, `process_alive`: whether the process a run records is still the one
  alive under its pid (a backend's `recover` settles the runs of dead ones).
- `json_value`: a stored JSON text back as its value (a text that is not JSON as itself).
- `preview`: a session's one-line preview.
- `principal_filter`: the SQL condition that keeps one principal's sessions.
- `result_facts`: a finished call's result reference, digest and size.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

from . import records as m
from .principal import is_local

#: the characters a session's preview keeps (`preview`)
PREVIEW_CHARS = 200


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
    """Whether process ``pid`` runs and (when ``started`` is known) is the one that started
    then, not a later process given the same pid."""
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


def json_value(text: str | None) -> Any:
    """A stored JSON text's value (``None`` for none; a text that is not JSON, as it is)."""
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text


def preview(text: str, chars: int = PREVIEW_CHARS) -> str:
    """``text`` on one line, at most ``chars`` characters (an ellipsis ends a longer one)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= chars else flat[: chars - 1] + "…"


def principal_filter(
    principal: str | None, column: str = "principal", placeholder: str = "?"
) -> tuple[str, tuple[str, ...]]:
    """``(" AND <condition>", params)`` keeping the sessions of ``principal`` (those recorded
    before principals, NULL, count as the local users'); ``("", ())`` for ``None``.
    ``placeholder`` is the driver's parameter mark (``?``, ``%s``)."""
    if principal is None:
        return "", ()
    if is_local(principal):
        return f" AND ({column} = {placeholder} OR {column} IS NULL)", (principal,)
    return f" AND {column} = {placeholder}", (principal,)


def result_facts(call_id: str, end: m.CallEnded) -> tuple[str, str, int]:
    """``(result_ref, sha256, bytes)`` of a finished call's whole result text."""
    data = end.text.encode("utf-8", "surrogatepass")
    return m.result_ref(call_id, end.result_seq, data), hashlib.sha256(data).hexdigest(), len(data)


__all__ = [
    "PREVIEW_CHARS",
    "json_value",
    "preview",
    "principal_filter",
    "proc_start",
    "process_alive",
    "result_facts",
]
