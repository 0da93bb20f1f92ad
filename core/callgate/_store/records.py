"""What the session store holds (records a backend returns) and what is written to it (ops).

Records are what readers get back: the sessions plugin, ``callgate sessions``, a
web page, an export. Ops are what a running host writes; the recorder hands
them to the backend in order, several at a time, and the backend applies each
group in one short transaction (`SessionStore.write`). An op that needs a value
only the store can give (a call's position in its session, a batch's number)
refers to the op that asked for it (``CallEnded.start``), and the backend fills
it in when that op is applied (``CallStarted.row``).

Times are Unix seconds (floats); JSON values are stored as JSON text.
"""

from __future__ import annotations

from typing import Any

import attrs

from .._results.results import result_ref  # noqa: F401  (re-exported)
from .names import (  # noqa: F401  (re-exported)
    ENTRY_KINDS,
    HOST_EXITED,
    INTERRUPTED,
    RECORD_MODES,
    RUNNING,
    SEARCH_KINDS,
    StoreError,
    UnknownSession,
)

# --- records (what readers get) ------------------------------------------------------------


@attrs.frozen
class SessionInfo:
    """One session: who, where, when, and how much it holds.

    ``principal`` is who opened it: readers that answer a session (the session tools,
    resuming) show it only sessions of its own principal (`callgate.store.visible_to`).
    ``status`` is ``open`` (a process has it), ``closed`` or ``interrupted`` (its process
    died without closing it). ``preview`` is its first user message, else its first call."""

    id: str
    name: str | None
    workspace: str
    parent: str | None
    directory: str | None
    started: float
    ended: float | None
    status: str
    surface: str | None
    os: str | None
    platform: str | None
    record: str
    calls: int
    preview: str | None
    #: who opened it (`callgate.store.local_principal`, or an integrator's name such as a
    #: bearer token's); ``None`` for a session recorded before stores knew principals
    principal: str | None = None


@attrs.frozen
class CallRecord:
    """One tool call: as the model sent it, how it was judged, and its result.

    ``text`` is the complete shaped result (``None`` once dropped by ``[results]
    store_max_bytes``); ``shown`` is what the model saw when that was something else
    (a truncated result, notices appended). ``outcome`` is ``ok``, an error kind,
    ``running`` or ``interrupted``."""

    session: str
    seq: int
    call_id: str
    name: str
    tool: str | None
    arguments: Any
    batch: int
    position: int
    origin: str | None
    started: float
    ended: float | None
    duration_ms: float | None
    outcome: str
    is_error: bool
    signature: str | None
    permission: str | None
    decided_by: str | None
    text: str | None
    shown: str | None
    result_ref: str | None
    result_bytes: int | None
    result_sha256: str | None

    kind = "call"

    @property
    def seen(self) -> str | None:
        """The result as the model saw it."""
        return self.shown if self.shown is not None else self.text


@attrs.frozen
class MessageRecord:
    """A message the integrator recorded (``session.record_message(role, text)``)."""

    session: str
    seq: int
    role: str
    text: str
    at: float

    kind = "message"


@attrs.frozen
class NoticeRecord:
    """A notice the model was shown (with the first result of a batch)."""

    session: str
    seq: int
    text: str
    at: float

    kind = "notice"


Entry = CallRecord | MessageRecord | NoticeRecord


@attrs.frozen
class JobRecord:
    """A background job: what ran, how it ended, and its log (`SessionStore.job_log`)."""

    session: str
    job_id: str
    command: str
    label: str | None
    status: str
    reason: str | None
    exit_code: int | None
    started: float
    ended: float | None
    cursor: int = 0
    log_bytes: int = 0
    log_dropped: int = 0


@attrs.frozen
class FactRecord:
    """One executed writer or destructive call's execution fact (issue 36.11), as the
    session store keeps it: ``tool`` as it ran, ``profile`` (the child profile's name),
    ``depth``, the canonical ``paths`` its gate leased, ``destructive``, when it held them
    (``started``/``ended``, Unix seconds) and ``outcome`` (``"ok"`` or the error kind).
    A call the gate refused never ran and has none."""

    session: str
    call_id: str
    tool: str
    profile: str | None
    depth: int
    paths: tuple[str, ...]
    destructive: bool
    started: float
    ended: float
    outcome: str


