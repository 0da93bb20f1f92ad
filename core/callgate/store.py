"""The session store: every session's record, kept across processes (docs/sessions.md).

One small interface, `SessionStore`, with SQLite as the default backend (one
file under `callgate.paths.state_dir`, or ``[sessions] store``; the
``callgate-store-sqlite`` distribution, which ``callgate[all]`` installs: without any
backend a host keeps its sessions in memory only). A backend is one
module: a class with the methods below, opened by a function registered under
the ``callgate.stores`` entry-point group for its URL scheme
(``postgresql = "my_pkg.store:open_store"`` serves ``[sessions] store =
"postgresql://..."``); it must pass the contract tests in ``tests/core/store``.

Writing is the host's: it queues ops (`RunStarted` ... `ResultsTrimmed`, and
`FactRecorded` for each executed writer's or destructive call's execution fact) and a
writer thread hands them to `SessionStore.write` a group at a time. Reading is
for everyone: the session tools, ``callgate sessions``, a web page::

    from callgate.store import open_store

    store = open_store()                     # the default location
    for info in store.sessions(limit=10):    # newest first
        print(info.id, info.workspace, info.calls, info.preview)
    for entry in store.entries(info.id):     # its timeline: messages, calls, notices
        ...
    hits = store.search("stale edit", workspaces=[info.workspace])

Every session records its principal (``SessionInfo.principal``: the operating-system user,
``local_principal()``, unless the integrator names another); the session tools and resuming
see only their own principal's sessions (``visible_to``, and ``principal=`` of `sessions`,
`session` and `search`).

What every backend does the same way whatever its database is here to share (the
backend kit): `entry_from_row` (a timeline row, `ENTRY_COLUMNS`, as its record),
`result_facts`, `owned_by` (one principal's sessions as SQL), `json_or_text`,
`preview_of`, `proc_start` and `process_alive`.

``open_reader(location)`` opens it only to read (a viewer such as ``callgate ui``): the
SQLite file read-only, nothing created or changed, writes refused.

Sessions open on a host record into it automatically (``[sessions] record``);
``host.open_session(workspace, resume=ID)`` continues one.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

from ._store.names import (
    ENTRY_KINDS,
    HOST_EXITED,
    INTERRUPTED,
    RECORD_MODES,
    RUNNING,
    SEARCH_KINDS,
    StoreError,
    UnknownSession,
)

if TYPE_CHECKING:
    from ._store.kit import (
        ENTRY_COLUMNS,
        entry_from_row,
        json_or_text,
        owned_by,
        preview_of,
        proc_start,
        process_alive,
        result_facts,
    )
    from ._store.locations import (
        ENTRY_POINT_GROUP,
        default_location,
        open_reader,
        open_store,
        resolve_location,
    )
    from ._store.principal import LOCAL_PREFIX, local_principal, visible_to
    from ._store.records import (
        BatchStarted,
        CallEnded,
        CallRecord,
        CallStarted,
        Entry,
        FactRecord,
        FactRecorded,
        JobCursor,
        JobPut,
        JobRecord,
        LedgerPut,
        MessageRecord,
        MessageRecorded,
        NoticeRecord,
        NoticeRecorded,
        Op,
        PruneReport,
        Restored,
        ResultsTrimmed,
        RunEnded,
        RunStarted,
        SearchHit,
        SessionClosed,
        SessionInfo,
        SessionOpened,
        StatePut,
        result_ref,
    )

#: Where each name not defined above lives; imported on first use, so that importing
#: ``callgate.store`` (plugins do at boot) costs nothing on a cold start.
_LAZY = {
    **dict.fromkeys(
        (
            "BatchStarted",
            "CallEnded",
            "CallRecord",
            "CallStarted",
            "Entry",
            "FactRecord",
            "FactRecorded",
            "JobCursor",
            "JobPut",
            "JobRecord",
            "LedgerPut",
            "MessageRecord",
            "MessageRecorded",
            "NoticeRecord",
            "NoticeRecorded",
            "Op",
            "PruneReport",
            "Restored",
            "ResultsTrimmed",
            "RunEnded",
            "RunStarted",
            "SearchHit",
            "SessionClosed",
            "SessionInfo",
            "SessionOpened",
            "StatePut",
            "result_ref",
        ),
        "._store.records",
    ),
    **dict.fromkeys(
        ("ENTRY_POINT_GROUP", "default_location", "open_reader", "open_store", "resolve_location"),
        "._store.locations",
    ),
    **dict.fromkeys(("LOCAL_PREFIX", "local_principal", "visible_to"), "._store.principal"),
    **dict.fromkeys(
        (
            "ENTRY_COLUMNS",
            "entry_from_row",
            "json_or_text",
            "owned_by",
            "preview_of",
            "proc_start",
            "process_alive",
            "result_facts",
        ),
        "._store.kit",
    ),
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'callgate.store' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __package__), name)
    globals()[name] = value
    return value


#: The search kinds ``history`` looks at unless told otherwise.
DEFAULT_SEARCH_KINDS = ("user_text", "assistant_text", "tool_input", "tool_error")


class SessionStore(Protocol):
    """The store's interface (structural: a backend implements it, never inherits it).

    ``location`` names the store in every message (a path or a URL). Reads return the
    records of `callgate.store`; a session is named by its id (or, for `session`, its
    name or a unique id prefix of 8 or more characters).
    """

    location: str

    # --- writing (the host's writer thread) ---------------------------------------------

    def write(self, ops: Sequence[Op]) -> None:
        """Apply ``ops`` in order, in one transaction; fill in what they ask the store for
        (``RunStarted.row``, ``BatchStarted.number``, ``CallStarted.row``) and mark
        ``CallEnded.committed``. Raises `StoreError`; nothing of the group is applied then."""
        ...

    def recover(self) -> int:
        """Settle runs of processes that died: their running calls become ``interrupted``,
        running jobs ``killed (host exited)``, open sessions ``interrupted``."""
        ...

    def close(self) -> None:
        """Close connections; a later call opens them again."""
        ...

    # --- sessions -----------------------------------------------------------------------

    def session(
        self, key: str, *, prefix: bool = True, principal: str | None = None
    ) -> SessionInfo | None:
        """The session with this id or name (or a unique id prefix); of ``principal``
        only, when given (sessions recorded before principals count as local users')."""
        ...

    def session_for_directory(self, directory: str, workspace: str) -> SessionInfo | None:
        """The top-level session last opened on this session directory and workspace."""
        ...

    def sessions(
        self,
        *,
        workspace: str | None = None,
        limit: int | None = None,
        children: bool = False,
        principal: str | None = None,
    ) -> list[SessionInfo]:
        """Newest first; of one workspace; top-level sessions unless ``children``; of
        ``principal`` only, when given."""
        ...

    def children(self, session: str) -> list[SessionInfo]: ...

    def restore(self, session: str) -> Restored:
        """What resuming needs (state, ledger, jobs, result totals); `UnknownSession`."""
        ...

    # --- a session's timeline and parts ----------------------------------------------------

    def entries(
        self,
        session: str,
        *,
        after: int = 0,
        before: int | None = None,
        limit: int | None = None,
        kinds: Sequence[str] = ENTRY_KINDS,
    ) -> list[Entry]:
        """Messages, calls and notices in timeline order (``seq``), after ``after``."""
        ...

    def calls(
        self, session: str, *, after: int = 0, limit: int | None = None
    ) -> list[CallRecord]: ...

    def call_results(self, session: str, call_id: str) -> list[tuple[int, str, int, str, bool]]:
        """``(row, result_ref, bytes, sha256, retained)`` of the finished calls ``call_id``."""
        ...

    def result_by_ref(self, session: str, ref: str) -> tuple[int, str, int, str, bool] | None:
        """``(row, call_id, bytes, sha256, retained)`` of the result ``ref``."""
        ...

    def result_text(self, row: int) -> str | None:
        """A call's complete result (``None`` once dropped)."""
        ...

    def state(self, session: str) -> dict[tuple[str, str], Any]: ...

    def state_value(self, session: str, namespace: str, key: str) -> Any:
        """One state value (``None`` when absent): a point read, for a caller that checks
        one fact often (which process holds a session) and must not decode all of them."""

    def ledger(self, session: str) -> dict[str, Any]: ...

    def jobs(self, session: str) -> list[JobRecord]: ...

    def job_log(self, session: str, job_id: str) -> bytes | None: ...

    def facts(self, session: str) -> list[FactRecord]:
        """The execution facts of the writer and destructive calls ``session`` ran, oldest
        first (a call the gate refused never ran and has none)."""
        ...

    # --- search and upkeep ----------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        workspaces: Sequence[str] | None = None,
        kinds: Sequence[str] = DEFAULT_SEARCH_KINDS,
        tool: str | None = None,
        sessions: Sequence[str] | None = None,
        limit: int = 8,
        principal: str | None = None,
    ) -> list[SearchHit]:
        """Ranked full-text matches of ``query``'s words, best first, with snippets; in
        ``principal``'s sessions only, when given."""
        ...

    def prune(
        self, *, keep_days: float | None, max_bytes: int | None, now: float | None = None
    ) -> PruneReport:
        """Delete ended sessions older than ``keep_days``, then the oldest ended ones until
        the store holds at most ``max_bytes``."""
        ...

    def size_bytes(self) -> int: ...

    def integrity_check(self) -> str:
        """``"ok"``, or what is wrong."""
        ...


