"""How a session meets the session store: which stored session it continues, what comes
back, and what is written when it ends.

A session opened with

- ``resume=ID`` continues the stored session with that id (or name, or a unique id
  prefix); an unknown one is a `callgate.store.UnknownSession` naming the store;
- ``name=NAME`` joins the session of that name, creating it on first use (every
  ``callgate serve --session NAME`` connection is the same session);
- a ``session_dir`` and neither continues the session last opened on that directory
  (so a session directory still brings its state back), else starts one;

and otherwise starts a new session.

A host with no store backend installed (a bare ``callgate``: ``callgate-store-sqlite``
serves the default location) and no ``[sessions] store`` keeps its sessions in memory, as
``record = "off"`` does: nothing is recorded, and resuming or joining a session is a
`callgate.store.StoreError` that says so (a warning is logged once per process).

A continued session must be on the same workspace and belong to the same principal
(`_store.principal`): another principal's session is, to ``resume``, unknown; to ``name``,
a name taken; to a session directory, not there (a new session starts).
It gets back its observation ledger, plugin state, background jobs and, on demand, its
stored results (`_results.results.ResultStore` reads them from the store).
"""

from __future__ import annotations

import logging
import sys
import time
from typing import TYPE_CHECKING, Any, Protocol

from .._results.results import ResultStore
from .._store import locations
from .._store import records as m
from .._store.journal import Journal
from .._store.principal import visible_to

if TYPE_CHECKING:
    from .._fs.workspace import Workspace
    from .._pipeline.view import HostView


class Session(Protocol):
    """A session while it opens, as the store sees it (it may take a stored session's id and
    name) and as it closes."""

    id: str
    name: str | None
    journal: Journal

    @property
    def host(self) -> HostView: ...

    @property
    def principal(self) -> str: ...

    @property
    def directory(self) -> str | None: ...

    @property
    def workspace(self) -> Workspace: ...

    @property
    def parent(self) -> Any: ...


log = logging.getLogger("callgate.store")
_warned_memory_only = False


def attach(
    session: Session, *, resume: str | None, name: str | None
) -> tuple[Journal, m.Restored | None]:
    """The session's journal, and what the store gave back if it continues a session."""
    host = session.host
    mode = host.config("sessions")["record"]
    if mode == "off":
        if resume is not None or name is not None:
            which = f"resume {resume!r}" if resume is not None else f"join session {name!r}"
            raise m.StoreError(f'cannot {which}: [sessions] record = "off" keeps no sessions')
        return Journal(session.id, mode), None
    if memory_only(host):
        if resume is not None or name is not None:
            which = f"resume {resume!r}" if resume is not None else f"join session {name!r}"
            raise m.StoreError(f"cannot {which}: {MEMORY_ONLY}")
        _warn_memory_only()
        return Journal(session.id, "off"), None
    store, recorder = host.session_store()
    run = recorder.acquire()
    try:
        restored = _continue(session, store, recorder, run, resume, name)
    except BaseException:
        recorder.release()
        raise
    return Journal(session.id, mode, recorder, run), restored


#: why a host without a store backend keeps no sessions (the warning and the errors say it)
MEMORY_ONLY = (
    "no session-store backend is installed, so sessions are kept in memory only and "
    "cannot be resumed; install callgate-store-sqlite (callgate[all] includes it) or set "
    "[sessions] store to a store an installed backend serves"
)


def memory_only(host: HostView) -> bool:
    """Whether ``host`` keeps its sessions in memory: no ``[sessions] store`` is set and no
    installed backend serves the default location."""
    if host.config("sessions")["store"]:
        return False  # a configured store must open, or the session fails naming it
    return locations.opener_for(locations.default_location()) is None


def _warn_memory_only() -> None:
    global _warned_memory_only
    if not _warned_memory_only:
        _warned_memory_only = True
        logging.getLogger("callgate.store.memory").warning("warning: %s", MEMORY_ONLY)


