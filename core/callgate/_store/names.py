"""The session store's names that plugins need at boot: its errors and constants.

Kept apart from the records and ops (`_store.records`, some twenty attrs classes), so
that importing them costs nothing on a cold start.
"""

from __future__ import annotations

#: ``[sessions] record``: everything; calls, notices, jobs and state but not messages; nothing.
RECORD_MODES = ("all", "calls", "off")
#: What a history search may look at (``history kind[]``).
SEARCH_KINDS = ("user_text", "assistant_text", "tool_input", "tool_error", "tool_output")
#: A session's entries, in its timeline.
ENTRY_KINDS = ("message", "call", "notice")
#: A call's outcome while it runs, and after its process died mid-call.
RUNNING, INTERRUPTED = "running", "interrupted"
#: What a running job of a process that died reads as.
HOST_EXITED = "host exited"


class StoreError(Exception):
    """The session store cannot be used as asked (unknown session, a newer schema, a corrupt
    or unreadable file). The message names the store's file; nothing was changed."""

    def __init__(self, message: str, location: str | None = None) -> None:
        super().__init__(message)
        self.location = location


class UnknownSession(StoreError, LookupError):
    """``resume`` named a session the store does not hold."""


__all__ = [
    "ENTRY_KINDS",
    "HOST_EXITED",
    "INTERRUPTED",
    "RECORD_MODES",
    "RUNNING",
    "SEARCH_KINDS",
    "StoreError",
    "UnknownSession",
]