__all__ = [
    "DEFAULT_SEARCH_KINDS",
    "ENTRY_COLUMNS",
    "ENTRY_KINDS",
    "ENTRY_POINT_GROUP",
    "HOST_EXITED",
    "INTERRUPTED",
    "LOCAL_PREFIX",
    "RECORD_MODES",
    "RUNNING",
    "SEARCH_KINDS",
    "BatchStarted",
    "CallEnded",
    "CallRecord",
    "CallStarted",
    "Entry",
    "FactRecord",
    "FactRecorded",
    "JobCursor",
    "JobPut",
    "JobRecord",
    "LedgerPut",
    "MessageRecord",
    "MessageRecorded",
    "NoticeRecord",
    "NoticeRecorded",
    "Op",
    "PruneReport",
    "Restored",
    "ResultsTrimmed",
    "RunEnded",
    "RunStarted",
    "SearchHit",
    "SessionClosed",
    "SessionInfo",
    "SessionOpened",
    "SessionStore",
    "StatePut",
    "StoreError",
    "UnknownSession",
    "default_location",
    "entry_from_row",
    "json_or_text",
    "local_principal",
    "open_reader",
    "open_store",
    "owned_by",
    "preview_of",
    "proc_start",
    "process_alive",
    "resolve_location",
    "result_facts",
    "result_ref",
    "visible_to",
]