def _continue(
    session: Session,
    store: Any,
    recorder: Any,
    run: m.RunStarted,
    resume: str | None,
    name: str | None,
) -> m.Restored | None:
    info: m.SessionInfo | None = None
    principal = session.principal
    if resume is not None:
        recorder.flush()  # this process's own writes first (a session closed a moment ago)
        info = store.session(resume, principal=principal)
        if info is not None and not visible_to(info.principal, principal):
            info = None  # another principal's: as unknown as a session that never was
        if info is None:
            raise m.UnknownSession(
                f"session store {store.location} holds no session "
                f"{resume!r} (callgate sessions list shows them)",
                store.location,
            )
    elif name is not None:
        recorder.flush()
        info = store.session(name, prefix=False)
        _check_name_owner(info, principal, name, store)
    elif session.directory is not None and session.parent is None:
        recorder.flush()
        info = store.session_for_directory(session.directory, session.workspace.root)
        if info is not None and not visible_to(info.principal, principal):
            info = None
    if info is None:
        opened = _opened(session, run)
        recorder.submit(opened)
        if name is None:
            recorder.kick()
            return None
        recorder.flush()  # a name is claimed at once: two processes must not both create it
        info = store.session(name, prefix=False)
        if info is None or info.id == session.id:
            return None
        _check_name_owner(info, principal, name, store)
    if info.workspace != session.workspace.root:
        raise m.StoreError(
            f"session {info.id} of store {store.location} works in "
            f"{info.workspace}, not {session.workspace.root}; open it there",
            store.location,
        )
    restored = store.restore(info.id)
    session.id = info.id
    session.name = info.name
    recorder.submit(
        m.SessionOpened(
            run,
            info.id,
            info.name,
            info.workspace,
            info.parent,
            info.directory,
            info.started,
            None,
            None,
            None,
            info.record,
            resumed=True,
        )
    )
    recorder.kick()
    return restored


def _check_name_owner(info: m.SessionInfo | None, principal: str, name: str, store: Any) -> None:
    """A session name another principal holds is taken: joining it is refused."""
    if info is not None and not visible_to(info.principal, principal):
        raise m.StoreError(
            f"session name {name!r} is taken in store {store.location} by a "
            "session of another principal; choose another name",
            store.location,
        )


def _opened(session: Session, run: m.RunStarted) -> m.SessionOpened:
    host = session.host
    return m.SessionOpened(
        run,
        session.id,
        session.name,
        session.workspace.root,
        session.parent.id if session.parent is not None else None,
        session.directory,
        time.time(),
        host.surface_mode,
        host.os,
        sys.platform,
        host.config("sessions")["record"],
        principal=session.principal,
    )


def result_store(session: Session, max_bytes: int, restored: m.Restored | None) -> ResultStore:
    """The session's result store: backed by the session store when it records."""
    journal = session.journal
    if not journal.durable:
        return ResultStore(None, max_bytes)
    recorder = journal.recorder
    assert recorder is not None  # a durable journal has one
    session_id = session.id

    def trim(keep: int) -> None:
        recorder.submit(m.ResultsTrimmed(session_id, keep))

    results = ResultStore(
        None,
        max_bytes,
        store=journal.store,
        session=session.id,
        first_seq=restored.result_seq if restored else 0,
        stored_bytes=restored.result_bytes if restored else 0,
        trim=trim,
    )
    journal.results = results  # linked and settled on the writer thread (`record._ended`)
    return results


def detach(session: Session) -> None:
    """The session ends: record it, commit, and let go of the store."""
    journal = session.journal
    if not journal.durable:
        return
    recorder = journal.recorder
    assert recorder is not None  # a durable journal has one
    recorder.submit(m.SessionClosed(session.id, time.time()))
    try:
        recorder.release()
    except Exception:  # a store that stopped answering must not keep a session from closing
        log.warning(
            "the session store did not take session %s's last records", session.id, exc_info=True
        )