@attrs.frozen
class SearchHit:
    """One history match: where it is (``session``, ``seq`` = its message index), what it is,
    its bm25 score (lower is better, as SQLite reports it) and a snippet."""

    session: str
    seq: int
    kind: str
    role: str
    tool: str | None
    score: float
    snippet: str
    at: float
    workspace: str


@attrs.frozen
class Restored:
    """What resuming a session gives back, read in one go."""

    info: SessionInfo
    state: dict[tuple[str, str], Any]
    ledger: dict[str, Any]
    jobs: list[JobRecord]
    result_seq: int
    result_bytes: int


@attrs.frozen
class PruneReport:
    sessions: int
    bytes_before: int
    bytes_after: int


# --- ops (what a host writes) --------------------------------------------------------------


@attrs.define(slots=True, eq=False)
class RunStarted:
    """A process began using the store (how a later open tells its calls were cut off)."""

    token: str
    pid: int
    hostname: str
    proc_start: str | None
    at: float
    row: int | None = None


@attrs.define(slots=True, eq=False)
class RunEnded:
    run: RunStarted
    at: float


@attrs.define(slots=True, eq=False)
class SessionOpened:
    """A new session, or (``resumed``) an existing one a process joins."""

    run: RunStarted
    id: str
    name: str | None
    workspace: str
    parent: str | None
    directory: str | None
    started: float
    surface: str | None
    os: str | None
    platform: str | None
    record: str
    resumed: bool = False
    #: who opens it (a resumed session keeps the principal it was recorded with)
    principal: str | None = None


@attrs.define(slots=True, eq=False)
class SessionClosed:
    session: str
    at: float


@attrs.define(slots=True, eq=False)
class BatchStarted:
    """One model turn; the store numbers it (``number``) within its session."""

    session: str
    number: int | None = None


@attrs.define(slots=True, eq=False)
class CallStarted:
    """A call entered the pipeline. ``end`` is set when its end is known before this op is
    applied (then one row is written whole); ``row`` is the stored row's id."""

    session: str
    batch: BatchStarted
    position: int
    call_id: str
    name: str
    arguments: Any
    origin: str | None
    started: float
    run: RunStarted
    end: CallEnded | None = None
    row: int | None = None


@attrs.define(slots=True, eq=False)
class CallEnded:
    """A call's shaped result. ``text`` is the complete text (the model saw ``shown`` when
    that differs); ``result_seq`` is the result store's number, which its ``result_ref``
    derives from. ``committed`` is set once the row is in the store."""

    start: CallStarted
    tool: str | None
    outcome: str
    is_error: bool
    signature: str | None
    permission: str | None
    decided_by: str | None
    text: str
    shown: str | None
    ended: float
    result_seq: int
    merged: bool = False
    committed: bool = False


@attrs.define(slots=True, eq=False)
class MessageRecorded:
    session: str
    role: str
    text: str
    at: float


@attrs.define(slots=True, eq=False)
class NoticeRecorded:
    session: str
    text: str
    at: float


@attrs.define(slots=True, eq=False)
class FactRecorded:
    """An executed call's execution fact."""

    fact: FactRecord


@attrs.define(slots=True, eq=False)
class StatePut:
    """A plugin's state value (``None`` deletes it)."""

    session: str
    namespace: str
    key: str
    value: Any
    error: BaseException | None = None  # set by the writer when the store refused it


@attrs.define(slots=True, eq=False)
class LedgerPut:
    """An observation ledger entry of one path (``None``: forgotten)."""

    session: str
    path: str
    entry: Any


@attrs.define(slots=True, eq=False)
class JobPut:
    """A job's record; ``log`` (when given) replaces its stored log."""

    session: str
    job: JobRecord
    run: RunStarted
    log: bytes | None = None


@attrs.define(slots=True, eq=False)
class JobCursor:
    session: str
    job_id: str
    cursor: int


@attrs.define(slots=True, eq=False)
class ResultsTrimmed:
    """Drop the oldest complete texts of truncated results until ``keep_bytes`` remain."""

    session: str
    keep_bytes: int


Op = (
    RunStarted
    | RunEnded
    | SessionOpened
    | SessionClosed
    | BatchStarted
    | CallStarted
    | CallEnded
    | MessageRecorded
    | NoticeRecorded
    | FactRecorded
    | StatePut
    | LedgerPut
    | JobPut
    | JobCursor
    | ResultsTrimmed
)
